package taskfile

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentd/agentd/goal"
)

// TestWaitPathMarkStaysInside: a wait path is checked when the wait
// begins (docs/runtime.md §2.13), and a folder on it that becomes a link
// out of the workspace later is not followed: its mark is "outside", and
// the file outside is never read, so its changes cannot wake the goal.
func TestWaitPathMarkStaysInside(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	for _, bad := range []string{"../x", filepath.Join(elsewhere, "out.log"), ""} {
		if _, err := WaitPath(root, bad); err == nil {
			t.Errorf("WaitPath(%q) accepted", bad)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	rel, err := WaitPath(root, "build/out.log")
	if err != nil || rel != "build/out.log" {
		t.Fatalf("WaitPath: %q, %v", rel, err)
	}
	if m := Mark(root, rel); m != "absent" {
		t.Fatalf("mark before the file exists: %q", m)
	}
	secret := filepath.Join(elsewhere, "out.log")
	if err := os.WriteFile(secret, []byte("a"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "build")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(root, "build")); err != nil {
		t.Fatal(err)
	}
	before := Mark(root, rel)
	if err := os.WriteFile(secret, []byte("a longer text"), 0o600); err != nil {
		t.Fatal(err)
	}
	if after := Mark(root, rel); before != "outside" || after != "outside" {
		t.Errorf("marks through a link out of the workspace: %q, then %q; want outside both times", before, after)
	}
}

// inotifyInstances counts this process's inotify descriptors (one per
// fsnotify watcher); -1 where /proc does not show them.
func inotifyInstances() int {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	n := 0
	for _, fd := range fds {
		if link, _ := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); link == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// TestManyWaitsHoldFewWatchers: anyone who can make goals wait (the model,
// a session at a time through its shell: `agentd goal wait --paths` acts
// as the model; a teammate's etcd write of wait records) can make many
// waits at once, and a wait record from etcd can name any number of
// paths. Each wait watch held an fsnotify watcher of its own, an inotify
// instance, of which a user has 128 on Linux by default, shared with every
// program of theirs (the person's editor among them): 200 waiting
// sessions took them all. The waits hold at most MaxWaitWatchers at once,
// the rest compare at each poll, so each still wakes; and a watch looks at
// no more than goal.MaxWaitPaths paths (docs/runtime.md §2.13).
func TestManyWaitsHoldFewWatchers(t *testing.T) {
	before := inotifyInstances()
	if before < 0 {
		t.Skip("no /proc to count inotify instances")
	}
	setTunable(t, &waitPoll, 20*time.Millisecond)
	root := t.TempDir()
	const waits = 200
	woke := make(chan string, waits)
	var stops []func()
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()
	for i := range waits {
		rel := fmt.Sprintf("d%d/out.log", i)
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		stops = append(stops, WatchPaths(root, []string{rel}, map[string]string{rel: "absent"}, func(rel string) { woke <- rel }))
	}
	if n := inotifyInstances() - before; n > MaxWaitWatchers {
		t.Fatalf("%d waits hold %d inotify instances; want at most %d", waits, n, MaxWaitWatchers)
	}
	last := fmt.Sprintf("d%d/out.log", waits-1)
	if err := os.WriteFile(filepath.Join(root, last), []byte("done"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := <-woke; got != last {
		t.Fatalf("woke by %q; want %q, the wait beyond the watchers", got, last)
	}

	many := make([]string, goal.MaxWaitPaths+10)
	for i := range many {
		many[i] = fmt.Sprintf("p%d", i)
	}
	w := newPathWatch(root, many, nil, func(string) {})
	close(w.done)
	w.loop() // returns at once, giving back the watcher it may hold
	if len(w.rels) != goal.MaxWaitPaths {
		t.Fatalf("a wait of %d paths watches %d; want %d", len(many), len(w.rels), goal.MaxWaitPaths)
	}
}
