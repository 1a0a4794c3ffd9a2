package workspace

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.etcd.io/bbolt"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/todo"
)

// holdWriter takes bbolt's writer lock of w, so that commits queue up
// behind it, until the returned function is called.
func holdWriter(t *testing.T, w *Workspace) (release func()) {
	t.Helper()
	tx, err := boltOf(t, w).db.Begin(true)
	if err != nil {
		t.Fatal(err)
	}
	release = func() { _ = tx.Rollback() } // a second call does nothing
	t.Cleanup(release)
	return release
}

// awaitGroup waits until a leader is writing and queued changes wait
// behind it.
func awaitGroup(t *testing.T, w *Workspace, queued int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d changes queued behind a leader", queued), func() bool {
		boltOf(t, w).group.mu.Lock()
		defer boltOf(t, w).group.mu.Unlock()
		return boltOf(t, w).group.leading && len(boltOf(t, w).group.queue) == queued
	})
}

// lastTx returns the id of the last committed transaction.
func lastTx(t *testing.T, w *Workspace) (id int) {
	t.Helper()
	if err := boltOf(t, w).db.View(func(tx *bbolt.Tx) error { id = tx.ID(); return nil }); err != nil {
		t.Fatal(err)
	}
	return id
}

// update sets the list of session name to titles, as the model's TodoList
// write does.
func update(w *Workspace, name string, titles ...string) (Session, error) {
	return w.Update(name, func(s *Session) (Change, error) {
		s.Todos = items(titles...)
		return Change{Kind: "todo.set", Actor: "model", Todos: true, Payload: titles}, nil
	})
}

// behindPlug runs each of fns in a goroutine of its own, queued in this
// order behind a leader (an update of session "plug", which must exist)
// that waits for the writer lock; it returns when all have returned.
func behindPlug(t *testing.T, w *Workspace, fns ...func()) {
	t.Helper()
	release := holdWriter(t, w)
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := update(w, "plug", "next"); err != nil {
			t.Error(err)
		}
	})
	awaitGroup(t, w, 0) // the plug leads, waiting for the writer lock
	for i, fn := range fns {
		wg.Go(fn)
		awaitGroup(t, w, i+1)
	}
	release()
	wg.Wait()
}

// TestGroupCommit: changes of different sessions that wait while another
// commit is written share one transaction; each Update returns after it
// committed, with its own revision, history event and notice, and all of
// them are on disk after a restart.
func TestGroupCommit(t *testing.T) {
	stateDir, root := t.TempDir(), folder(t)
	r := newRegistry(t, stateDir)
	w := openWorkspace(t, r, root)
	setTodos(t, w, "plug", items("0"))
	var mu sync.Mutex
	notices := map[string][]uint64{}
	t.Cleanup(r.Subscribe(func(n Notice) {
		mu.Lock()
		notices[n.Session.Name] = append(notices[n.Session.Name], n.Session.Revision)
		mu.Unlock()
	}))
	before := lastTx(t, w)

	const sessions = 16
	got := make([]Session, sessions)
	var fns []func()
	for i := range sessions {
		fns = append(fns, func() {
			var err error
			if got[i], err = update(w, fmt.Sprint("s", i), fmt.Sprint("item ", i)); err != nil {
				t.Error(err)
			}
		})
	}
	behindPlug(t, w, fns...)

	if n := lastTx(t, w) - before; n != 2 {
		t.Errorf("transactions for the plug and %d queued changes: got %d, want 2", sessions, n)
	}
	for i, s := range got {
		name := fmt.Sprint("s", i)
		if s.Name != name || s.Revision != 1 || len(s.Todos) != 1 || s.Todos[0].Title != fmt.Sprint("item ", i) {
			t.Errorf("Update(%q) returned %+v, want revision 1 with its own item", name, s)
		}
		if diff := cmp.Diff([]uint64{1}, notices[name]); diff != "" {
			t.Errorf("notices of %q (-want +got):\n%s", name, diff)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	w2 := openWorkspace(t, newRegistry(t, stateDir), root)
	for _, s := range got {
		if diff := cmp.Diff(s, mustView(t, w2, s.Name)); diff != "" {
			t.Errorf("%q after a restart (-want +got):\n%s", s.Name, diff)
		}
		if h := mustHistory(t, w2, s.Name, 0); len(h) != 1 || h[0].Seq != 1 || h[0].Kind != "todo.set" {
			t.Errorf("history of %q after a restart: got %+v, want its one event", s.Name, h)
		}
	}
	if s := mustView(t, w2, "plug"); s.Revision != 2 || s.Todos[0].Title != "next" {
		t.Errorf("plug after a restart: got revision %d %v, want 2 [next]", s.Revision, s.Todos)
	}
}

// TestGroupCommitFailureIsolated: a change whose commit fails (too large
// for the file's size limit) in a shared transaction fails alone with
// ErrNotSaved, publishing nothing and leaving its session as it was; the
// changes queued with it are saved and published.
func TestGroupCommitFailureIsolated(t *testing.T) {
	stateDir, root := t.TempDir(), folder(t)
	r := newRegistry(t, stateDir, func(o *Options) { o.maxSize = 1 << 20 })
	w := openWorkspace(t, r, root)
	setTodos(t, w, "plug", items("0"))
	setTodos(t, w, "big", items("kept"))
	bigBefore := mustView(t, w, "big")
	var mu sync.Mutex
	notices := map[string]int{}
	t.Cleanup(r.Subscribe(func(n Notice) {
		mu.Lock()
		notices[n.Session.Name]++
		mu.Unlock()
	}))

	var bigErr error
	errs := make([]error, 3)
	fns := []func(){func() {
		_, bigErr = w.Update("big", func(s *Session) (Change, error) {
			s.Todos = items("lost")
			return Change{Kind: "todo.set", Todos: true, Payload: strings.Repeat("x", 2<<20)}, nil
		})
	}}
	for i := range errs {
		fns = append(fns, func() { _, errs[i] = update(w, fmt.Sprint("s", i), "x") })
	}
	behindPlug(t, w, fns...)

	if !errors.Is(bigErr, ErrNotSaved) || !strings.Contains(bigErr.Error(), "maximum size") {
		t.Errorf("the change beyond the size limit: got %v, want ErrNotSaved saying why", bigErr)
	}
	if diff := cmp.Diff(bigBefore, mustView(t, w, "big")); diff != "" {
		t.Errorf("big after its failed commit (-want +got):\n%s", diff)
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("Update(s%d) queued with a failing change: %v", i, err)
		}
		// The failed attempt's history sizes are not kept.
		name := fmt.Sprint("s", i)
		if _, size := storedHistory(t, w, name); boltOf(t, w).historyOf(name).bytes != size {
			t.Errorf("history bytes counted for %s: %d, stored %d", name, boltOf(t, w).historyOf(name).bytes, size)
		}
	}
	mu.Lock()
	if diff := cmp.Diff(map[string]int{"plug": 1, "s0": 1, "s1": 1, "s2": 1}, notices); diff != "" {
		t.Errorf("notices (-want +got):\n%s", diff)
	}
	mu.Unlock()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	w2 := openWorkspace(t, newRegistry(t, stateDir), root)
	if diff := cmp.Diff(bigBefore, mustView(t, w2, "big")); diff != "" {
		t.Errorf("big after a restart (-want +got):\n%s", diff)
	}
	for i := range errs {
		if s := mustView(t, w2, fmt.Sprint("s", i)); s.Revision != 1 {
			t.Errorf("s%d after a restart: got revision %d, want 1", i, s.Revision)
		}
	}
}

// TestGroupCommitSessionLimit: new sessions sharing a transaction count
// against MaxSessions one by one: those within the limit are stored, the
// one beyond it is refused alone, in the same transaction.
func TestGroupCommitSessionLimit(t *testing.T) {
	old := maxSessions
	t.Cleanup(func() { maxSessions = old })
	maxSessions = 4
	w := openWorkspace(t, newRegistry(t, t.TempDir()), folder(t))
	setTodos(t, w, "plug", items("0"))
	before := lastTx(t, w)

	errs := make([]error, 4)
	var fns []func()
	for i := range errs {
		fns = append(fns, func() { _, errs[i] = update(w, fmt.Sprint("new", i), "x") })
	}
	behindPlug(t, w, fns...)

	for i, err := range errs[:3] {
		if err != nil {
			t.Errorf("Update(new%d), within the limit: %v", i, err)
		}
	}
	if err := errs[3]; errorCode(err) != goal.CodeArgsInvalid || !strings.Contains(err.Error(), "already has 4 sessions") {
		t.Errorf("Update(new3), a fifth session: got %v, want args.invalid naming the limit", err)
	}
	if n := lastTx(t, w) - before; n != 2 {
		t.Errorf("transactions: got %d, want 2 (the plug, then the new sessions together)", n)
	}
	if stored, err := w.Sessions(); err != nil || len(stored) != 4 {
		t.Errorf("stored sessions: got %d (%v), want 4", len(stored), err)
	}
}

// TestGroupCommitSameSession: writers of one session stay one after the
// other while they run alongside writers of other sessions: no change is
// lost, and each session's revisions and history are 1, 2, 3, … in the
// order its notices came.
func TestGroupCommitSameSession(t *testing.T) {
	r := newRegistry(t, t.TempDir())
	w := openWorkspace(t, r, folder(t))
	var mu sync.Mutex
	notices := map[string][]uint64{}
	t.Cleanup(r.Subscribe(func(n Notice) {
		mu.Lock()
		notices[n.Session.Name] = append(notices[n.Session.Name], n.Session.Revision)
		mu.Unlock()
	}))
	const sessions, writers, writes = 4, 4, 10
	var wg sync.WaitGroup
	for k := range sessions {
		for i := range writers {
			wg.Go(func() {
				for j := range writes {
					if _, err := w.Update(fmt.Sprint("s", k), func(s *Session) (Change, error) {
						s.Todos = append(s.Todos, todo.Item{Title: fmt.Sprintf("%d.%d", i, j), Status: todo.Pending})
						return Change{Kind: "todo.set", Todos: true}, nil
					}); err != nil {
						t.Error(err)
					}
				}
			})
		}
	}
	wg.Wait()
	n := uint64(writers * writes)
	for k := range sessions {
		name := fmt.Sprint("s", k)
		if s := mustView(t, w, name); s.Revision != n || len(s.Todos) != int(n) {
			t.Errorf("%q: got %d items at revision %d, want %d at %d", name, len(s.Todos), s.Revision, n, n)
		}
		if diff := cmp.Diff(seqRangeUp(1, n), notices[name]); diff != "" {
			t.Errorf("notices of %q (-want +got):\n%s", name, diff)
		}
		if diff := cmp.Diff(seqRange(n, 1), seqs(mustHistory(t, w, name, int(n)))); diff != "" {
			t.Errorf("history of %q (-want +got):\n%s", name, diff)
		}
	}
}

// TestStoredFormIsWhatIsRead: the session Update keeps and returns without
// decoding its record is the one decoding gives, for the ways a value and
// its JSON can differ: times with a monotonic reading and a location, an
// empty list of turns, a string that is not valid UTF-8 and a zone offset
// with seconds.
func TestStoredFormIsWhatIsRead(t *testing.T) {
	w := openWorkspace(t, newRegistry(t, t.TempDir()), folder(t))
	now := time.Now() // Local, with a monotonic reading
	cases := map[string]func(s *Session){
		"every field": func(*Session) {},
		"no goal":     func(s *Session) { s.Goal = goal.State{} },
		"no turns":    func(s *Session) { s.Goal.Turns = []goal.Turn{} },
		"time.Now times": func(s *Session) {
			s.Goal.Goal.CreatedAt, s.Goal.Goal.UpdatedAt, s.Goal.Goal.ActiveSince = now, now, now
		},
		"zero times":     func(s *Session) { s.Goal.Goal.ActiveSince = time.Time{}.In(time.Local) },
		"other zone":     func(s *Session) { s.Goal.Goal.CreatedAt = now.In(time.FixedZone("X", 5*3600+30*60)) },
		"offset seconds": func(s *Session) { s.Goal.Goal.CreatedAt = now.In(time.FixedZone("LMT", 561)) },
		"bad UTF-8 title": func(s *Session) {
			s.Todos[0].Title = "a\xffb"
		},
		"bad UTF-8 everywhere": func(s *Session) {
			var walk func(v reflect.Value)
			walk = func(v reflect.Value) {
				switch v.Kind() {
				case reflect.String:
					v.SetString(v.String() + "\xff")
				case reflect.Pointer:
					if !v.IsNil() {
						walk(v.Elem())
					}
				case reflect.Slice:
					for i := range v.Len() {
						walk(v.Index(i))
					}
				case reflect.Struct:
					if v.Type() != reflect.TypeFor[time.Time]() {
						for i := range v.NumField() {
							walk(v.Field(i))
						}
					}
				}
			}
			walk(reflect.ValueOf(s).Elem())
			s.Name = "s"
		},
		"a real U+FFFD": func(s *Session) { s.Todos[0].Title = "a\uFFFDb" },
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			s := fullSession()
			edit(&s)
			data, err := encodeSession(s)
			if err != nil {
				t.Fatal(err)
			}
			want, err := w.decodeSession(s.Name, data)
			if err != nil {
				t.Fatal(err)
			}
			got, err := w.storedForm(s.Name, s, data)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("storedForm against decoding (-decoded +storedForm):\n%s", diff)
			}
			times := []time.Time{got.UpdatedAt}
			if g := got.Goal.Goal; g != nil {
				times = append(times, g.CreatedAt, g.UpdatedAt, g.ActiveSince)
			}
			for _, tm := range times {
				if strings.Contains(tm.String(), "m=") {
					t.Errorf("time %v keeps a monotonic reading, which the stored record has not", tm)
				}
			}
		})
	}
}

// BenchmarkUpdateConcurrent measures the group commit: rounds of the same
// number of TodoList-sized writes (8 items), first by one writer, then by
// 16 writers of 16 sessions at once, in one folder. It reports each
// phase's time per write and speedup, the 16 writers' throughput as a
// multiple of the one writer's in the same run (docs/performance.md,
// "Group commit"). ns/op is one round.
func BenchmarkUpdateConcurrent(b *testing.B) {
	const writers, perWriter = 16, 16
	w := openWorkspace(b, newRegistry(b, b.TempDir()), folder(b))
	list := make([]todo.Item, 8)
	for i := range list {
		list[i] = todo.Item{Title: fmt.Sprintf("item %d with a title of ordinary length", i), Status: todo.Pending}
	}
	write := func(name string) {
		if _, err := w.Update(name, func(s *Session) (Change, error) {
			s.Todos = list
			return Change{Kind: "todo.set", Actor: "model", Todos: true, Payload: list}, nil
		}); err != nil {
			b.Error(err)
		}
	}
	var solo, group time.Duration
	for b.Loop() {
		start := time.Now()
		for range writers * perWriter {
			write("solo")
		}
		solo += time.Since(start)

		start = time.Now()
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() {
				for range perWriter {
					write(fmt.Sprint("s", i))
				}
			})
		}
		wg.Wait()
		group += time.Since(start)
	}
	writes := float64(b.N * writers * perWriter)
	b.ReportMetric(float64(solo.Nanoseconds())/writes, "solo-ns/write")
	b.ReportMetric(float64(group.Nanoseconds())/writes, "concurrent-ns/write")
	b.ReportMetric(float64(solo)/float64(group), "speedup")
}
