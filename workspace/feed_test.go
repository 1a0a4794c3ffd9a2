package workspace

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// feedLog records the commit feed as lines: "kind session revision/todos".
type feedLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *feedLog) record(e FeedEvent) {
	line := []string{"session", "opened", "closing"}[e.Kind]
	if e.Session != nil {
		line += fmt.Sprintf(" %s %d/%d", e.Session.Name, e.Session.Revision, len(e.Session.Todos))
	}
	l.mu.Lock()
	l.lines = append(l.lines, line)
	l.mu.Unlock()
}

func (l *feedLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.lines
	l.lines = nil
	return out
}

// TestFeed: the commit feed gets every commit, quiet ones included (which
// notices leave out), nothing for a change that writes nothing, each
// stored session then FeedOpened before Open returns, and FeedClosing at
// the last Release; a panicking observer fails nothing, and a cancelled
// one is fed no more.
func TestFeed(t *testing.T) {
	r := newRegistry(t, t.TempDir())
	var log feedLog
	cancel := r.Feed(log.record)
	t.Cleanup(r.Feed(func(FeedEvent) { panic("boom") }))
	root := folder(t)

	w, err := r.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"opened"}, log.take()); diff != "" {
		t.Fatalf("feed of an empty folder's open (-want +got):\n%s", diff)
	}
	setTodos(t, w, "s", items("a"))
	if _, err := w.Update("s", func(s *Session) (Change, error) {
		s.Todos = items("a", "b")
		return Change{Kind: "todo.read", Quiet: true}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Update("s", func(*Session) (Change, error) { return Change{}, nil }); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"session s 1/1", "session s 1/2"}, log.take()); diff != "" {
		t.Fatalf("feed of a loud, a quiet and an empty change (-want +got):\n%s", diff)
	}
	w.Release()
	if diff := cmp.Diff([]string{"closing"}, log.take()); diff != "" {
		t.Fatalf("feed of the last Release (-want +got):\n%s", diff)
	}

	w = openWorkspace(t, r, root)
	if diff := cmp.Diff([]string{"session s 1/2", "opened"}, log.take()); diff != "" {
		t.Fatalf("feed of an open with a stored session (-want +got):\n%s", diff)
	}
	cancel()
	cancel() // twice is fine
	setTodos(t, w, "s", items("c"))
	if got := log.take(); len(got) != 0 {
		t.Fatalf("fed after cancel: %v", got)
	}
}
