package etcdstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentd/agentd/tests/etcdtest"
	"github.com/agentd/agentd/workspace/storage"
)

// conflictTwice makes two commits of session name on s on a stale base:
// the second takes the session's turn.
func conflictTwice(t *testing.T, s *Store, name string) {
	t.Helper()
	for range turnAfter {
		c := &storage.Commit{Session: name, Parts: parts(`{}`), Read: readAt(1), Flags: []byte(`{}`)}
		if err := s.Commit(c); !errors.Is(err, storage.ErrConflict) {
			t.Fatalf("commit on a stale base: %v, want a conflict", err)
		}
	}
	if !s.held(name) {
		t.Fatalf("no turn held after %d conflicts in a row", turnAfter)
	}
}

// commitOnce reads session name through s and commits on what it read,
// once. A turn another daemon holds refuses that commit (and the store
// waits for the turn to go before it answers): nil says it went through
// at once.
func commitOnce(t *testing.T, s *Store, name string) error {
	t.Helper()
	cur, err := s.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	_, ver := stored(cur)
	return s.Commit(&storage.Commit{Session: name, Parts: parts(`{}`), Read: readAt(ver), Flags: []byte(`{}`)})
}

// turnKeys counts the turn keys stored for session name.
func turnKeys(t *testing.T, s *Store, name string) int64 {
	t.Helper()
	resp, err := s.cli.Get(context.Background(), s.keys.turn(name))
	if err != nil {
		t.Fatal(err)
	}
	return resp.Count
}

// TestTurnReleasedByCommit: the holder's next commit writes and deletes
// its turn key in the same Txn; the other daemon then writes at once.
func TestTurnReleasedByCommit(t *testing.T) {
	c := etcdtest.Start(t, 1)
	lim := storage.Limits{MaxSessions: 10, MaxHistory: 50, MaxHistoryBytes: 4 << 20}
	a, b := open(t, c.Endpoints(), "turn1", lim), open(t, c.Endpoints(), "turn1", lim)
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	if err := update(t, a, "s", "a"); err != nil {
		t.Fatal(err)
	}
	conflictTwice(t, a, "s")
	if err := update(t, a, "s", "a"); err != nil {
		t.Fatalf("holder's commit: %v", err)
	}
	if a.held("s") || turnKeys(t, a, "s") != 0 {
		t.Fatalf("turn still held (%v) or stored (%d keys) after the holder's commit", a.held("s"), turnKeys(t, a, "s"))
	}
	if err := commitOnce(t, b, "s"); err != nil {
		t.Fatalf("other daemon's write after the release: %v, want it through at once", err)
	}
}

// TestTurnGivenUp: a holder that does not commit loses its turn after
// turnHold; the other daemon's write waits for that, then succeeds.
func TestTurnGivenUp(t *testing.T) {
	c := etcdtest.Start(t, 1)
	lim := storage.Limits{MaxSessions: 10, MaxHistory: 50, MaxHistoryBytes: 4 << 20}
	a, b := open(t, c.Endpoints(), "turn2", lim), open(t, c.Endpoints(), "turn2", lim)
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	if err := update(t, a, "s", "a"); err != nil {
		t.Fatal(err)
	}
	conflictTwice(t, a, "s")
	start := time.Now()
	if err := update(t, b, "s", "b"); err != nil {
		t.Fatalf("write while another daemon holds the turn: %v", err)
	}
	if took := time.Since(start); took < turnHold/2 || took > turnHold+2*time.Second {
		t.Errorf("write while another daemon holds the turn took %v; want about turnHold (%v)", took, turnHold)
	}
	if a.held("s") || turnKeys(t, a, "s") != 0 {
		t.Errorf("turn still held (%v) or stored (%d keys) after turnHold", a.held("s"), turnKeys(t, a, "s"))
	}
}

// TestTurnWithALostLease: a daemon whose lease etcd no longer knows (it
// expired before the keepalive noticed) gets its conflicts as conflicts,
// not an outage, and takes no turn.
func TestTurnWithALostLease(t *testing.T) {
	c := etcdtest.Start(t, 1)
	lim := storage.Limits{MaxSessions: 10, MaxHistory: 50, MaxHistoryBytes: 4 << 20}
	a := open(t, c.Endpoints(), "turn3", lim)
	t.Cleanup(func() { _ = a.Close() })
	if err := update(t, a, "s", "a"); err != nil {
		t.Fatal(err)
	}
	a.cluster.reg.mu.Lock()
	a.cluster.reg.lease = 0x7e57 // granted by nobody
	a.cluster.reg.mu.Unlock()
	for range turnAfter {
		c := &storage.Commit{Session: "s", Parts: parts(`{}`), Read: readAt(1), Flags: []byte(`{}`)}
		if err := a.Commit(c); !errors.Is(err, storage.ErrConflict) {
			t.Fatalf("commit on a stale base with a lost lease: %v, want a conflict", err)
		}
	}
	if a.held("s") || turnKeys(t, a, "s") != 0 {
		t.Errorf("a turn taken with a lost lease")
	}
}

// TestTurnYielded: a holder whose change comes to nothing gives its turn
// up at once (Yield); the other daemon's write does not wait turnHold.
func TestTurnYielded(t *testing.T) {
	c := etcdtest.Start(t, 1)
	lim := storage.Limits{MaxSessions: 10, MaxHistory: 50, MaxHistoryBytes: 4 << 20}
	a, b := open(t, c.Endpoints(), "turn4", lim), open(t, c.Endpoints(), "turn4", lim)
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	if err := update(t, a, "s", "a"); err != nil {
		t.Fatal(err)
	}
	conflictTwice(t, a, "s")
	a.Yield("s")
	if a.held("s") || turnKeys(t, a, "s") != 0 {
		t.Fatalf("turn still held (%v) or stored (%d keys) after Yield", a.held("s"), turnKeys(t, a, "s"))
	}
	if err := commitOnce(t, b, "s"); err != nil {
		t.Fatalf("other daemon's write after Yield: %v, want it through at once", err)
	}
}

// TestTurnLeftOverIsDropped: a turn key of this daemon that it no longer
// counts as held (giving it up failed) is deleted by its next conflict, not
// waited for until its lease ends.
func TestTurnLeftOverIsDropped(t *testing.T) {
	c := etcdtest.Start(t, 1)
	lim := storage.Limits{MaxSessions: 10, MaxHistory: 50, MaxHistoryBytes: 4 << 20}
	a := open(t, c.Endpoints(), "turn5", lim)
	t.Cleanup(func() { _ = a.Close() })
	if err := update(t, a, "s", "a"); err != nil {
		t.Fatal(err)
	}
	conflictTwice(t, a, "s")
	a.committed("s") // forgets the turn, as a failed give-up leaves it
	if turnKeys(t, a, "s") != 1 {
		t.Fatal("the turn key is gone already")
	}
	// The first commit is refused on the key, which it deletes instead of
	// waiting for it; the next goes through.
	if err := commitOnce(t, a, "s"); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("write with a left-over turn key: %v, want a conflict", err)
	}
	if n := turnKeys(t, a, "s"); n != 0 {
		t.Fatalf("%d turn keys after the conflict, want the left-over one deleted", n)
	}
	if err := commitOnce(t, a, "s"); err != nil {
		t.Fatalf("write after the left-over turn key went: %v", err)
	}
	if turnKeys(t, a, "s") != 0 {
		t.Error("the left-over turn key is still stored")
	}
}

// TestForgedTurnKeyIsDropped: a turn key written into etcd without agentd
// (whoever writes etcd; no daemon's lease, or the writer's own kept alive)
// is never given up by a holder, and every daemon's write of the session
// met it and waited turnHold on each of its 100 attempts: the session could
// not be written for minutes on every machine. A turn key that stays as it
// was for turnHold is deleted by the daemon that waited for it, as its
// holder would have done, and the write goes through.
func TestForgedTurnKeyIsDropped(t *testing.T) {
	c := etcdtest.Start(t, 1)
	lim := storage.Limits{MaxSessions: 10, MaxHistory: 50, MaxHistoryBytes: 4 << 20}
	a := open(t, c.Endpoints(), "turn6", lim)
	t.Cleanup(func() { _ = a.Close() })
	if err := update(t, a, "s", "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.cli.Put(context.Background(), a.keys.turn("s"), "forged"); err != nil {
		t.Fatal(err)
	}
	if err := commitOnce(t, a, "s"); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("write with a forged turn key: %v, want a conflict", err)
	}
	if n := turnKeys(t, a, "s"); n != 0 {
		t.Fatalf("%d turn keys after waiting turnHold for the forged one, want it deleted", n)
	}
	if err := update(t, a, "s", "after"); err != nil {
		t.Fatalf("write after the forged turn key went: %v", err)
	}
}
