package workspace

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/agentd/agentd/tests/etcdtest"
)

// idleCost is what a daemon's team folders cost a cluster, measured on its
// members and their proxies.
type idleCost struct {
	conns, accepted int     // connections open through the proxies, accepted in all
	leases          int     // etcd's LeaseLeases
	watchers        float64 // etcd_debugging_mvcc_watcher_total
	msgs            float64 // gRPC messages received while idle for idleWindow
	bytes           int64   // bytes sent to the members while idle for idleWindow
}

// idleWindow is how long the idle requests are counted: three prober
// rounds and one or two lease keep-alives.
const idleWindow = 3 * time.Second

// measureIdle measures the cluster's figures now and over idleWindow,
// once the cluster has watchers watchers: the folders just opened create
// their team's watch a moment later, and a window that saw its creation
// counted it as idle traffic (about 1.8 KB more, 1 run in 5).
func measureIdle(t *testing.T, c *etcdtest.Cluster, cli *clientv3.Client, watchers float64) idleCost {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second) // then the test's own check of the watchers says what is wrong
	for c.Metrics().Sum("etcd_debugging_mvcc_watcher_total") != watchers && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	var m idleCost
	for _, mb := range c.Members {
		m.conns += mb.Proxy().Conns()
		m.accepted += mb.Proxy().Accepted()
		m.bytes -= mb.Proxy().Bytes(etcdtest.ToServer)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	leases, err := cli.Leases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m.leases = len(leases.Leases)
	before := c.Metrics()
	m.watchers = before.Sum("etcd_debugging_mvcc_watcher_total")
	time.Sleep(idleWindow)
	m.msgs = c.Metrics().Sum("grpc_server_msg_received_total") - before.Sum("grpc_server_msg_received_total")
	for _, mb := range c.Members {
		m.bytes += mb.Proxy().Bytes(etcdtest.ToServer)
	}
	return m
}

// TestTeamIdleCostPerCluster: a daemon's idle cost on a cluster does not
// grow with its team folders (docs/team.md, "Faults"). One folder, then
// fifty of one team (clones or worktrees of one repository), then nine
// more of nine other teams: the connections (one per member for requests,
// watches and the lease, one per member for the prober), the leases (one
// per daemon and cluster), the gRPC messages received while idle (the
// prober's reads and the lease's keep-alives) and the bytes sent stay
// those of one folder; the watchers are one per team.
func TestTeamIdleCostPerCluster(t *testing.T) {
	c := etcdtest.Start(t, 3)
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.DirectEndpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	watchers := c.Metrics().Sum("etcd_debugging_mvcc_watcher_total")
	r := newRegistry(t, t.TempDir(), func(o *Options) { o.Identity = "daemon-a" })
	open := func(id string) {
		w := openWorkspace(t, r, accepted(t, r, teamFolder(t, id, c.Endpoints())))
		if err := write(w, "s", 1); err != nil {
			t.Fatal(err)
		}
	}
	team := NewTeamID()
	open(team)
	want := 2 * len(c.Members)
	waitFor(t, "every member connected", func() bool {
		n := 0
		for _, m := range c.Members {
			n += m.Proxy().Conns()
		}
		return n == want
	})
	one := measureIdle(t, c, cli, watchers+1)
	for range 49 {
		open(team)
	}
	fifty := measureIdle(t, c, cli, watchers+1)
	for range 9 {
		open(NewTeamID())
	}
	teams := measureIdle(t, c, cli, watchers+10)
	for _, m := range []struct {
		what string
		m    idleCost
	}{{"1 folder", one}, {"50 folders of one team", fifty}, {"59 folders of 10 teams", teams}} {
		t.Logf("%s: %d connections (%d accepted in all), %d leases, %.0f watchers, %.0f messages and %d bytes to etcd in %v idle",
			m.what, m.m.conns, m.m.accepted, m.m.leases, m.m.watchers-watchers, m.m.msgs, m.m.bytes, idleWindow)
	}
	for _, m := range []idleCost{fifty, teams} {
		if m.conns != want || m.accepted != one.accepted || m.leases != 1 {
			t.Errorf("connections %d (accepted %d), leases %d; want %d (%d) and 1 as for one folder", m.conns, m.accepted, m.leases, want, one.accepted)
		}
		// The idle window holds one or two keep-alives and three or four
		// prober rounds, as it falls: a message per folder and second
		// would be 150 more.
		if m.msgs > one.msgs+6 || m.bytes > one.bytes*3/2+512 {
			t.Errorf("idle requests grew with the folders: %.0f messages, %d bytes; %.0f and %d with one folder", m.msgs, m.bytes, one.msgs, one.bytes)
		}
	}
	if one.watchers-watchers != 1 || fifty.watchers != one.watchers || teams.watchers-watchers != 10 {
		t.Errorf("watchers: %.0f with one folder, %.0f with fifty of one team, %.0f with ten teams; want 1, 1, 10",
			one.watchers-watchers, fifty.watchers-watchers, teams.watchers-watchers)
	}
}
