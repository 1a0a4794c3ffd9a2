package etcdstore

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/agentd/agentd/tests/etcdtest"
	"github.com/agentd/agentd/workspace/storage"
)

// TestCompactionPerCluster: a daemon with 50 folders of one team and 5 of
// another on one cluster makes one compare-and-set per interval on the
// cluster, on the first team's compact key, and none on the other's: etcd
// receives no more Txns while it is idle than the compactions it counts
// (one more for a tick under way as they are read). Before, each folder
// ticked on its own: 55 compare-and-sets per interval, 54 of them refused.
// Not parallel: etcd's figures are the process's.
func TestCompactionPerCluster(t *testing.T) {
	c := etcdtest.Start(t, 1)
	obs, err := clientv3.New(clientv3.Config{Endpoints: c.DirectEndpoints(), DialTimeout: DialTimeout, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Close()
	lim := storage.Limits{MaxSessions: 5, MaxHistory: 10, MaxHistoryBytes: 1 << 20}
	every := func(o *Options) { o.CompactInterval = 20 * time.Millisecond }
	var clients Clients
	for i := range 55 {
		team := "a-team"
		if i >= 50 {
			team = "b-team"
		}
		s := openOn(t, &clients, c.Endpoints(), team, "daemon-compact", lim, every)
		defer s.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	key := KeysOf("a-team").Compact()
	w := obs.Watch(ctx, key)
	v0 := version(t, obs, key)
	txns0 := c.Metrics().Sum("grpc_server_msg_received_total", `grpc_method="Txn"`)
	for v := v0; v < v0+3; {
		resp, ok := <-w
		if !ok || resp.Err() != nil {
			t.Fatalf("watching %s: %v", key, resp.Err())
		}
		for _, ev := range resp.Events {
			v = ev.Kv.Version
		}
	}
	v := version(t, obs, key)
	txns := c.Metrics().Sum("grpc_server_msg_received_total", `grpc_method="Txn"`) - txns0
	t.Logf("%d compactions and %.0f Txns to etcd", v-v0, txns)
	if txns > float64(v-v0+1) {
		t.Errorf("%.0f Txns for %d compactions: more than one compare-and-set per interval", txns, v-v0)
	}
	if b := version(t, obs, KeysOf("b-team").Compact()); b != 0 {
		t.Errorf("the second team's compact key has version %d, want 0: one compare-and-set per cluster", b)
	}
}

// version is the version of key (0: absent).
func version(t *testing.T, cli *clientv3.Client, key string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), OpTimeout)
	defer cancel()
	resp, err := cli.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) == 0 {
		return 0
	}
	return resp.Kvs[0].Version
}
