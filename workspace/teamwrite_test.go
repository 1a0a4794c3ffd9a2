package workspace

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentd/agentd/tests/etcdtest"
	"github.com/agentd/agentd/todo"
	"github.com/agentd/agentd/workspace/etcdstore"
)

// lostReplyTeam opens a team folder of a 3-member cluster through member
// 0 alone, and a plain client of member 1 that watches its session s, to
// see a write applied while member 0's replies are held.
func lostReplyTeam(t *testing.T) (*Workspace, *etcdtest.Proxy, clientv3.WatchChan) {
	t.Helper()
	c := etcdtest.Start(t, 3)
	id := NewTeamID()
	r := newRegistry(t, t.TempDir(), func(o *Options) { o.Identity = "daemon" })
	w := openWorkspace(t, r, accepted(t, r, teamFolder(t, id, []string{c.Members[0].Endpoint()})))
	setTodos(t, w, "s", items("one"))
	obs, err := clientv3.New(clientv3.Config{Endpoints: []string{c.Members[1].Endpoint()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { obs.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return w, c.Members[0].Proxy(), obs.Watch(ctx, etcdstore.KeysOf(id).Session("s"))
}

// appendTodo is a change that is not idempotent: applied twice, the item
// is there twice.
func appendTodo(title string) func(s *Session) (Change, error) {
	return func(s *Session) (Change, error) {
		s.Todos = append(s.Todos, todo.Item{Title: title, Status: todo.Pending})
		return Change{Kind: "todo.set", Actor: "user", Todos: true}, nil
	}
}

type updated struct {
	s   Session
	err error
}

// awaitPut waits until the observer's watch sees the session written.
func awaitPut(t *testing.T, wch clientv3.WatchChan) {
	t.Helper()
	select {
	case resp := <-wch:
		if err := resp.Err(); err != nil || len(resp.Events) == 0 {
			t.Fatalf("observer's watch: %v %v", err, resp.Events)
		}
	case <-time.After(teamHangGuard):
		t.Fatalf("the write was not applied within %v", teamHangGuard)
	}
}

// TestTeamLostReplyAppliesOnce: etcd applies a write whose reply is lost
// (member 0's answers held, then its connections cut, as a broken link
// does after the request went out). The daemon sends the same Txn again:
// its compare fails, the event it finds at that revision is its own, and
// the write answers success, applied once (docs/team.md, "What a write
// acknowledges"). Before, the write answered workspace.unavailable
// ("nothing was written") though it was applied.
func TestTeamLostReplyAppliesOnce(t *testing.T) {
	w, proxy, wch := lostReplyTeam(t)
	proxy.Cut(etcdtest.ToClient)
	done := make(chan updated, 1)
	go func() {
		s, err := w.Update("s", appendTodo("two"))
		done <- updated{s, err}
	}()
	awaitPut(t, wch)
	proxy.Drop()
	proxy.Restore()
	cut := time.Now()
	var res updated
	select {
	case res = <-done:
	case <-time.After(teamHangGuard):
		t.Fatalf("the write did not answer within %v", teamHangGuard)
	}
	t.Logf("the write answered %v after its connection was cut", time.Since(cut).Round(time.Millisecond))
	if res.err != nil {
		t.Fatalf("a write applied by etcd whose reply was lost answered %v (code %q)", res.err, errorCode(res.err))
	}
	if res.s.Revision != 2 || len(res.s.Todos) != 2 {
		t.Fatalf("the write answered %+v, want revision 2 with two items", res.s)
	}
	if got := mustHistory(t, w, "s", 0); len(got) != 2 {
		t.Fatalf("history: %d events (%v), want 2: the write applied once", len(got), seqs(got))
	}
	// Another Update reads the state etcd holds: the item is there once.
	s, err := w.Update("s", appendTodo("three"))
	if err != nil || s.Revision != 3 || len(s.Todos) != 3 || s.Todos[1].Title != "two" {
		t.Fatalf("next write = %+v, %v", s, err)
	}
}

// TestTeamOutcomeUnknown: a write whose reply stays lost for the whole
// bound answers workspace.outcome_unknown, whose message says it may have
// been applied, not "nothing was written"; once the link is back the
// write, which etcd applied, reaches the daemon through its watch.
func TestTeamOutcomeUnknown(t *testing.T) {
	w, proxy, wch := lostReplyTeam(t)
	seen := notices(t, w, "s")
	proxy.Cut(etcdtest.ToClient)
	start := time.Now()
	_, err := w.Update("s", appendTodo("two"))
	took := time.Since(start)
	if errorCode(err) != CodeOutcomeUnknown || errors.Is(err, ErrNotSaved) {
		t.Fatalf("a write with no reply answered %v (code %q), want %s, not ErrNotSaved", err, errorCode(err), CodeOutcomeUnknown)
	}
	if msg := err.Error(); !strings.Contains(msg, "the write may have been applied: agentd will show it if it was") || strings.Contains(msg, "nothing was written") {
		t.Fatalf("message: %s", msg)
	}
	// The write ends on its own bound, not the test's: its outcome is known
	// only after it. How much later it answers is the machine's; the limit
	// here only turns a hang into a failure.
	if took > etcdstore.OpTimeout+teamHangGuard {
		t.Fatalf("the write answered after %v: it hung past its bound %v", took, etcdstore.OpTimeout)
	}
	t.Logf("the write answered after %v (its bound: %v)", took.Round(time.Millisecond), etcdstore.OpTimeout)
	awaitPut(t, wch)
	proxy.Restore()
	n := waitNotice(t, seen, func(n Notice) bool { return n.Store == nil && n.Session.Revision == 2 })
	if len(n.Session.Todos) != 2 {
		t.Fatalf("the applied write, from the watch: %+v", n.Session)
	}
	if got := mustView(t, w, "s"); got.Revision != 2 {
		t.Fatalf("View after the watch = revision %d, want 2", got.Revision)
	}
}
