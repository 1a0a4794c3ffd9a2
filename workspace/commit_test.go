package workspace

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/todo"
)

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
			return Change{Kind: "todo.set", Actor: "model", Todos: true, Payload: record{list}}, nil
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
