package workspace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/agentd/agentd/workspace/boltstore"
	"github.com/agentd/agentd/workspace/wsfolder"
)

func stateDBPath(stateDir, root string) string {
	return filepath.Join(stateDir, wsfolder.WorkspacesDir, wsfolder.FolderKey(root), wsfolder.StateFileName)
}

func TestOnDiskLayout(t *testing.T) {
	stateDir := filepath.Join(t.TempDir(), "state")
	root := folder(t)
	w := openWorkspace(t, newRegistry(t, stateDir), root+"/./sub/..")
	if w.Root() != root {
		t.Errorf("Root: got %q, want %q", w.Root(), root)
	}
	if key := wsfolder.FolderKey(root); len(key) != 32 {
		t.Errorf("FolderKey: got %q, want 32 hex digits", key)
	}
	for _, dir := range []string{stateDir, filepath.Join(stateDir, wsfolder.WorkspacesDir), filepath.Dir(stateDBPath(stateDir, root))} {
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm != 0o700 {
			t.Errorf("mode of %s: got %o, want 700", dir, perm)
		}
	}
	if _, err := os.Stat(stateDBPath(stateDir, root)); err != nil {
		t.Errorf("state file: %v", err)
	}
	dir := filepath.Dir(stateDBPath(stateDir, root))
	var info folderInfo
	readJSON(t, filepath.Join(dir, folderFile), &info)
	if info.Path != root || info.CreatedAt.IsZero() {
		t.Errorf("workspace.json: got %+v, want path %q and a creation time", info, root)
	}
	var owner ownerInfo
	readJSON(t, filepath.Join(dir, ownerFile), &owner)
	if owner.Pid != os.Getpid() || owner.StartedAt.IsZero() {
		t.Errorf("owner.json: got %+v, want pid %d and a start time", owner, os.Getpid())
	}
	if n := schemaOf(t, stateDBPath(stateDir, root), w); n != currentSchema() {
		t.Errorf("schema version: got %d, want %d", n, currentSchema())
	}
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// schemaOf reads the schema version through w's open store, or, when w is
// nil, by opening the file.
func schemaOf(t testing.TB, path string, w *Workspace) uint32 {
	t.Helper()
	db := (*bbolt.DB)(nil)
	if w != nil {
		db = boltOf(t, w).DB()
	} else {
		var err error
		if db, err = bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second}); err != nil {
			t.Fatal(err)
		}
		defer db.Close()
	}
	var v uint32
	if err := db.View(func(tx *bbolt.Tx) (err error) { v, err = readSchema(tx); return err }); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOpenErrors(t *testing.T) {
	tests := []struct {
		name string
		reg  func(t *testing.T) *Registry
		root string
		want string
	}{
		{"relative path", func(t *testing.T) *Registry { return newRegistry(t, t.TempDir()) }, "project", "not absolute"},
		{"no state dir", func(t *testing.T) *Registry { return newRegistry(t, "") }, "/project", "StateDir is empty"},
		{"closed registry", func(t *testing.T) *Registry {
			r := newRegistry(t, t.TempDir())
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			return r
		}, "/project", ErrClosed.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.reg(t).Open(tt.root)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Open(%q): got %v, want an error containing %q", tt.root, err, tt.want)
			}
		})
	}
}

func TestReleaseAndRefCounting(t *testing.T) {
	stateDir, root := t.TempDir(), folder(t)
	r1 := newRegistry(t, stateDir)
	r2 := newRegistry(t, stateDir, func(o *Options) { o.LockTimeout = 100 * time.Millisecond })

	a, err := r1.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r1.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatalf("two Opens of one folder: got different workspaces")
	}
	setTodos(t, a, "s", items("shared"))

	a.Release()
	if got := mustView(t, b, "s"); got.Revision != 1 {
		t.Errorf("View after one of two Releases: got revision %d, want 1", got.Revision)
	}
	if _, err := r2.Open(root); errorCode(err) != CodeLocked {
		t.Fatalf("Open from another registry while referenced: got %v, want %s", err, CodeLocked)
	}

	b.Release()
	if _, err := b.View("s"); !errors.Is(err, ErrClosed) {
		t.Errorf("View after the last Release: got %v, want ErrClosed", err)
	}
	if _, err := b.Update("s", func(*Session) (Change, error) { return Change{Kind: "x"}, nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("Update after the last Release: got %v, want ErrClosed", err)
	}
	c := openWorkspace(t, r2, root) // the lock is free: no wait beyond 100ms
	if got := mustView(t, c, "s"); got.Revision != 1 {
		t.Errorf("View from the other registry: got revision %d, want 1", got.Revision)
	}
	b.Release() // one too many: logged, harmless
}

func TestOpenConcurrentSameFolder(t *testing.T) {
	r := newRegistry(t, t.TempDir())
	root := folder(t)
	const n = 10
	got := make(chan *Workspace, n)
	for range n {
		go func() {
			w, err := r.Open(root)
			if err != nil {
				t.Error(err)
			}
			got <- w
		}()
	}
	first := <-got
	for range n - 1 {
		if w := <-got; w != first {
			t.Errorf("concurrent Opens: got different workspaces")
		}
	}
	for range n {
		first.Release()
	}
	if _, err := first.View("s"); !errors.Is(err, ErrClosed) {
		t.Errorf("View after all Releases: got %v, want ErrClosed", err)
	}
}

func TestOnOpen(t *testing.T) {
	t.Run("runs once per store and can update", func(t *testing.T) {
		calls := 0
		var notices []string
		r := newRegistry(t, t.TempDir(), func(o *Options) {
			o.OnOpen = func(w *Workspace) error {
				calls++
				_, err := w.Update(DefaultSession, func(s *Session) (Change, error) {
					return Change{Kind: "goal.pause", Actor: "runtime", Goal: true}, nil
				})
				return err
			}
		})
		t.Cleanup(r.Subscribe(func(n Notice) { notices = append(notices, string(n.Change.Kind)) }))
		root := folder(t)
		w := openWorkspace(t, r, root)
		openWorkspace(t, r, root)
		if calls != 1 {
			t.Errorf("OnOpen calls: got %d, want 1", calls)
		}
		if diff := cmp.Diff([]string{"goal.pause"}, notices); diff != "" {
			t.Errorf("notices (-want +got):\n%s", diff)
		}
		if got := mustView(t, w, DefaultSession); got.Revision != 1 {
			t.Errorf("revision after OnOpen: got %d, want 1", got.Revision)
		}
	})
	t.Run("an error fails Open and closes the store", func(t *testing.T) {
		stateDir, root := t.TempDir(), folder(t)
		errHook := errors.New("hook failed")
		r := newRegistry(t, stateDir, func(o *Options) { o.OnOpen = func(*Workspace) error { return errHook } })
		if _, err := r.Open(root); !errors.Is(err, errHook) {
			t.Fatalf("Open: got %v, want the hook's error wrapped", err)
		}
		openWorkspace(t, newRegistry(t, stateDir), root) // the lock was released
	})
}

func TestLockedInProcess(t *testing.T) {
	stateDir, root := t.TempDir(), folder(t)
	openWorkspace(t, newRegistry(t, stateDir), root)
	_, err := newRegistry(t, stateDir).Open(root)
	var e *Error
	var h *LockHolder
	if !errors.As(err, &e) || e.ErrorCode() != CodeLocked || !errors.As(err, &h) {
		t.Fatalf("second Open: got %v, want code %s caused by a LockHolder", err, CodeLocked)
	}
	if h.Pid != os.Getpid() || !strings.Contains(e.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Errorf("locked error: got %q (pid %d), want it to name pid %d", e.Error(), h.Pid, os.Getpid())
	}
	if !errors.Is(err, berrors.ErrTimeout) {
		t.Errorf("locked error: got %v, want it to wrap bbolt's ErrTimeout", err)
	}
}

// TestLockedByAnotherProcess runs this test binary as a second process
// that holds the store (TestHelperHoldStore), and opens the same folder.
func TestLockedByAnotherProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	stateDir, root := t.TempDir(), folder(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldStore$", "-test.count=1")
	cmd.Env = append(os.Environ(), "AGENTD_TEST_HOLD_STATE_DIR="+stateDir, "AGENTD_TEST_HOLD_ROOT="+root)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewScanner(stdout)
	for lines.Scan() && lines.Text() != "holding" {
	}
	if lines.Err() != nil {
		t.Fatalf("waiting for the helper: %v", lines.Err())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()

	r := newRegistry(t, stateDir, func(o *Options) {
		o.LockTimeout = 0 // the default, 1s
		o.LockedHint = "start every client with `agentd --remote=auto`"
	})
	start := time.Now()
	_, err = r.Open(root)
	elapsed := time.Since(start)
	var e *Error
	var h *LockHolder
	if !errors.As(err, &e) || e.ErrorCode() != CodeLocked || !errors.As(err, &h) {
		t.Fatalf("Open while another process holds the store: got %v, want code %s caused by a LockHolder", err, CodeLocked)
	}
	pid := cmd.Process.Pid
	if h.Pid != pid || !strings.Contains(err.Error(), "pid "+strconv.Itoa(pid)) || !strings.Contains(err.Error(), "--remote=auto") {
		t.Errorf("locked error: got %q (pid %d), want it to name pid %d and end with the hint, --remote=auto", err, h.Pid, pid)
	}
	if elapsed > 3*time.Second { // docs/protocol.md §1: about 1s
		t.Errorf("Open waited %v for the lock, want about 1s", elapsed)
	}

	_ = stdin.Close() // the helper releases and exits
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	openWorkspace(t, r, root)
}

// TestHelperHoldStore is the second process of TestLockedByAnotherProcess:
// it opens the store, says "holding", and keeps it until stdin closes.
func TestHelperHoldStore(t *testing.T) {
	stateDir := os.Getenv("AGENTD_TEST_HOLD_STATE_DIR")
	if stateDir == "" {
		t.Skip("helper process for TestLockedByAnotherProcess")
	}
	r := NewRegistry(Options{StateDir: stateDir})
	w, err := r.Open(os.Getenv("AGENTD_TEST_HOLD_ROOT"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("holding")
	_, _ = io.Copy(io.Discard, os.Stdin)
	w.Release()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptFileRecovered(t *testing.T) {
	pageSize := os.Getpagesize()
	tests := []struct {
		name    string
		corrupt func(t *testing.T, path string)
	}{
		{"garbage", func(t *testing.T, path string) {
			writeFile(t, path, bytes.Repeat([]byte("this is not a bbolt file\n"), 2000))
		}},
		{"short garbage", func(t *testing.T, path string) {
			writeFile(t, path, []byte("{}"))
		}},
		{"garbage of one and a half pages", func(t *testing.T, path string) {
			writeFile(t, path, bytes.Repeat([]byte{0xAB}, pageSize*3/2))
		}},
		{"truncated to half", func(t *testing.T, path string) {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() < 128<<10 {
				t.Fatalf("precondition: state file is %d bytes, want a file that grew past 128KiB", fi.Size())
			}
			if err := os.Truncate(path, fi.Size()/2); err != nil {
				t.Fatal(err)
			}
		}},
		{"both meta pages fail their checksum", func(t *testing.T, path string) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, page := range []int{0, pageSize} {
				data[page+16+40] ^= 0xFF // meta.pgid: covered by the checksum
			}
			writeFile(t, path, data)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stateDir, root := t.TempDir(), folder(t)
			r := newRegistry(t, stateDir)
			w := openWorkspace(t, r, root)
			for i := range 40 { // grow the file well past bbolt's first 32KiB mapping
				if _, err := w.Update("s", func(s *Session) (Change, error) {
					s.Todos = items(fmt.Sprint(i))
					return Change{Kind: "todo.set", Todos: true, Payload: record{strings.Repeat("p", 8<<10)}}, nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			if r.Close() != nil {
				t.Fatal("close")
			}
			path := stateDBPath(stateDir, root)
			tt.corrupt(t, path)
			damaged, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}

			clock := newClock()
			r2 := newRegistry(t, stateDir, func(o *Options) { o.Now = func() time.Time { return clock.t } })
			w2 := openWorkspace(t, r2, root)
			aside := path + ".corrupt-20250304T050607Z"
			if msg := w2.Recovered(); !strings.Contains(msg, aside) || !strings.Contains(msg, "fresh") {
				t.Errorf("Recovered: got %q, want a message naming %s", msg, aside)
			}
			moved, err := os.ReadFile(aside)
			if err != nil {
				t.Fatalf("moved file: %v", err)
			}
			if !bytes.Equal(moved, damaged) {
				t.Errorf("moved file: got %d bytes, want the %d damaged bytes unchanged", len(moved), len(damaged))
			}
			if got := mustView(t, w2, "s"); got.Revision != 0 || len(got.Todos) != 0 {
				t.Errorf("View after recovery: got revision %d with %d todos, want a fresh session", got.Revision, len(got.Todos))
			}
			if got := setTodos(t, w2, "s", items("again")); got.Revision != 1 {
				t.Errorf("first update after recovery: got revision %d, want 1", got.Revision)
			}
			w2.Release()
			if r2.Close() != nil {
				t.Fatal("close")
			}

			w3 := openWorkspace(t, newRegistry(t, stateDir), root)
			if msg := w3.Recovered(); msg != "" {
				t.Errorf("Recovered on the next open: got %q, want none", msg)
			}
			if got := mustView(t, w3, "s"); got.Revision != 1 {
				t.Errorf("revision on the next open: got %d, want 1", got.Revision)
			}
		})
	}
}

func TestCorruptNameCollision(t *testing.T) {
	stateDir, root := t.TempDir(), folder(t)
	path := stateDBPath(stateDir, root)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	fixed := func(o *Options) { o.Now = func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) } }
	for _, want := range []string{".corrupt-20250102T030405Z", ".corrupt-20250102T030405Z-2"} {
		writeFile(t, path, []byte("garbage"))
		r := newRegistry(t, stateDir, fixed)
		w := openWorkspace(t, r, root)
		if !strings.Contains(w.Recovered(), path+want) {
			t.Errorf("Recovered: got %q, want it to name %s", w.Recovered(), path+want)
		}
		w.Release()
	}
}

func TestEmptyFileIsFresh(t *testing.T) {
	stateDir, root := t.TempDir(), folder(t)
	path := stateDBPath(stateDir, root)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, nil)
	w := openWorkspace(t, newRegistry(t, stateDir), root)
	if msg := w.Recovered(); msg != "" {
		t.Errorf("Recovered for an empty file: got %q, want none", msg)
	}
	setTodos(t, w, "s", items("a"))
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// makeStore creates the state file of root at the given schema version,
// as an agentd of that version left it, with one session record.
func makeStore(t testing.TB, stateDir, root string, version uint32) string {
	t.Helper()
	path := stateDBPath(stateDir, root)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bbolt.Tx) error {
		for v := uint32(0); v < version && int(v) < len(migrations); v++ {
			if err := migrations[v].apply(tx); err != nil {
				return err
			}
		}
		if version == 0 {
			return nil
		}
		rec := `{"v":1,"name":"kept","revision":7,"todos":[{"title":"old","status":"done"}],"todosRevision":6,"todoUsage":{"used":true,"stepsSinceWrite":0,"stepsSinceReminder":0},"goal":{},"updatedAt":"2024-01-01T00:00:00Z"}`
		if err := tx.Bucket(boltstore.BucketSessions).Put([]byte("kept"), []byte(rec)); err != nil {
			return err
		}
		return writeSchema(tx, version)
	})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMigrations(t *testing.T) {
	tests := []struct {
		name      string
		version   uint32
		extra     bool // append a test migration 1→2
		wantKept  bool
		wantExtra int // times the extra migration ran
	}{
		{name: "new empty bbolt file (schema 0)", version: 0},
		{name: "schema 1 opens at current", version: 1, wantKept: true},
		{name: "schema 1 gets the later migrations once", version: 1, extra: true, wantKept: true, wantExtra: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stateDir, root := t.TempDir(), folder(t)
			path := makeStore(t, stateDir, root, tt.version)
			ran := 0
			if tt.extra {
				saved := migrations
				migrations = append(migrations[:len(migrations):len(migrations)], migration{name: "test", apply: func(tx *bbolt.Tx) error {
					ran++
					_, err := tx.CreateBucketIfNotExists([]byte("test"))
					return err
				}})
				t.Cleanup(func() { migrations = saved })
			}
			for range 2 { // the second open finds the current schema: no migration
				r := newRegistry(t, stateDir)
				w := openWorkspace(t, r, root)
				if got := schemaOf(t, path, w); got != currentSchema() {
					t.Errorf("schema after open: got %d, want %d", got, currentSchema())
				}
				if got := mustView(t, w, "kept"); (got.Revision == 7) != tt.wantKept {
					t.Errorf("session written at schema %d: got revision %d, want kept=%v", tt.version, got.Revision, tt.wantKept)
				}
				setTodos(t, w, "new", items("a"))
				w.Release()
				if err := r.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if ran != tt.wantExtra {
				t.Errorf("extra migration ran %d times, want %d", ran, tt.wantExtra)
			}
		})
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	stateDir, root := t.TempDir(), folder(t)
	path := makeStore(t, stateDir, root, currentSchema()+1)
	_, err := newRegistry(t, stateDir).Open(root)
	want := fmt.Sprintf("written by a newer agentd (schema %d > %d)", currentSchema()+1, currentSchema())
	if errorCode(err) != CodeCorrupt || !strings.Contains(err.Error(), want) {
		t.Fatalf("Open of a newer schema: got %v, want code %s and %q", err, CodeCorrupt, want)
	}
	if got := schemaOf(t, path, nil); got != currentSchema()+1 {
		t.Errorf("schema after the refusal: got %d, want %d (untouched)", got, currentSchema()+1)
	}
	if matches, _ := filepath.Glob(path + corruptSuffix + "*"); len(matches) != 0 {
		t.Errorf("files moved aside: got %v, want none", matches)
	}
}

func TestNewerRecordRefused(t *testing.T) {
	stateDir, root := t.TempDir(), folder(t)
	path := makeStore(t, stateDir, root, currentSchema())
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket(boltstore.BucketSessions).Put([]byte("future"), []byte(`{"v":2,"name":"future"}`))
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	w := openWorkspace(t, newRegistry(t, stateDir), root)
	_, err = w.View("future")
	if errorCode(err) != CodeCorrupt || !strings.Contains(err.Error(), "newer agentd") {
		t.Errorf("View of a newer record: got %v, want code %s naming a newer agentd", err, CodeCorrupt)
	}
	if got := mustView(t, w, "kept"); got.Revision != 7 {
		t.Errorf("other sessions: got revision %d, want 7", got.Revision)
	}
}

// TestProtect opens, without the read-only pre-check, a file cut to its two
// meta pages: bbolt panics (or faults) loading the freelist, and Protect
// turns that into an error that counts as corruption.
func TestProtect(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket([]byte("b"))
		if err != nil {
			return err
		}
		return b.Put([]byte("k"), make([]byte, 100<<10))
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, int64(2*os.Getpagesize())); err != nil {
		t.Fatal(err)
	}
	err = boltstore.Protect(func() error {
		db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
		if err == nil {
			_ = db.Close()
		}
		return err
	})
	if err == nil || !isCorruptOpen(err) {
		t.Fatalf("protected open of a file cut to its meta pages: got %v, want an error counted as corruption", err)
	}
}
