package workspace

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// readHealth adds to st what bounds the cluster's room (docs/team.md, "A
// full etcd"): its raised alarms, with what they mean and their fix, and
// how far its history was compacted.
func (st *TeamStatus) readHealth(ctx context.Context, cli *clientv3.Client, keys teamKeys) error {
	alarms, err := cli.AlarmList(ctx)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, a := range alarms.Alarms {
		name := a.Alarm.String()
		if a.Alarm != etcdserverpb.AlarmType_NONE && !seen[name] {
			seen[name] = true
			st.Alarms = append(st.Alarms, name)
		}
	}
	if seen[etcdserverpb.AlarmType_NOSPACE.String()] {
		st.Error = "etcd's database is full (NOSPACE alarm): every write is refused with workspace.no_space, reads go on; on the cluster run `etcdctl compact <revision>`, `etcdctl defrag --cluster`, then `etcdctl alarm disarm`, and raise --quota-backend-bytes if the data needs more room (docs/team.md, \"A full etcd\")"
	} else if len(st.Alarms) > 0 {
		st.Error = fmt.Sprintf("etcd has raised the alarm %s: see etcd's documentation (etcdctl alarm list)", strings.Join(st.Alarms, ", "))
	}
	resp, err := cli.Get(ctx, keys.compact())
	if err != nil {
		return err
	}
	st.Revision = resp.Header.Revision
	if len(resp.Kvs) == 1 {
		st.Compacted, _ = strconv.ParseInt(string(resp.Kvs[0].Value), 10, 64)
	}
	return nil
}
