package taskfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/workspace"
	"github.com/fsnotify/fsnotify"
	"github.com/google/go-cmp/cmp"
)

// Unit tests of the task-file watcher (watch.go) and of reading task files
// (read.go). End-to-end cases over the
// real binary are in tests/taskfile_test.go.

// flush runs the checks whose settle timer is pending now, in the calling
// goroutine, so a test can look at the watches without waiting.
func (x *Watcher) flush() {
	x.mu.Lock()
	var due []*target
	for _, t := range x.targets {
		if t.timer != nil && t.timer.Stop() {
			t.due = false
			due = append(due, t)
		}
	}
	x.mu.Unlock()
	for _, t := range due {
		t.checkMu.Lock()
		x.check(t, false)
		t.checkMu.Unlock()
	}
}

// verifyNow runs a verification of every target in the calling goroutine,
// as the ticker of the event loop does on the watcher's own.
func (x *Watcher) verifyNow() {
	x.mu.Lock()
	ts := slices.Collect(maps.Values(x.targets))
	x.mu.Unlock()
	for _, t := range ts {
		t.checkMu.Lock()
		x.check(t, true)
		t.checkMu.Unlock()
	}
}

// setTunable sets one of the watcher's tunables for the test; set it before
// the fixture is made (a Registry reads them when it is made).
func setTunable[T any](t *testing.T, v *T, to T) {
	old := *v
	*v = to
	t.Cleanup(func() { *v = old })
}

// inotifyWatches counts the kernel's inotify watches of this process (each
// is a line of an inotify descriptor's /proc fdinfo).
func inotifyWatches(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc to count inotify watches: %v", err)
	}
	n := 0
	for _, fd := range fds {
		if link, _ := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); link != "anon_inode:inotify" {
			continue
		}
		info, err := os.ReadFile(filepath.Join("/proc/self/fdinfo", fd.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		n += strings.Count(string(info), "inotify wd:")
	}
	return n
}

// watched returns the watched folders with their reference counts.
func (x *Watcher) watched() map[string]int {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := map[string]int{}
	for d, wd := range x.dirs {
		out[d] = wd.refs
	}
	return out
}

// fsWatchList is what fsnotify itself watches, sorted.
func (x *Watcher) fsWatchList() []string {
	x.mu.Lock()
	fsw := x.fsw
	x.mu.Unlock()
	if fsw == nil {
		return nil
	}
	l := fsw.WatchList()
	slices.Sort(l)
	return l
}

type taskFileCall struct {
	ws   *workspace.Workspace
	rel  string
	info goal.TaskFileInfo
}

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// watchFixture is a registry with a watcher whose OnChange records its calls, and one
// open workspace on a real folder.
type watchFixture struct {
	t        *testing.T
	stateDir string
	root     string // as opened
	real     string // root with links resolved (where events come from)
	reg      *workspace.Registry
	x        *Watcher // fed by reg
	ws       *workspace.Workspace
	calls    chan taskFileCall
	logs     *syncBuffer
	release  func() // releases ws once
}

func newWatchFixture(t *testing.T) *watchFixture {
	t.Helper()
	f := &watchFixture{t: t, stateDir: t.TempDir(), root: filepath.Join(t.TempDir(), "project"),
		calls: make(chan taskFileCall, 100), logs: &syncBuffer{}}
	if err := os.MkdirAll(f.root, 0o755); err != nil {
		t.Fatal(err)
	}
	var err error
	if f.real, err = filepath.EvalSymlinks(f.root); err != nil {
		t.Fatal(err)
	}
	f.open()
	return f
}

// open makes a registry and its watcher on the fixture's state dir and
// opens the folder.
func (f *watchFixture) open() {
	f.t.Helper()
	log := slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f.reg, f.x = newRegistry(f.t, f.stateDir, log, func(w *workspace.Workspace, rel string, info goal.TaskFileInfo) {
		f.calls <- taskFileCall{w, rel, info}
	})
	w, err := f.reg.Open(f.root)
	if err != nil {
		f.t.Fatalf("Open(%q): %v", f.root, err)
	}
	f.ws, f.release = w, sync.OnceFunc(w.Release)
	f.t.Cleanup(f.release)
}

// close stops the watcher and closes the registry, as the daemon does.
func (f *watchFixture) close() {
	f.t.Helper()
	f.x.Stop()
	if err := f.reg.Close(); err != nil {
		f.t.Fatal(err)
	}
}

// newRegistry returns a registry on stateDir and a watcher calling
// onChange (nil: without a callback), stopped and closed at the end of
// the test, the watcher first.
func newRegistry(t *testing.T, stateDir string, log *slog.Logger, onChange func(*workspace.Workspace, string, goal.TaskFileInfo)) (*workspace.Registry, *Watcher) {
	t.Helper()
	reg := workspace.NewRegistry(workspace.Options{StateDir: stateDir, Logger: log, LockTimeout: 200 * time.Millisecond})
	t.Cleanup(func() {
		if err := reg.Close(); err != nil {
			t.Errorf("Registry.Close: %v", err)
		}
	})
	x := Watch(reg, Options{Logger: log, OnChange: onChange})
	t.Cleanup(x.Stop)
	return reg, x
}

// openWorkspace opens root in r and releases it at the end of the test.
func openWorkspace(t *testing.T, r *workspace.Registry, root string) *workspace.Workspace {
	t.Helper()
	w, err := r.Open(root)
	if err != nil {
		t.Fatalf("Open(%q): %v", root, err)
	}
	t.Cleanup(w.Release)
	return w
}

// errorCode is the code of a coded error, "" for another.
func errorCode(err error) string {
	var c interface{ ErrorCode() string }
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	return ""
}

func (f *watchFixture) path(rel string) string { return filepath.Join(f.root, filepath.FromSlash(rel)) }

func (f *watchFixture) write(rel, content string) {
	f.t.Helper()
	p := f.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// createGoal gives session a new goal whose task file is rel.
func (f *watchFixture) createGoal(session, rel string) {
	f.t.Helper()
	info, err := Read(f.ws.Root(), rel)
	if err != nil {
		f.t.Fatalf("TaskFile(%q): %v", rel, err)
	}
	_, err = f.ws.Update(session, func(s *workspace.Session) (workspace.Change, error) {
		if _, err := s.Goal.Create(goal.CreateParams{Objective: "follow " + rel, TaskFile: &info, Replace: true}, goal.Instant{Wall: time.Now()}); err != nil {
			return workspace.Change{}, err
		}
		return workspace.Change{Kind: "goal.create", Actor: "user", Goal: true}, nil
	})
	if err != nil {
		f.t.Fatalf("creating the goal of %q: %v", session, err)
	}
}

func (f *watchFixture) cancelGoal(session string) {
	f.t.Helper()
	_, err := f.ws.Update(session, func(s *workspace.Session) (workspace.Change, error) {
		if _, err := s.Goal.Cancel(goal.Instant{Wall: time.Now()}); err != nil {
			return workspace.Change{}, err
		}
		return workspace.Change{Kind: "goal.cancel", Actor: "user", Goal: true}, nil
	})
	if err != nil {
		f.t.Fatalf("cancelling the goal of %q: %v", session, err)
	}
}

// await waits for the next OnChange call and checks it reports rel with
// content (nil content: missing).
func (f *watchFixture) await(rel string, content *string) taskFileCall {
	f.t.Helper()
	select {
	case c := <-f.calls:
		f.checkCall(c, rel, content)
		return c
	case <-time.After(30 * time.Second):
		f.t.Fatalf("no OnChange call for %q within 30s; logs:\n%s", rel, f.logs.String())
		return taskFileCall{}
	}
}

// called checks that an OnChange call reporting rel with content (nil:
// missing) was made already: it is queued now, without waiting.
func (f *watchFixture) called(rel string, content *string) {
	f.t.Helper()
	select {
	case c := <-f.calls:
		f.checkCall(c, rel, content)
	default:
		f.t.Fatalf("OnChange was not called for %q; logs:\n%s", rel, f.logs.String())
	}
}

func (f *watchFixture) checkCall(c taskFileCall, rel string, content *string) {
	f.t.Helper()
	want := goal.TaskFileInfo{Path: rel}
	if content != nil {
		want.Exists, want.SHA256, want.Size = true, sha(*content), int64(len(*content))
	}
	got := c.info
	got.ModifiedAt = nil
	if diff := cmp.Diff(want, got); c.rel != rel || diff != "" {
		f.t.Fatalf("OnChange(%q) got %+v, want %q with (-want +got):\n%s", c.rel, c.info, rel, diff)
	}
	if c.ws != f.ws {
		f.t.Fatalf("OnChange for workspace %s, want %s", c.ws.Root(), f.ws.Root())
	}
}

// noCall checks that no OnChange call is queued (after a flush, whose
// checks call it synchronously).
func (f *watchFixture) noCall() {
	f.t.Helper()
	select {
	case c := <-f.calls:
		f.t.Fatalf("unexpected OnChange(%q, %+v)", c.rel, c.info)
	default:
	}
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func ptr(s string) *string { return &s }

// waitFor waits until cond holds (a condition the watcher reaches on its
// own goroutines); it fails the test after 10s.
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

// TestWatchOneWatchPerFolder: two goals in two sessions referencing files
// in one folder take one watch, released with the last reference.
func TestWatchOneWatchPerFolder(t *testing.T) {
	f := newWatchFixture(t)
	f.write("docs/a.md", "a")
	f.write("docs/b.md", "b")
	docs := filepath.Join(f.real, "docs")

	f.createGoal("s1", "docs/a.md")
	f.createGoal("s2", "docs/b.md")
	f.x.flush()
	f.noCall()
	if diff := cmp.Diff(map[string]int{docs: 2}, f.x.watched()); diff != "" {
		t.Fatalf("watched folders (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{docs}, f.x.fsWatchList()); diff != "" {
		t.Fatalf("fsnotify watch list (-want +got):\n%s", diff)
	}

	// Replacing a goal by one on the same file keeps the reference.
	f.createGoal("s2", "docs/b.md")
	f.cancelGoal("s1")
	f.x.flush()
	if diff := cmp.Diff(map[string]int{docs: 1}, f.x.watched()); diff != "" {
		t.Fatalf("after one cancel, watched folders (-want +got):\n%s", diff)
	}
	f.cancelGoal("s2")
	if got := f.x.watched(); len(got) != 0 {
		t.Fatalf("after the last cancel, watched folders = %v, want none", got)
	}
	if got := f.x.fsWatchList(); len(got) != 0 {
		t.Fatalf("after the last cancel, fsnotify still watches %v", got)
	}
}

// TestWatchCompleteGoalReleases: a complete goal no longer references its
// task file.
func TestWatchCompleteGoalReleases(t *testing.T) {
	f := newWatchFixture(t)
	f.write("t.md", "x")
	f.createGoal("s", "t.md")
	f.x.flush()
	if len(f.x.watched()) != 1 {
		t.Fatalf("watched = %v, want the root", f.x.watched())
	}
	call, err := goal.NewCall(goal.UpdateGoalTool, []byte(`{"status":"complete"}`), goal.MainAgent)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.ws.Update("s", func(s *workspace.Session) (workspace.Change, error) {
		res, cs := s.Goal.CallTool(goal.ToolCall{Call: call}, goal.Instant{Wall: time.Now()})
		if res.IsError {
			return workspace.Change{}, errors.New(res.Output)
		}
		return workspace.Change{Kind: cs[len(cs)-1].EventKind(), Actor: "model", Goal: true}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.x.watched(); len(got) != 0 {
		t.Fatalf("after complete, watched = %v, want none", got)
	}
}

// TestWatchReportsRealChangesOnly: a write is reported once with its hash;
// a save without change is not reported.
func TestWatchReportsRealChangesOnly(t *testing.T) {
	f := newWatchFixture(t)
	f.write("TASKS.md", "one")
	f.createGoal("default", "TASKS.md")
	f.x.flush()
	f.noCall() // the first check finds what the goal recorded

	f.write("TASKS.md", "two")
	f.await("TASKS.md", ptr("two"))

	// Same bytes, new modification time: nothing; the fence is reported next.
	content := "two"
	for attempt := 1; ; attempt++ {
		start := time.Now()
		f.write("TASKS.md", content) // truncates, then writes the same bytes
		later := time.Now().Add(time.Hour)
		if err := os.Chtimes(f.path("TASKS.md"), later, later); err != nil {
			t.Fatal(err)
		}
		f.write("other.md", "not the task file")
		fence := fmt.Sprintf("fence %d", attempt)
		if time.Since(start) >= 100*time.Millisecond && attempt < 5 {
			// Stalled longer than the settle time: not one save; again.
			f.write("TASKS.md", fence)
			f.awaitContent("TASKS.md", fence)
			content = fence
			continue
		}
		f.write("TASKS.md", fence)
		f.await("TASKS.md", &fence)
		f.noCall()
		return
	}
}

// TestWatchBurstSettles: 50 writes in about 100 ms give one report, of the
// last content.
func TestWatchBurstSettles(t *testing.T) {
	f := newWatchFixture(t)
	f.write("TASKS.md", "start")
	f.createGoal("default", "TASKS.md")
	f.x.flush()
	for attempt := 1; ; attempt++ {
		start := time.Now()
		var stall time.Duration // the longest pause between two writes
		last := start
		for i := range 50 {
			time.Sleep(time.Until(start.Add(time.Duration(i) * 2 * time.Millisecond))) // the burst's pace, not an assertion
			t0 := time.Now()
			f.write("TASKS.md", fmt.Sprintf("burst %d write %d", attempt, i))
			t1 := time.Now()
			stall = max(stall, t0.Sub(last), t1.Sub(t0))
			last = t1
		}
		if stall >= 100*time.Millisecond && attempt < 5 {
			// The machine stalled the burst longer than the settle time:
			// drain what it caused and write it again.
			f.write("TASKS.md", fmt.Sprintf("fence %d", attempt))
			f.awaitContent("TASKS.md", fmt.Sprintf("fence %d", attempt))
			continue
		}
		f.await("TASKS.md", ptr(fmt.Sprintf("burst %d write 49", attempt)))
		f.write("TASKS.md", "fence")
		f.await("TASKS.md", ptr("fence"))
		return
	}
}

// awaitContent skips OnChange calls until one reports content.
func (f *watchFixture) awaitContent(rel, content string) {
	f.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case c := <-f.calls:
			if c.rel == rel && c.info.SHA256 == sha(content) {
				return
			}
		case <-deadline:
			f.t.Fatalf("no OnChange call with %q within 30s", content)
		}
	}
}

// TestWatchFolderCreatedLater: the watch starts on the nearest existing
// folder and moves down as folders appear, and back up when they go.
func TestWatchFolderCreatedLater(t *testing.T) {
	f := newWatchFixture(t)
	f.createGoal("default", "later/dir/task.md")
	f.x.flush()
	f.noCall()
	if diff := cmp.Diff(map[string]int{f.real: 1}, f.x.watched()); diff != "" {
		t.Fatalf("watched before the folder exists (-want +got):\n%s", diff)
	}

	if err := os.Mkdir(f.path("later"), 0o755); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the watch to move to later/", func() bool {
		_, ok := f.x.watched()[filepath.Join(f.real, "later")]
		return ok
	})
	if err := os.Mkdir(f.path("later/dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.write("later/dir/task.md", "now here")
	f.await("later/dir/task.md", ptr("now here"))
	if diff := cmp.Diff(map[string]int{filepath.Join(f.real, "later", "dir"): 1}, f.x.watched()); diff != "" {
		t.Fatalf("watched once the file exists (-want +got):\n%s", diff)
	}

	if err := os.RemoveAll(f.path("later")); err != nil {
		t.Fatal(err)
	}
	f.await("later/dir/task.md", nil)
	if diff := cmp.Diff(map[string]int{f.real: 1}, f.x.watched()); diff != "" {
		t.Fatalf("watched after the folders went (-want +got):\n%s", diff)
	}
	f.write("later/dir/task.md", "back")
	f.await("later/dir/task.md", ptr("back"))
}

// TestWatchSymlinkRepointed: both the link's folder and the target's
// folder are watched; re-pointing the link moves the target watch.
func TestWatchSymlinkRepointed(t *testing.T) {
	f := newWatchFixture(t)
	f.write("a/t.md", "A")
	f.write("b/t.md", "B")
	if err := os.Symlink("a/t.md", f.path("task.md")); err != nil {
		t.Fatal(err)
	}
	f.createGoal("default", "task.md")
	f.x.flush()
	f.noCall()
	if diff := cmp.Diff(map[string]int{f.real: 1, filepath.Join(f.real, "a"): 1}, f.x.watched()); diff != "" {
		t.Fatalf("watched (-want +got):\n%s", diff)
	}

	f.write("a/t.md", "A2")
	f.await("task.md", ptr("A2"))

	// Re-point atomically, as ln -sfn does.
	if err := os.Symlink("b/t.md", f.path("task.md.new")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(f.path("task.md.new"), f.path("task.md")); err != nil {
		t.Fatal(err)
	}
	f.await("task.md", ptr("B"))
	if diff := cmp.Diff(map[string]int{f.real: 1, filepath.Join(f.real, "b"): 1}, f.x.watched()); diff != "" {
		t.Fatalf("watched after re-pointing (-want +got):\n%s", diff)
	}
	f.write("a/t.md", "old target: not reported")
	f.write("b/t.md", "B2")
	f.await("task.md", ptr("B2"))
	f.noCall()
}

// TestWatchErrorRescans: after a watcher error or an event overflow every
// task file is re-read (a change whose events were lost is reported) and
// the watches are made again.
func TestWatchErrorRescans(t *testing.T) {
	for _, tc := range []struct {
		name, log string
		err       error
	}{
		{"overflow", "overflowed", fsnotify.ErrEventOverflow},
		{"error", "task-file watcher error", errors.New("read failed")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newWatchFixture(t)
			f.write("TASKS.md", "one")
			f.createGoal("default", "TASKS.md")
			f.x.flush()
			x := f.x

			// Lose the events: drop the kernel watch behind the watcher's back.
			if err := x.fsw.Remove(f.real); err != nil {
				t.Fatal(err)
			}
			f.write("TASKS.md", "changed unseen")
			x.fsw.Errors <- tc.err
			f.await("TASKS.md", ptr("changed unseen"))
			if !strings.Contains(f.logs.String(), tc.log) {
				t.Errorf("logs do not mention %q:\n%s", tc.log, f.logs.String())
			}
			// The rescan watched the folder again.
			f.write("TASKS.md", "seen again")
			f.await("TASKS.md", ptr("seen again"))
		})
	}
}

// TestWatchPollingFallback: when a folder cannot be watched (inotify
// limits), a clear warning is logged and the task file is polled; once a
// watch can be made again, polling stops.
func TestWatchPollingFallback(t *testing.T) {
	var failing atomic.Bool
	failing.Store(true)
	setTunable(t, &addWatch, func(w *fsnotify.Watcher, dir string) error {
		if failing.Load() {
			return fmt.Errorf("inotify_add_watch %s: %w", dir, syscall.ENOSPC)
		}
		return w.Add(dir)
	})
	setTunable(t, &taskFileVerify, 50*time.Millisecond)

	f := newWatchFixture(t)
	f.write("TASKS.md", "one")
	f.createGoal("default", "TASKS.md")
	f.x.flush()
	logs := f.logs.String()
	for _, want := range []string{"level=WARN", "polling the task file instead", "max_user_watches"} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs do not contain %q:\n%s", want, logs)
		}
	}
	if got := f.x.fsWatchList(); len(got) != 0 {
		t.Fatalf("fsnotify watches %v, want nothing", got)
	}

	f.write("TASKS.md", "polled")
	f.awaitContent("TASKS.md", "polled") // a poll may see the write half done first
	if n := strings.Count(f.logs.String(), "polling the task file instead"); n != 1 {
		t.Errorf("the polling warning was logged %d times, want once", n)
	}

	failing.Store(false)
	waitFor(t, "the folder to be watched again", func() bool {
		return strings.Contains(f.logs.String(), "watched again")
	})
	if diff := cmp.Diff([]string{f.real}, f.x.fsWatchList()); diff != "" {
		t.Fatalf("fsnotify watch list (-want +got):\n%s", diff)
	}
	f.write("TASKS.md", "watched")
	f.awaitContent("TASKS.md", "watched")
}

// TestWatchNoFSNotify: when fsnotify cannot start at all, every task file
// is polled.
func TestWatchNoFSNotify(t *testing.T) {
	setTunable(t, &newFSWatcher, func() (*fsnotify.Watcher, error) {
		return nil, fmt.Errorf("inotify_init1: %w", syscall.EMFILE)
	})
	setTunable(t, &taskFileVerify, 50*time.Millisecond)

	f := newWatchFixture(t)
	f.write("TASKS.md", "one")
	f.createGoal("default", "TASKS.md")
	f.write("TASKS.md", "polled")
	f.awaitContent("TASKS.md", "polled") // a poll may see the write half done first
	if logs := f.logs.String(); !strings.Contains(logs, "cannot start the task-file watcher") || !strings.Contains(logs, "max_user_instances") {
		t.Errorf("logs do not explain the fallback:\n%s", logs)
	}
}

// TestWatchChangeWhileClosed: a change made while no registry had the
// folder open, or after its last Release, is reported before Open returns
// (so before anything reads the state), once; an unchanged file is not
// reported.
func TestWatchChangeWhileClosed(t *testing.T) {
	f := newWatchFixture(t)
	f.write("TASKS.md", "before")
	f.write("same.md", "unchanged")
	f.createGoal("default", "TASKS.md")
	f.createGoal("other", "same.md")
	f.x.flush()
	f.close()

	f.write("TASKS.md", "while down")
	f.open()
	f.called("TASKS.md", ptr("while down"))
	f.x.flush() // the settle timers of the open were stopped: nothing to run
	f.noCall()

	// The same when the last Release closed the folder and it is opened again.
	f.release()
	f.write("TASKS.md", "while released")
	f.ws = openWorkspace(t, f.reg, f.root)
	f.called("TASKS.md", ptr("while released"))
}

// TestWatchVerifyFindsLostEvents: a change whose events never came is
// found by the verification; it reads the file only when the file's stat
// changed (or was too recent to be trusted), and reports only a real
// change.
func TestWatchVerifyFindsLostEvents(t *testing.T) {
	setTunable(t, &taskFileVerify, time.Hour) // the test runs the verifications
	f := newWatchFixture(t)
	x := f.x
	f.write("TASKS.md", "one")
	f.createGoal("default", "TASKS.md")
	x.flush()
	tg := x.targets[targetKey{f.ws, "TASKS.md"}]
	seen := func() *goal.TaskFileInfo {
		x.mu.Lock()
		defer x.mu.Unlock()
		return tg.seen
	}

	// The file was written just now (within the racy window: an hour here,
	// so that a slow machine does not matter): its stat proves nothing yet,
	// so a verification reads it, and finds no change.
	x.racy = time.Hour
	before := seen()
	x.verifyNow()
	f.noCall()
	if seen() == before {
		t.Fatal("a verification right after a write did not read the file")
	}
	// An older stat is trusted: nothing is read while it stays the same.
	x.racy = 0
	x.verifyNow() // records a stat it trusts
	before = seen()
	x.verifyNow()
	if seen() != before {
		t.Fatal("a verification read a file whose stat had not changed")
	}

	// Lose the events: drop the kernel watch behind the watcher's back.
	if err := x.fsw.Remove(f.real); err != nil {
		t.Fatal(err)
	}
	f.write("TASKS.md", "two, unseen")
	x.verifyNow()
	f.called("TASKS.md", ptr("two, unseen"))
	// A new modification time and the same bytes: read, not reported.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(f.path("TASKS.md"), later, later); err != nil {
		t.Fatal(err)
	}
	before = seen()
	x.verifyNow()
	if seen() == before {
		t.Fatal("a verification did not read a file whose stat changed")
	}
	f.noCall()
}

// TestWatchVerifyOnItsOwn: the watcher's own ticker runs the verifications.
func TestWatchVerifyOnItsOwn(t *testing.T) {
	setTunable(t, &taskFileVerify, 50*time.Millisecond)
	f := newWatchFixture(t)
	f.write("TASKS.md", "one")
	f.createGoal("default", "TASKS.md")
	f.x.flush()
	if err := f.x.fsw.Remove(f.real); err != nil {
		t.Fatal(err)
	}
	f.write("TASKS.md", "two, unseen")
	f.awaitContent("TASKS.md", "two, unseen")
}

// TestWatchAncestorRenamed: when an ancestor of the watched folder is
// renamed and a new tree put in its place, the verification reports the
// new file and moves the watch to the new folder (removing the old
// kernel watch): from then on edits there are events, and edits of the
// moved file are not the task file.
func TestWatchAncestorRenamed(t *testing.T) {
	setTunable(t, &taskFileVerify, time.Hour) // only events and the test's verifications
	f := newWatchFixture(t)
	x := f.x
	f.write("plan/docs/TASKS.md", "old tree")
	f.createGoal("default", "plan/docs/TASKS.md")
	x.flush()
	baseline := inotifyWatches(t)

	if err := os.Rename(f.path("plan"), f.path("plan-old")); err != nil {
		t.Fatal(err)
	}
	f.write("plan/docs/TASKS.md", "new tree")
	x.flush() // whatever the old watch still reports
	x.verifyNow()
	f.called("plan/docs/TASKS.md", ptr("new tree"))
	if diff := cmp.Diff(map[string]int{filepath.Join(f.real, "plan", "docs"): 1}, x.watched()); diff != "" {
		t.Fatalf("watched (-want +got):\n%s", diff)
	}
	if n := inotifyWatches(t); n != baseline {
		t.Fatalf("%d kernel watches after moving the watch, want %d: the old one was not removed", n, baseline)
	}

	f.write("plan/docs/TASKS.md", "edited in the new tree")
	f.await("plan/docs/TASKS.md", ptr("edited in the new tree"))
	f.write("plan-old/docs/TASKS.md", "the moved file is not the task file")
	f.write("plan/docs/TASKS.md", "fence")
	f.await("plan/docs/TASKS.md", ptr("fence"))
	x.flush()
	f.noCall()
}

// TestWatchReleaseAndClose: the last Release drops the folder's watches;
// Close stops the watcher, after which nothing is reported.
func TestWatchReleaseAndClose(t *testing.T) {
	f := newWatchFixture(t)
	f.write("TASKS.md", "one")
	f.createGoal("default", "TASKS.md")
	f.x.flush()

	w2 := openWorkspace(t, f.reg, f.root) // a second reference
	w2.Release()
	if len(f.x.watched()) != 1 {
		t.Fatalf("a Release that is not the last dropped the watch")
	}
	f.release()
	if got := f.x.watched(); len(got) != 0 {
		t.Fatalf("after the last Release, watched = %v", got)
	}
	openWorkspace(t, f.reg, f.root) // open again: watched again
	f.x.flush()
	if len(f.x.watched()) != 1 {
		t.Fatalf("after reopening, watched = %v", f.x.watched())
	}

	f.close()
	select {
	case <-f.x.loopDone:
	default:
		t.Fatal("the event loop still runs after Close")
	}
	f.write("TASKS.md", "after close")
	f.noCall()
}

// TestWatchNeedsCallback: without OnChange nothing is watched (one-shot
// commands).
func TestWatchNeedsCallback(t *testing.T) {
	reg, x := newRegistry(t, t.TempDir(), nil, nil)
	root := filepath.Join(t.TempDir(), "project")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	w := openWorkspace(t, reg, root)
	info, err := Read(w.Root(), "TASKS.md")
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Update("s", func(s *workspace.Session) (workspace.Change, error) {
		_, err := s.Goal.Create(goal.CreateParams{Objective: "o", TaskFile: &info}, goal.Instant{Wall: time.Now()})
		return workspace.Change{Kind: "goal.create", Actor: "user", Goal: true}, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if x.started {
		t.Fatal("the watcher started without OnChange")
	}
}
