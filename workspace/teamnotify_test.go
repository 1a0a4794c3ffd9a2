package workspace

import (
	"testing"

	"github.com/agentd/agentd/tests/etcdtest"
)

// TestTeamQuietChangeNotTold: in a team folder notices come from the
// watch, this daemon's own writes included; a quiet change (counters only,
// no history event), this daemon's or the other's, is cached but told to
// no subscriber, even on a daemon that opened the folder after the
// session's last real change: the first notice it gets is the next real
// change, once.
func TestTeamQuietChangeNotTold(t *testing.T) {
	c := etcdtest.Start(t, 1)
	id := NewTeamID()
	open := func(name string) *Workspace {
		r := newRegistry(t, t.TempDir(), func(o *Options) { o.Identity = name })
		return openWorkspace(t, r, accepted(t, r, teamFolder(t, id, c.Endpoints())))
	}
	a := open("daemon-a")
	setTodos(t, a, "s", items("one"))
	b := open("daemon-b") // told nothing of revision 1
	seen := notices(t, b, "s")
	quiet := func(w *Workspace) {
		t.Helper()
		if _, err := w.Update("s", func(s *Session) (Change, error) {
			s.TodoUsage.NoteRead()
			return Change{Kind: "todo.read", Quiet: true}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	quiet(b)
	quiet(a)
	setTodos(t, a, "s", items("two"))
	n := waitNotice(t, seen, func(n Notice) bool { return n.Store == nil })
	if n.Change.Kind != "todo.set" || n.Session.Revision != 2 || !n.Change.Todos {
		t.Fatalf("first notice = %s of revision %d, want todo.set of revision 2", n.Change.Kind, n.Session.Revision)
	}
	select {
	case n := <-seen:
		if n.Store == nil {
			t.Errorf("a second notice: %s of revision %d", n.Change.Kind, n.Session.Revision)
		}
	default:
	}
}
