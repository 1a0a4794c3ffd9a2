package etcdstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentd/agentd/tests/etcdtest"
	"github.com/agentd/agentd/workspace/storage"
)

// TestCommitAfterLeaseLost: a commit made after the daemon's lease was
// lost (revoked here, as its expiry while the daemon was stopped would) is
// not applied: the daemon registers again under a new identity, the old
// one is told gone (its turns are then ended), and the commit is refused
// as a conflict with the session as etcd holds it, so that it is made
// again, under the new lease (docs/team.md, "Fencing").
func TestCommitAfterLeaseLost(t *testing.T) {
	c := etcdtest.Start(t, 1)
	s := open(t, c.Endpoints(), "fence", storage.Limits{MaxSessions: 10, MaxHistory: 100, MaxHistoryBytes: 1 << 20})
	t.Cleanup(func() { s.Close() })
	gone := make(chan string, 1)
	s.cluster.reg.renew = func(old string) string { return old + "-again" }
	s.on.PeerGone = func(id string) { gone <- id }
	old := s.identity()

	first := &storage.Commit{Session: "a", Parts: parts(`{"n":1}`), Read: readAt(0)}
	if err := s.Commit(first); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), OpTimeout)
	defer cancel()
	lease, _ := s.cluster.reg.held()
	if _, err := s.cli.Revoke(ctx, lease); err != nil {
		t.Fatal(err)
	}

	stale := &storage.Commit{Session: "a", Parts: parts(`{"n":2}`), Read: readAt(first.Version)}
	err := s.Commit(stale)
	if data, ver := stored(stale.Fresh); !errors.Is(err, storage.ErrConflict) || string(data) != `{"n":1}` || ver != first.Version {
		t.Fatalf("commit after the lease was lost: %v, fresh %+v; want a conflict with the stored record", err, stale.Fresh)
	}
	if got, _ := s.Get("a"); string(got.Parts["r"].Data) != `{"n":1}` {
		t.Fatalf("stored %+v, want the first record only", got)
	}
	if now := s.identity(); now != old+"-again" {
		t.Fatalf("identity %q, want a new one", now)
	}
	select {
	case id := <-gone:
		if id != old {
			t.Fatalf("told %q gone, want the old identity %q", id, old)
		}
	case <-time.After(30 * time.Second): // told at once; the bound is only against a hang
		t.Fatal("the old identity was not told gone")
	}
	if s.Alive(old) || !s.Alive(old+"-again") {
		t.Fatalf("live keys: old %v, new %v; want only the new one", s.Alive(old), s.Alive(old+"-again"))
	}
	_, ver := stored(stale.Fresh)
	again := &storage.Commit{Session: "a", Parts: parts(`{"n":2}`), Read: readAt(ver)}
	if err := s.Commit(again); err != nil {
		t.Fatalf("the commit made again under the new lease: %v", err)
	}
}

// TestLeaseLostEveryTeam: a daemon's folders of two teams on one cluster
// hold one lease; once it is lost, the first commit registers the daemon
// again in both teams under one new identity, both folders are told the
// old one gone, and the other folder writes under the new lease with no
// fencing of its own.
func TestLeaseLostEveryTeam(t *testing.T) {
	c := etcdtest.Start(t, 1)
	lim := storage.Limits{MaxSessions: 10, MaxHistory: 100, MaxHistoryBytes: 1 << 20}
	var clients Clients
	a := openOn(t, &clients, c.Endpoints(), "team-a", "daemon", lim)
	t.Cleanup(func() { a.Close() })
	b := openOn(t, &clients, c.Endpoints(), "team-b", "daemon", lim)
	t.Cleanup(func() { b.Close() })
	if a.cluster != b.cluster {
		t.Fatal("two folders of one cluster got two clients")
	}
	a.cluster.reg.renew = func(old string) string { return old + "-again" }
	gone := make(chan string, 2)
	a.on.PeerGone = func(id string) { gone <- "a " + id }
	b.on.PeerGone = func(id string) { gone <- "b " + id }
	lease, _ := a.cluster.reg.held()
	ctx, cancel := context.WithTimeout(context.Background(), OpTimeout)
	defer cancel()
	if _, err := a.cli.Revoke(ctx, lease); err != nil {
		t.Fatal(err)
	}
	if err := a.Commit(&storage.Commit{Session: "s", Parts: parts(`{}`), Read: readAt(0)}); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("commit after the lease was lost: %v, want a conflict", err)
	}
	told := map[string]bool{}
	for range 2 {
		select {
		case g := <-gone:
			told[g] = true
		case <-time.After(OpTimeout):
			t.Fatalf("told gone: %v; want both folders told of the old identity", told)
		}
	}
	if !told["a daemon"] || !told["b daemon"] {
		t.Fatalf("told gone: %v; want both folders told of the old identity", told)
	}
	for _, s := range []*Store{a, b} {
		if s.identity() != "daemon-again" || s.Alive("daemon") || !s.Alive("daemon-again") {
			t.Fatalf("team %s: identity %q, old alive %v, new alive %v; want only daemon-again", s.on.ID, s.identity(), s.Alive("daemon"), s.Alive("daemon-again"))
		}
	}
	if err := b.Commit(&storage.Commit{Session: "s", Parts: parts(`{}`), Read: readAt(0)}); err != nil {
		t.Fatalf("the other team's commit under the new lease: %v", err)
	}
	if leases, err := a.cli.Leases(ctx); err != nil || len(leases.Leases) != 1 {
		t.Fatalf("leases %v (%v); want one for both teams", leases, err)
	}
}
