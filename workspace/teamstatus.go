package workspace

import (
	"context"
	"fmt"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentd/agentd/workspace/etcdstore"
)

// readHealth adds to st what bounds the cluster's room (docs/team.md, "A
// full etcd"): its raised alarms, with what they mean and their fix, and
// how far its history was compacted.
func (st *TeamStatus) readHealth(ctx context.Context, cli *clientv3.Client, keys etcdstore.Keys) error {
	h, err := etcdstore.ReadHealth(ctx, cli, keys)
	if err != nil {
		return err
	}
	st.Alarms, st.Revision, st.Compacted = h.Alarms, h.Revision, h.Compacted
	switch {
	case h.NoSpace():
		st.Error = "etcd's database is full (NOSPACE alarm): every write is refused with workspace.no_space, reads go on; on the cluster run `etcdctl compact <revision>`, `etcdctl defrag --cluster`, then `etcdctl alarm disarm`, and raise --quota-backend-bytes if the data needs more room (docs/team.md, \"A full etcd\")"
	case len(h.Alarms) > 0:
		st.Error = fmt.Sprintf("etcd has raised the alarm %s: see etcd's documentation (etcdctl alarm list)", strings.Join(h.Alarms, ", "))
	}
	return nil
}
