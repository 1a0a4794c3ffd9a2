package workspace

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentd/agentd/workspace/wsfolder"
	"github.com/google/go-cmp/cmp"
)

// sparseStore fills the state file of a fresh folder with about 6 MiB of
// history, then trims the history to 2 events, so the file is mostly free
// pages. It returns the state dir, the folder, and the file's size.
func sparseStore(t *testing.T) (stateDir, root string, size int64) {
	t.Helper()
	stateDir, root = t.TempDir(), folder(t)
	old := maxHistory
	t.Cleanup(func() { maxHistory = old })
	maxHistory = 1000

	r := NewRegistry(Options{StateDir: stateDir, Now: newClock().Now})
	w, err := r.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	setTodos(t, w, "keep", items("a", "b", "c"))
	big := strings.Repeat("x", 100<<10)
	for i := range 60 {
		if _, err := w.Update("s", func(s *Session) (Change, error) {
			s.Todos = items(big[:i+1])
			return Change{Kind: "todo.set", Todos: true, Payload: record{big}}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	maxHistory = 2
	setTodos(t, w, "s", items("last"))
	maxHistory = old
	w.Release()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(stateDir, wsfolder.WorkspacesDir, wsfolder.FolderKey(root), wsfolder.StateFileName))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() <= compactMinSize {
		t.Fatalf("the sparse store is only %d bytes; the test needs more than %d", fi.Size(), compactMinSize)
	}
	return stateDir, root, fi.Size()
}

// snapshotStore reads everything a client can see of the test's sessions.
type storeView struct {
	Keep, S        Session
	HistS, HistKep []Event
}

func viewStore(t *testing.T, w *Workspace) storeView {
	return storeView{
		Keep: mustView(t, w, "keep"), S: mustView(t, w, "s"),
		HistS: mustHistory(t, w, "s", 100), HistKep: mustHistory(t, w, "keep", 100),
	}
}

func statePath(stateDir, root string) string {
	return filepath.Join(stateDir, wsfolder.WorkspacesDir, wsfolder.FolderKey(root), wsfolder.StateFileName)
}

func logTo(buf *bytes.Buffer) func(*Options) {
	return func(o *Options) { o.Logger = slog.New(slog.NewTextHandler(buf, nil)) }
}

// TestCompactSparseFile: a state file over 4 MiB and more than half free is
// compacted at open; everything reads the same (sessions, history, bucket
// sequences: the next event continues the numbering) and the file shrinks.
func TestCompactSparseFile(t *testing.T) {
	stateDir, root, before := sparseStore(t)

	// What a client sees, read without compacting (a file below the
	// threshold is left alone).
	old := compactMinSize
	compactMinSize = 1 << 40
	r0 := NewRegistry(Options{StateDir: stateDir, Now: newClock().Now})
	w0, err := r0.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	want := viewStore(t, w0)
	w0.Release()
	r0.Close()
	compactMinSize = old

	var logs bytes.Buffer
	w, err := newRegistry(t, stateDir, logTo(&logs)).Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, viewStore(t, w)); diff != "" {
		t.Errorf("state after compaction (-want +got):\n%s", diff)
	}
	fi, err := os.Stat(statePath(stateDir, root))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size()*2 > before {
		t.Errorf("file size after compaction: %d bytes, want well under the %d before", fi.Size(), before)
	}
	if !strings.Contains(logs.String(), "state file compacted") {
		t.Errorf("no compaction logged:\n%s", logs.String())
	}
	next := setTodos(t, w, "s", items("after"))
	if h := mustHistory(t, w, "s", 1); h[0].Seq != want.HistS[0].Seq+1 || next.Revision != want.S.Revision+1 {
		t.Errorf("after compaction: event seq %d, revision %d; want %d, %d", h[0].Seq, next.Revision, want.HistS[0].Seq+1, want.S.Revision+1)
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(statePath(stateDir, root)), compactPrefix+"*")); len(m) > 0 {
		t.Errorf("compaction copies left behind: %v", m)
	}
	if w.Recovered() != "" {
		t.Errorf("Recovered() = %q after a compaction, want empty", w.Recovered())
	}
	w.Release()
	assertNotCompacted(t, stateDir, root) // a compacted file stays as it is
}

// TestCompactThresholds: a small file, or a large one that is mostly data,
// is opened as it is (same inode).
func TestCompactThresholds(t *testing.T) {
	t.Run("below the size threshold", func(t *testing.T) {
		stateDir, root, _ := sparseStore(t)
		old := compactMinSize
		compactMinSize = 1 << 40
		t.Cleanup(func() { compactMinSize = old })
		assertNotCompacted(t, stateDir, root)
	})
	t.Run("mostly data", func(t *testing.T) {
		stateDir, root := t.TempDir(), folder(t)
		r := NewRegistry(Options{StateDir: stateDir, Now: newClock().Now})
		w, err := r.Open(root)
		if err != nil {
			t.Fatal(err)
		}
		long := strings.Repeat("y", 400)
		for i := range 70 { // 70 sessions of 200 long items: live data
			list := make([]string, 200)
			for j := range list {
				list[j] = long
			}
			setTodos(t, w, string(rune('A'+i)), items(list...))
		}
		w.Release()
		r.Close()
		fi, _ := os.Stat(statePath(stateDir, root))
		if fi.Size() <= compactMinSize {
			t.Fatalf("file is %d bytes, the test needs more than %d", fi.Size(), compactMinSize)
		}
		assertNotCompacted(t, stateDir, root)
	})
}

func assertNotCompacted(t *testing.T, stateDir, root string) {
	t.Helper()
	before, err := os.Stat(statePath(stateDir, root))
	if err != nil {
		t.Fatal(err)
	}
	openWorkspace(t, newRegistry(t, stateDir), root)
	after, err := os.Stat(statePath(stateDir, root))
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) {
		t.Errorf("the state file was replaced (%d → %d bytes); want it left as it is", before.Size(), after.Size())
	}
}

// TestCompactLeftoverRemoved: a copy left by a compaction that crashed
// before its rename is removed at the next open; the state is intact.
func TestCompactLeftoverRemoved(t *testing.T) {
	stateDir, root := t.TempDir(), folder(t)
	r := newRegistry(t, stateDir)
	w, err := r.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	setTodos(t, w, "s", items("kept"))
	w.Release()
	leftover := filepath.Join(filepath.Dir(statePath(stateDir, root)), compactPrefix+"12345")
	if err := os.WriteFile(leftover, bytes.Repeat([]byte{0xAB}, 3<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	w = openWorkspace(t, r, root)
	if _, err := os.Stat(leftover); !os.IsNotExist(err) {
		t.Errorf("leftover copy still there (stat: %v)", err)
	}
	if s := mustView(t, w, "s"); len(s.Todos) != 1 || s.Todos[0].Title != "kept" {
		t.Errorf("state after removing a leftover: %+v", s.Todos)
	}
}

// TestCompactFailureKeepsOriginal: when the copy cannot be made, the store
// opens on the original file, unchanged, and the failure is logged.
func TestCompactFailureKeepsOriginal(t *testing.T) {
	stateDir, root, _ := sparseStore(t)
	// A non-empty directory where the copy should go: neither the leftover
	// cleanup nor the copy can remove or create it.
	blocker := filepath.Join(filepath.Dir(statePath(stateDir, root)), compactPrefix+strconv.Itoa(os.Getpid()))
	if err := os.MkdirAll(filepath.Join(blocker, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(statePath(stateDir, root))
	var logs bytes.Buffer
	w := openWorkspace(t, newRegistry(t, stateDir, logTo(&logs)), root)
	after, _ := os.Stat(statePath(stateDir, root))
	if !os.SameFile(before, after) {
		t.Error("the state file was replaced although the copy failed")
	}
	if !strings.Contains(logs.String(), "compacting the state file failed") {
		t.Errorf("failure not logged:\n%s", logs.String())
	}
	if s := mustView(t, w, "s"); len(s.Todos) != 1 || s.Todos[0].Title != "last" {
		t.Errorf("state: %+v", s.Todos)
	}
	setTodos(t, w, "s", items("still writable"))
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// TestHistoryBoundKeepsFileFlat: at the real MaxHistory, a session keeps
// exactly the newest MaxHistory events, and once the bound is reached the
// state file stops growing: the pages of dropped events are reused, so
// such a file never needs compacting.
func TestHistoryBoundKeepsFileFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 12,000 events")
	}
	dir := t.TempDir()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() { // the test is about sizes, not fsync
		if d, err := os.MkdirTemp("/dev/shm", "agentd-history-"); err == nil {
			dir = d
			t.Cleanup(func() { os.RemoveAll(d) })
		}
	}
	w := openWorkspace(t, newRegistry(t, dir), folder(t))
	payload := strings.Repeat("p", 300)
	write := func(n int) {
		for range n {
			if _, err := w.Update("s", func(s *Session) (Change, error) {
				return Change{Kind: "todo.set", Todos: true, Payload: record{payload}}, nil
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	size := func() int64 {
		fi, err := os.Stat(w.path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	write(MaxHistory + 500)
	atBound := size()
	write(1500)
	if got := countHistory(t, w, "s"); got != MaxHistory {
		t.Errorf("stored events: got %d, want %d", got, MaxHistory)
	}
	if h := mustHistory(t, w, "s", 1); h[0].Seq != MaxHistory+2000 {
		t.Errorf("newest seq %d, want %d", h[0].Seq, MaxHistory+2000)
	}
	if after := size(); after > atBound+atBound/10 {
		t.Errorf("file grew from %d to %d bytes past the history bound", atBound, after)
	}
	fileSize, free, err := freeSpace(boltOf(t, w).DB(), w.path)
	if err != nil {
		t.Fatal(err)
	}
	if free*2 > fileSize {
		t.Errorf("%d of %d bytes free at the history bound: the file would be compacted at every open", free, fileSize)
	}
}
