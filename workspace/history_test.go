package workspace

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.etcd.io/bbolt"

	"github.com/agentd/agentd/todo"
)

// withHistoryBytes lowers the history's byte budget for one test.
func withHistoryBytes(t *testing.T, n int64) {
	t.Helper()
	old := maxHistoryBytes
	maxHistoryBytes = n
	t.Cleanup(func() { maxHistoryBytes = old })
}

// appendPayload appends one event whose payload is a string of n bytes.
func appendPayload(t testing.TB, w *Workspace, name string, n int) Session {
	t.Helper()
	s, err := w.Update(name, func(s *Session) (Change, error) {
		return Change{Kind: "test", Actor: "model", Payload: record{strings.Repeat("p", n)}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestHistoryByteBound: appending drops the oldest events until the stored
// records fit the byte budget, in the same transaction; what is kept are the
// newest events with contiguous seqs; the newest event stays even when it
// alone is over the budget.
func TestHistoryByteBound(t *testing.T) {
	withHistoryBytes(t, 10_000)
	w := openWorkspace(t, newRegistry(t, t.TempDir()), folder(t))
	for range 40 {
		appendPayload(t, w, "s", 900)
	}
	n, size := storedHistory(t, w, "s")
	if size > 10_000 || n < 9 {
		t.Fatalf("%d events of %d bytes kept, want the newest that fit in 10000 bytes", n, size)
	}
	if got, want := seqs(mustHistory(t, w, "s", 100)), seqRange(40, uint64(41-n)); !cmp.Equal(got, want) {
		t.Errorf("history seqs %v, want %v", got, want)
	}
	// One more event would not fit with the oldest kept: exactly one goes.
	appendPayload(t, w, "s", 900)
	if n2, _ := storedHistory(t, w, "s"); n2 != n {
		t.Errorf("%d events after one more append, want %d", n2, n)
	}

	appendPayload(t, w, "s", 20_000)
	if got := seqs(mustHistory(t, w, "s", 100)); !cmp.Equal(got, []uint64{42}) {
		t.Errorf("after an event larger than the budget: seqs %v, want only the newest, [42]", got)
	}
	appendPayload(t, w, "s", 10)
	if got := seqs(mustHistory(t, w, "s", 100)); !cmp.Equal(got, []uint64{43}) {
		t.Errorf("after it: seqs %v, want [43]", got)
	}
}

// TestHistoryByteBoundAcrossReopen: a new process counts the history it
// finds (here written under a larger budget) at its first append and trims
// it to its own budget; another session is untouched.
func TestHistoryByteBoundAcrossReopen(t *testing.T) {
	stateDir, root := t.TempDir(), folder(t)
	r := NewRegistry(Options{StateDir: stateDir, Now: newClock().Now})
	w, err := r.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	for range 30 {
		appendPayload(t, w, "s", 1000)
		appendPayload(t, w, "other", 1000)
	}
	w.Release()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}

	withHistoryBytes(t, 5_000)
	w = openWorkspace(t, newRegistry(t, stateDir), root)
	if n, _ := storedHistory(t, w, "s"); n != 30 {
		t.Fatalf("%d events before the first append, want 30", n)
	}
	appendPayload(t, w, "s", 1000)
	if n, size := storedHistory(t, w, "s"); size > 5_000 || n != 4 {
		t.Errorf("%d events of %d bytes after the first append under a 5000-byte budget, want 4", n, size)
	}
	if n, _ := storedHistory(t, w, "other"); n != 30 {
		t.Errorf("the other session has %d events, want its 30", n)
	}
}

// TestHistoryByteBoundFailedCommit: a commit that fails leaves the byte
// count as it was, so later appends keep exactly what fits.
func TestHistoryByteBoundFailedCommit(t *testing.T) {
	withHistoryBytes(t, 10_000)
	w := openWorkspace(t, newRegistry(t, t.TempDir(), func(o *Options) { o.maxSize = 1 << 20 }), folder(t))
	for range 5 {
		appendPayload(t, w, "s", 900)
	}
	if _, err := w.Update("s", func(s *Session) (Change, error) {
		return Change{Kind: "test", Payload: record{strings.Repeat("x", 2<<20)}}, nil
	}); err == nil {
		t.Fatal("an update beyond the file's size limit was saved")
	}
	for range 20 {
		appendPayload(t, w, "s", 900)
	}
	_, size := storedHistory(t, w, "s")
	if n := countHistory(t, w, "s"); size > 10_000 || size+1000 < 10_000 {
		t.Errorf("%d events of %d bytes kept, want as many as fit in 10000 bytes", n, size)
	}
}

// TestHistoryPages: agentd.history pages: at most MaxHistoryPageBytes of
// records per page (at least one event), More while older events exist,
// before to read on.
func TestHistoryPages(t *testing.T) {
	w := openWorkspace(t, newRegistry(t, t.TempDir()), folder(t))
	for range 7 {
		appendPayload(t, w, "s", 300<<10) // 3 fit in 1 MiB, 4 do not
	}
	type page struct {
		Seqs []uint64
		More bool
	}
	get := func(limit int, before uint64) page {
		p := mustHistoryPage(t, w, "s", limit, before)
		return page{seqs(p.Events), p.More}
	}
	tests := []struct {
		name   string
		limit  int
		before uint64
		want   page
	}{
		{"newest page is cut at 1 MiB", 50, 0, page{[]uint64{7, 6, 5}, true}},
		{"next page", 50, 5, page{[]uint64{4, 3, 2}, true}},
		{"last page", 50, 2, page{[]uint64{1}, false}},
		{"limit below the byte bound", 2, 0, page{[]uint64{7, 6}, true}},
		{"limit that ends at the oldest", 2, 3, page{[]uint64{2, 1}, false}},
		{"before beyond the newest", 1, 100, page{[]uint64{7}, true}},
		{"before the oldest", 50, 1, page{[]uint64{}, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, get(tt.limit, tt.before)); diff != "" {
				t.Errorf("History(limit %d, before %d) (-want +got):\n%s", tt.limit, tt.before, diff)
			}
		})
	}

	appendPayload(t, w, "s", MaxHistoryPageBytes+10)
	if got := get(50, 0); !cmp.Equal(got, page{[]uint64{8}, true}) {
		t.Errorf("an event over 1 MiB: page %+v, want it alone", got)
	}
	if p := mustHistoryPage(t, w, "none", 50, 0); p.Events == nil || len(p.Events) != 0 || p.More {
		t.Errorf("history of a session without events: %+v, want an empty page", p)
	}
}

// TestStateFileSizeBound: a session's history keeps the state file within
// 16 MiB (docs/reliability.md, Limits) whatever the size of its events,
// including those that fill bbolt's pages worst (two records of about 820
// bytes per 4 KiB page) and lists at todo.MaxListBytes.
func TestStateFileSizeBound(t *testing.T) {
	if testing.Short() {
		t.Skip("writes about 30,000 events")
	}
	dir := t.TempDir()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() { // the test is about sizes, not fsync
		if d, err := os.MkdirTemp("/dev/shm", "agentd-size-"); err == nil {
			dir = d
			t.Cleanup(func() { os.RemoveAll(d) })
		}
	}
	w := openWorkspace(t, newRegistry(t, dir), folder(t))
	list := func(items, chars int, tag string) []todo.Item {
		out := make([]todo.Item, items)
		for i := range out {
			out[i] = todo.Item{Title: tag + strings.Repeat("日", chars), Status: todo.Pending}
		}
		return out
	}
	write := func(l []todo.Item) {
		t.Helper()
		if _, err := w.Update("s", func(s *Session) (Change, error) {
			s.Todos = l
			return Change{Kind: "todo.write", Actor: "model", Todos: true, Payload: record{map[string]any{"items": l, "agent": "main"}}}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	largest := list(todo.MaxItems, 420, "")
	if data, _ := json.Marshal(largest); len(data) > todo.MaxListBytes || len(data) < todo.MaxListBytes-4096 {
		t.Fatalf("the largest list takes %d bytes", len(data))
	}
	size := func() int64 {
		fi, err := os.Stat(w.path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	used := func() (hwm int64) { // bbolt's high-water mark: the pages ever used
		boltOf(t, w).DB().View(func(tx *bbolt.Tx) error { hwm = tx.Size(); return nil })
		return hwm
	}
	// bbolt grows a file of 16 MiB in steps of 16 MiB: the pages used must
	// stay well below it for the bound to hold.
	const bound, usedBound = 16 << 20, 12 << 20
	phases := []struct {
		name   string
		writes int
		list   func(i int) []todo.Item
	}{
		{"largest lists", 40, func(int) []todo.Item { return largest }},
		{"records of about 820 bytes", 8000, func(i int) []todo.Item { return list(1, 215, fmt.Sprint(i%10)) }},
		{"mixed sizes", 2000, func(i int) []todo.Item { return list(1+i%7*30, 1+i%5*90, "") }},
		{"small records", 14000, func(i int) []todo.Item { return list(1, 10, fmt.Sprint(i)) }},
	}
	for _, ph := range phases {
		for i := range ph.writes {
			write(ph.list(i))
		}
		n, held := storedHistory(t, w, "s")
		t.Logf("%s: %d events of %d bytes; state file %d bytes, %d used", ph.name, n, held, size(), used())
		if held > MaxHistoryBytes || n > MaxHistory {
			t.Errorf("%s: %d events of %d bytes kept", ph.name, n, held)
		}
		if s, u := size(), used(); s > bound || u > usedBound {
			t.Errorf("%s: the state file has %d bytes, %d used; want at most %d and %d", ph.name, s, u, bound, usedBound)
		}
	}
}
