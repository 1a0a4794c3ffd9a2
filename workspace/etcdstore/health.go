package etcdstore

import (
	"context"
	"strconv"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Health is what bounds a cluster's room for a team (docs/team.md, "A
// full etcd").
type Health struct {
	// Alarms are the cluster's raised alarms, each once: "NOSPACE" (its
	// database reached its quota: every write is refused), "CORRUPT".
	Alarms []string
	// Revision is the cluster's revision now; Compacted the revision the
	// team's daemons last compacted its history to (0: never).
	Revision, Compacted int64
}

// NoSpace says whether the NOSPACE alarm is raised.
func (h Health) NoSpace() bool {
	for _, a := range h.Alarms {
		if a == etcdserverpb.AlarmType_NOSPACE.String() {
			return true
		}
	}
	return false
}

// ReadHealth reads the cluster's alarms and how far the team of keys
// compacted its history.
func ReadHealth(ctx context.Context, cli *clientv3.Client, keys Keys) (Health, error) {
	var h Health
	alarms, err := cli.AlarmList(ctx)
	if err != nil {
		return h, err
	}
	seen := map[string]bool{}
	for _, a := range alarms.Alarms {
		if name := a.Alarm.String(); a.Alarm != etcdserverpb.AlarmType_NONE && !seen[name] {
			seen[name] = true
			h.Alarms = append(h.Alarms, name)
		}
	}
	resp, err := cli.Get(ctx, keys.Compact())
	if err != nil {
		return h, err
	}
	h.Revision = resp.Header.Revision
	if len(resp.Kvs) == 1 {
		h.Compacted, _ = strconv.ParseInt(string(resp.Kvs[0].Value), 10, 64)
	}
	return h, nil
}
