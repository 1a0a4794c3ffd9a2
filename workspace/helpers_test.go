package workspace

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/agentd/agentd/todo"
	"github.com/agentd/agentd/workspace/boltstore"
)

// fakeClock advances one second per reading, so times are distinct and
// deterministic.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// newRegistry returns a registry on stateDir with a fake clock and a short
// lock timeout, closed at the end of the test.
func newRegistry(t testing.TB, stateDir string, mods ...func(*Options)) *Registry {
	t.Helper()
	opts := Options{StateDir: stateDir, Now: newClock().Now, LockTimeout: 200 * time.Millisecond}
	for _, m := range mods {
		m(&opts)
	}
	r := NewRegistry(opts)
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Registry.Close: %v", err)
		}
	})
	return r
}

// openWorkspace opens root in r and releases it at the end of the test.
func openWorkspace(t testing.TB, r *Registry, root string) *Workspace {
	t.Helper()
	w, err := r.Open(root)
	// A team folder's cluster must answer within etcdstore.OpTimeout (2 s)
	// or the folder is refused as unavailable, nothing opened: the right
	// answer, which an editor meets by opening again. The embedded members
	// run in this race-instrumented process, which a loaded machine starves
	// for longer than that; the tests that want the refusal call r.Open.
	for start := time.Now(); errorCode(err) == CodeUnavailable && time.Since(start) < teamHangGuard; {
		t.Logf("Open(%q) again: %v", root, err)
		w, err = r.Open(root)
	}
	if err != nil {
		t.Fatalf("Open(%q): %v", root, err)
	}
	t.Cleanup(w.Release)
	return w
}

// folder returns a fresh absolute folder path (it need not exist).
func folder(t testing.TB) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "project")
}

func items(titles ...string) []todo.Item {
	out := make([]todo.Item, len(titles))
	for i, title := range titles {
		out[i] = todo.Item{Title: title, Status: todo.Pending}
	}
	return out
}

// setTodos replaces the list of session name, as the TodoList tool does.
func setTodos(t testing.TB, w *Workspace, name string, list []todo.Item) Session {
	t.Helper()
	s, err := w.Update(name, func(s *Session) (Change, error) {
		s.Todos = list
		return Change{Kind: "todo.set", Actor: "model", Todos: true, Payload: record{map[string]any{"count": len(list)}}}, nil
	})
	if err != nil {
		t.Fatalf("Update(%q) setting todos: %v", name, err)
	}
	return s
}

func mustView(t testing.TB, w *Workspace, name string) Session {
	t.Helper()
	s, err := w.View(name)
	if err != nil {
		t.Fatalf("View(%q): %v", name, err)
	}
	return s
}

// mustHistory returns the newest page of the session's history.
func mustHistory(t testing.TB, w *Workspace, name string, limit int) []Event {
	t.Helper()
	return mustHistoryPage(t, w, name, limit, 0).Events
}

func mustHistoryPage(t testing.TB, w *Workspace, name string, limit int, before uint64) HistoryPage {
	t.Helper()
	p, err := w.History(name, limit, before)
	if err != nil {
		t.Fatalf("History(%q, %d, %d): %v", name, limit, before, err)
	}
	return p
}

// storedHistory returns the number of events stored for the session and
// the total size of their records, read from the file.
func storedHistory(t testing.TB, w *Workspace, name string) (events int, size int64) {
	t.Helper()
	err := boltOf(t, w).DB().View(func(tx *bbolt.Tx) error {
		hb := tx.Bucket(boltstore.BucketHistory).Bucket([]byte(name))
		if hb == nil {
			return nil
		}
		return hb.ForEach(func(_, v []byte) error {
			events++
			size += int64(len(v))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return events, size
}

func seqs(events []Event) []uint64 {
	out := make([]uint64, len(events))
	for i, e := range events {
		out[i] = e.Seq
	}
	return out
}

// errorCode returns the code of err as the commands layer reads it.
func errorCode(err error) string {
	var c interface{ ErrorCode() string }
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	return ""
}

// waitFor waits until cond holds (a condition reached on other
// goroutines); it fails the test after 30s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// boltOf is the state file's store of w.
func boltOf(t testing.TB, w *Workspace) *boltstore.Store {
	t.Helper()
	b, ok := w.store.(*boltstore.Store)
	if !ok {
		t.Fatalf("workspace %s is served by %T, not its state file", w.root, w.store)
	}
	return b
}

// record is a history value of any JSON, for the store's own tests (the
// service stores only the record types of historyrecord.go); a value
// json.Marshal refuses makes the commit fail.
type record struct{ v any }

func (r record) MarshalJSON() ([]byte, error) { return json.Marshal(r.v) }
func (record) historyBefore()                 {}
func (record) historyPayload()                {}
