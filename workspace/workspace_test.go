package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/todo"
)

func TestUpdate(t *testing.T) {
	errRefused := errors.New("refused by the rule")
	tests := []struct {
		name string
		fn   func(s *Session) (Change, error)
		// want, relative to the base session (revision 1, todos revision 1)
		wantErr           error
		wantRevision      uint64
		wantTodosRevision uint64
		wantTodos         []todo.Item
		wantUsage         todo.Usage
		wantKinds         []string // history, newest first
		wantNotices       int
	}{
		{
			name: "todo change bumps revision and todos revision",
			fn: func(s *Session) (Change, error) {
				s.Todos = items("a", "b")
				return Change{Kind: "todo.set", Actor: "user", Todos: true}, nil
			},
			wantRevision: 2, wantTodosRevision: 2, wantTodos: items("a", "b"),
			wantKinds: []string{"todo.set", "todo.set"}, wantNotices: 2,
		},
		{
			name: "goal change bumps revision only",
			fn: func(s *Session) (Change, error) {
				return Change{Kind: "goal.create", Actor: "user", Goal: true, Reason: "asked"}, nil
			},
			wantRevision: 2, wantTodosRevision: 1, wantTodos: items("first"),
			wantKinds: []string{"goal.create", "todo.set"}, wantNotices: 2,
		},
		{
			name: "quiet change is stored without revision, event or notice",
			fn: func(s *Session) (Change, error) {
				s.TodoUsage.StepsSinceWrite = 3
				return Change{Kind: "step.end", Actor: "runtime", Quiet: true}, nil
			},
			wantRevision: 1, wantTodosRevision: 1, wantTodos: items("first"),
			wantUsage: todo.Usage{StepsSinceWrite: 3},
			wantKinds: []string{"todo.set"}, wantNotices: 1,
		},
		{
			name: "zero change writes nothing",
			fn: func(s *Session) (Change, error) {
				s.Todos = items("lost")
				s.TodoUsage.Used = true
				return Change{}, nil
			},
			wantRevision: 1, wantTodosRevision: 1, wantTodos: items("first"),
			wantKinds: []string{"todo.set"}, wantNotices: 1,
		},
		{
			name: "fn error writes nothing and is returned as is",
			fn: func(s *Session) (Change, error) {
				s.Todos[0].Title = "lost"
				s.Todos = append(s.Todos, items("lost too")...)
				return Change{Kind: "todo.set", Todos: true}, errRefused
			},
			wantErr:      errRefused,
			wantRevision: 1, wantTodosRevision: 1, wantTodos: items("first"),
			wantKinds: []string{"todo.set"}, wantNotices: 1,
		},
		{
			name: "store fields set by fn are ignored",
			fn: func(s *Session) (Change, error) {
				s.Name, s.Revision, s.TodosRevision = "other", 99, 98
				s.Todos = nil
				return Change{Kind: "todo.set", Todos: true}, nil
			},
			wantRevision: 2, wantTodosRevision: 2, wantTodos: []todo.Item{},
			wantKinds: []string{"todo.set", "todo.set"}, wantNotices: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stateDir, root := t.TempDir(), folder(t)
			r := newRegistry(t, stateDir)
			var mu sync.Mutex
			notices := 0
			t.Cleanup(r.Subscribe(func(Notice) { mu.Lock(); notices++; mu.Unlock() }))
			w := openWorkspace(t, r, root)
			base := setTodos(t, w, "s", items("first"))

			got, err := w.Update("s", tt.fn)
			if err != tt.wantErr {
				t.Fatalf("Update error: got %v, want %v", err, tt.wantErr)
			}
			want := Session{
				Name:          "s",
				Revision:      tt.wantRevision,
				TodosRevision: tt.wantTodosRevision,
				Todos:         tt.wantTodos,
				TodoUsage:     tt.wantUsage,
				UpdatedAt:     base.UpdatedAt,
			}
			if tt.wantRevision != base.Revision {
				want.UpdatedAt = got.UpdatedAt
				if !got.UpdatedAt.After(base.UpdatedAt) {
					t.Errorf("UpdatedAt: got %v, want after %v", got.UpdatedAt, base.UpdatedAt)
				}
			}
			if err == nil {
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("Update result (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(want, mustView(t, w, "s")); diff != "" {
				t.Errorf("View (-want +got):\n%s", diff)
			}
			var kinds []string
			for _, e := range mustHistory(t, w, "s", 0) {
				kinds = append(kinds, string(e.Kind))
			}
			if diff := cmp.Diff(tt.wantKinds, kinds); diff != "" {
				t.Errorf("history kinds (-want +got):\n%s", diff)
			}
			mu.Lock()
			if notices != tt.wantNotices {
				t.Errorf("notices: got %d, want %d", notices, tt.wantNotices)
			}
			mu.Unlock()

			// What was (or was not) written is what a restart reads.
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			w2 := openWorkspace(t, newRegistry(t, stateDir), root)
			if diff := cmp.Diff(want, mustView(t, w2, "s")); diff != "" {
				t.Errorf("View after reopening (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHistoryEvent(t *testing.T) {
	w := openWorkspace(t, newRegistry(t, t.TempDir()), folder(t))
	if _, err := w.Update("s", func(s *Session) (Change, error) {
		return Change{Kind: "goal.pause", Actor: "runtime", Reason: "the daemon restarted", Goal: true, Payload: record{map[string]string{"status": "paused"}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Update("s", func(s *Session) (Change, error) {
		return Change{Kind: "goal.resume", Actor: "user", Goal: true, Before: record{map[string]string{"status": "paused"}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	got := mustHistory(t, w, "s", 10)
	s := mustView(t, w, "s")
	want := []Event{
		{Seq: 2, At: s.UpdatedAt, Actor: "user", Kind: "goal.resume", Revision: 2, Before: json.RawMessage(`{"status":"paused"}`)},
		{Seq: 1, At: got[1].At, Actor: "runtime", Kind: "goal.pause", Reason: "the daemon restarted", Revision: 1, Payload: json.RawMessage(`{"status":"paused"}`)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("History (-want +got):\n%s", diff)
	}
	if !got[1].At.Before(got[0].At) {
		t.Errorf("event times: got %v then %v, want increasing", got[1].At, got[0].At)
	}
}

func TestUpdatePayloadNotEncodable(t *testing.T) {
	w := openWorkspace(t, newRegistry(t, t.TempDir()), folder(t))
	_, err := w.Update("s", func(s *Session) (Change, error) {
		s.Todos = items("a")
		return Change{Kind: "todo.set", Todos: true, Payload: record{func() {}}}, nil
	})
	if !errors.Is(err, ErrNotSaved) {
		t.Fatalf("Update with a func payload: got %v, want ErrNotSaved", err)
	}
	if got := mustView(t, w, "s"); got.Revision != 0 || len(got.Todos) != 0 {
		t.Errorf("View after a refused payload: got revision %d with %d todos, want a fresh session", got.Revision, len(got.Todos))
	}
}

func TestViewDoesNotCreate(t *testing.T) {
	w := openWorkspace(t, newRegistry(t, t.TempDir()), folder(t))
	got := mustView(t, w, "new")
	if diff := cmp.Diff(Session{Name: "new", Todos: []todo.Item{}}, got); diff != "" {
		t.Errorf("View of a new session (-want +got):\n%s", diff)
	}
	if got := mustView(t, w, ""); got.Name != DefaultSession {
		t.Errorf(`View(""): got name %q, want %q`, got.Name, DefaultSession)
	}
	all, err := w.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 0 {
		t.Errorf("Sessions after View only: got %d sessions, want none", len(all))
	}
	if h := mustHistory(t, w, "new", 0); h == nil || len(h) != 0 {
		t.Errorf("History of a new session: got %#v, want an empty slice", h)
	}
}

func TestCopyOut(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(t *testing.T, w *Workspace)
	}{
		{"Update result", func(t *testing.T, w *Workspace) {
			s := setTodos(t, w, "s", items("a", "b"))
			s.Todos[0].Title = "changed"
			_ = append(s.Todos[:1], items("appended")...)
		}},
		{"View result", func(t *testing.T, w *Workspace) {
			s := mustView(t, w, "s")
			s.Todos[0].Title = "changed"
			s.Todos[1] = todo.Item{Title: "x", Status: todo.Done}
		}},
		{"caller's list after Update", func(t *testing.T, w *Workspace) {
			list := items("a", "b")
			setTodos(t, w, "s", list)
			list[0].Title = "changed"
		}},
		{"fn keeps the session after the commit", func(t *testing.T, w *Workspace) {
			var kept *Session
			if _, err := w.Update("s", func(s *Session) (Change, error) {
				kept = s
				return Change{Kind: "todo.usage", Quiet: true}, nil
			}); err != nil {
				t.Fatal(err)
			}
			kept.Todos[0].Title = "changed"
			kept.Revision = 42
		}},
		{"fn mutates then fails", func(t *testing.T, w *Workspace) {
			var kept *Session
			_, err := w.Update("s", func(s *Session) (Change, error) {
				kept = s
				s.Todos[0].Title = "changed"
				return Change{}, errors.New("no")
			})
			if err == nil {
				t.Fatal("Update: got nil error, want the fn's")
			}
			kept.Todos[1].Title = "changed later"
		}},
		{"notice session", func(t *testing.T, w *Workspace) {
			cancel := w.reg.Subscribe(func(n Notice) { n.Session.Todos[0].Title = "changed by a subscriber" })
			defer cancel()
			setTodos(t, w, "s", items("a", "b"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := openWorkspace(t, newRegistry(t, t.TempDir()), folder(t))
			setTodos(t, w, "s", items("a", "b"))
			before := mustView(t, w, "s")
			tt.mutate(t, w)
			got := mustView(t, w, "s")
			if diff := cmp.Diff(items("a", "b"), got.Todos); diff != "" {
				t.Errorf("todos (-want +got):\n%s", diff)
			}
			if got.Revision < before.Revision {
				t.Errorf("revision: got %d, want >= %d", got.Revision, before.Revision)
			}
		})
	}
}

func TestPersistence(t *testing.T) {
	stateDir, root := t.TempDir(), folder(t)
	r := newRegistry(t, stateDir)
	w := openWorkspace(t, r, root)
	for i, name := range []string{"zeta", "alpha", DefaultSession} {
		for j := 0; j <= i; j++ {
			setTodos(t, w, name, items(fmt.Sprintf("%s %d", name, j)))
		}
	}
	if _, err := w.Update("alpha", func(s *Session) (Change, error) {
		s.TodoUsage = todo.Usage{Used: true, StepsSinceWrite: 4, StepsSinceReminder: 2}
		return Change{Kind: "step.end", Quiet: true}, nil
	}); err != nil {
		t.Fatal(err)
	}
	wantSessions, err := w.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range wantSessions {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"alpha", "default", "zeta"}, names); diff != "" {
		t.Errorf("Sessions names (-want +got):\n%s", diff)
	}
	wantHistory := mustHistory(t, w, "zeta", 0)
	if len(wantHistory) != 1 {
		t.Fatalf("zeta history: got %d events, want 1", len(wantHistory))
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.View("alpha"); !errors.Is(err, ErrClosed) {
		t.Errorf("View after Registry.Close: got %v, want ErrClosed", err)
	}

	w2 := openWorkspace(t, newRegistry(t, stateDir), root)
	gotSessions, err := w2.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantSessions, gotSessions); diff != "" {
		t.Errorf("Sessions after reopening (-want +got):\n%s", diff)
	}
	for _, s := range wantSessions {
		if diff := cmp.Diff(s, mustView(t, w2, s.Name)); diff != "" {
			t.Errorf("View(%q) after reopening (-want +got):\n%s", s.Name, diff)
		}
	}
	if diff := cmp.Diff(wantHistory, mustHistory(t, w2, "zeta", 0)); diff != "" {
		t.Errorf("History after reopening (-want +got):\n%s", diff)
	}
	// Revisions continue where they stopped.
	if got := setTodos(t, w2, "zeta", nil); got.Revision != 2 {
		t.Errorf("revision after reopening and one update: got %d, want 2", got.Revision)
	}
	if h := mustHistory(t, w2, "zeta", 1); h[0].Seq != 2 {
		t.Errorf("history seq after reopening: got %d, want 2", h[0].Seq)
	}
}

func TestHistoryBound(t *testing.T) {
	tests := []struct {
		name     string
		bound    int
		events   int
		limit    int
		wantSeqs []uint64
	}{
		{"under the bound", 5, 3, 10, []uint64{3, 2, 1}},
		{"over the bound keeps the newest", 5, 12, 100, []uint64{12, 11, 10, 9, 8}},
		{"limit smaller than what is kept", 5, 12, 2, []uint64{12, 11}},
		{"limit 0 means 50", 1000, 60, 0, seqRange(60, 11)},
		{"negative limit means 50", 1000, 55, -1, seqRange(55, 6)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := maxHistory
			maxHistory = tt.bound
			t.Cleanup(func() { maxHistory = old })

			w := openWorkspace(t, newRegistry(t, t.TempDir()), folder(t))
			for i := range tt.events {
				setTodos(t, w, "s", items(fmt.Sprint(i)))
			}
			if diff := cmp.Diff(tt.wantSeqs, seqs(mustHistory(t, w, "s", tt.limit))); diff != "" {
				t.Errorf("History seqs (-want +got):\n%s", diff)
			}
			if got, want := countHistory(t, w, "s"), min(tt.events, tt.bound); got != want {
				t.Errorf("stored events: got %d, want %d", got, want)
			}
		})
	}
}

// seqRange returns from, from-1, ..., to.
func seqRange(from, to uint64) []uint64 {
	var out []uint64
	for s := from; s >= to; s-- {
		out = append(out, s)
	}
	return out
}

func countHistory(t testing.TB, w *Workspace, name string) int {
	t.Helper()
	n, _ := storedHistory(t, w, name)
	return n
}

func TestSubscribeOrder(t *testing.T) {
	r := newRegistry(t, t.TempDir())
	w := openWorkspace(t, r, folder(t))

	var mu sync.Mutex
	got := map[string][]uint64{}
	cancel := r.Subscribe(func(n Notice) {
		if n.Workspace != w {
			t.Errorf("notice workspace: got %p, want %p", n.Workspace, w)
		}
		mu.Lock()
		got[n.Session.Name] = append(got[n.Session.Name], n.Session.Revision)
		mu.Unlock()
	})

	const writers, perWriter = 8, 25
	sessions := []string{"one", "two"}
	var wg sync.WaitGroup
	for _, name := range sessions {
		for i := range writers {
			wg.Go(func() {
				for j := range perWriter {
					quiet := j%5 == 4
					if _, err := w.Update(name, func(s *Session) (Change, error) {
						s.Todos = append(s.Todos, todo.Item{Title: fmt.Sprintf("%d.%d", i, j), Status: todo.Pending})
						return Change{Kind: "todo.set", Todos: true, Quiet: quiet}, nil
					}); err != nil {
						t.Error(err)
					}
					if _, err := w.View(name); err != nil {
						t.Error(err)
					}
				}
			})
		}
	}
	wg.Wait()

	loud := uint64(writers * perWriter * 4 / 5)
	for _, name := range sessions {
		if diff := cmp.Diff(seqRangeUp(1, loud), got[name]); diff != "" {
			t.Errorf("revisions of notices of %q (-want +got):\n%s", name, diff)
		}
		if s := mustView(t, w, name); len(s.Todos) != writers*perWriter || s.Revision != loud {
			t.Errorf("%q: got %d todos at revision %d, want %d at %d", name, len(s.Todos), s.Revision, writers*perWriter, loud)
		}
	}

	cancel()
	cancel() // twice is fine
	setTodos(t, w, "one", nil)
	mu.Lock()
	defer mu.Unlock()
	if n := len(got["one"]); n != int(loud) {
		t.Errorf("notices after cancel: got %d, want %d", n, loud)
	}
}

func seqRangeUp(from, to uint64) []uint64 {
	var out []uint64
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

func TestSubscriberPanicDoesNotFailUpdate(t *testing.T) {
	r := newRegistry(t, t.TempDir())
	w := openWorkspace(t, r, folder(t))
	t.Cleanup(r.Subscribe(func(Notice) { panic("boom") }))
	var got []uint64
	t.Cleanup(r.Subscribe(func(n Notice) { got = append(got, n.Session.Revision) }))
	setTodos(t, w, "s", items("a"))
	setTodos(t, w, "s", items("b"))
	if diff := cmp.Diff([]uint64{1, 2}, got); diff != "" {
		t.Errorf("notices of the second subscriber (-want +got):\n%s", diff)
	}
}

func TestCommitFailure(t *testing.T) {
	w := openWorkspace(t, newRegistry(t, t.TempDir(), func(o *Options) { o.maxSize = 1 << 20 }), folder(t))
	setTodos(t, w, "s", items("kept"))
	before := mustView(t, w, "s")
	var notices int
	t.Cleanup(w.reg.Subscribe(func(Notice) { notices++ }))

	huge := strings.Repeat("x", 2<<20)
	_, err := w.Update("s", func(s *Session) (Change, error) {
		s.Todos = items("lost")
		return Change{Kind: "todo.set", Todos: true, Payload: record{huge}}, nil
	})
	if !errors.Is(err, ErrNotSaved) || !strings.Contains(err.Error(), "not saved") || !strings.Contains(err.Error(), "maximum size") {
		t.Fatalf("Update beyond the file's size limit: got %v, want an error saying it was not saved and why", err)
	}
	if diff := cmp.Diff(before, mustView(t, w, "s")); diff != "" {
		t.Errorf("View after a failed commit (-want +got):\n%s", diff)
	}
	if got := seqs(mustHistory(t, w, "s", 0)); !cmp.Equal(got, []uint64{1}) {
		t.Errorf("history after a failed commit: got seqs %v, want [1]", got)
	}
	if notices != 0 {
		t.Errorf("notices for a failed commit: got %d, want 0", notices)
	}
	if got := setTodos(t, w, "s", items("next")); got.Revision != 2 {
		t.Errorf("revision of the next successful update: got %d, want 2", got.Revision)
	}
}

func BenchmarkView(b *testing.B) {
	w := openWorkspace(b, newRegistry(b, b.TempDir()), folder(b))
	list := make([]todo.Item, 20)
	for i := range list {
		list[i] = todo.Item{Title: fmt.Sprintf("item %d with a title of ordinary length", i), Status: todo.Pending}
	}
	setTodos(b, w, "s", list)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := w.View("s"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUpdate(b *testing.B) {
	w := openWorkspace(b, newRegistry(b, b.TempDir()), folder(b))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		setTodos(b, w, "s", items(fmt.Sprint(i)))
	}
}

// TestSessionLimit: a folder stores at most maxSessions sessions; a change
// that would store one more is refused with args.invalid naming the limit,
// writes nothing, and the stored sessions go on; a session stored by a quiet
// change (a TodoList read) has a real UpdatedAt.
func TestSessionLimit(t *testing.T) {
	old := maxSessions
	t.Cleanup(func() { maxSessions = old })
	maxSessions = 3
	w := openWorkspace(t, newRegistry(t, t.TempDir()), folder(t))
	read := func(name string) (Session, error) {
		return w.Update(name, func(s *Session) (Change, error) {
			s.TodoUsage.NoteRead()
			return Change{Kind: "todo.read", Quiet: true}, nil
		})
	}
	for _, name := range []string{"a", "b", "c"} {
		if _, err := read(name); err != nil {
			t.Fatalf("read of session %q: %v", name, err)
		}
	}
	_, err := read("d")
	if errorCode(err) != goal.CodeArgsInvalid || !strings.Contains(err.Error(), `session "d" would be new`) || !strings.Contains(err.Error(), "(3)") {
		t.Fatalf("a fourth session: got %v (code %q), want args.invalid naming the limit", err, errorCode(err))
	}
	if _, err := w.Update("d", func(s *Session) (Change, error) {
		s.Todos = items("x")
		return Change{Kind: "todo.set", Actor: "model", Todos: true}, nil
	}); errorCode(err) != goal.CodeArgsInvalid {
		t.Fatalf("a write to a fourth session: got %v, want args.invalid", err)
	}
	if s := mustView(t, w, "d"); s.Revision != 0 || len(s.Todos) != 0 {
		t.Fatalf("the refused session reads as %+v, want a fresh one", s)
	}
	setTodos(t, w, "b", items("still works")) // an existing session goes on
	list, err := w.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 {
		t.Fatalf("stored %d sessions, want 3", len(list))
	}
	for _, s := range list {
		if s.UpdatedAt.IsZero() {
			t.Errorf("session %q stored by a read has no updatedAt", s.Name)
		}
	}
}
