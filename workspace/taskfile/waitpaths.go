package taskfile

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/agentd/agentd/goal"
)

// The paths a waiting goal waits on (docs/runtime.md §2.13): a change of
// one wakes it. What a path holds is summed up in a mark (Mark); the
// watch compares marks, so a touch that changes nothing does not wake
// the goal, and a change made while no agentd ran does, at the next start.

// WaitPath checks a wait path against the workspace folder at root, by
// the rules of a task file's path (inside the folder after resolving ".."
// and symbolic links; it need not exist yet), and returns it relative to
// root with forward slashes. Error: goal.task_file_outside or args.invalid,
// naming the path.
func WaitPath(root, path string) (string, error) {
	return pathRel(root, path, "wait path")
}

// Mark sums up what the path rel under root holds now: for a file its
// kind, size and modification time; for a folder those of each of its
// entries (not deeper); "absent" when there is nothing; "outside" when a
// symbolic link made since the wait began takes it out of the workspace
// (WaitPath), whose target is then never read.
func Mark(root, rel string) string {
	if _, err := WaitPath(root, rel); err != nil {
		return "outside"
	}
	p := filepath.Join(root, filepath.FromSlash(rel))
	fi, err := os.Stat(p)
	if err != nil {
		if os.IsNotExist(err) {
			return "absent"
		}
		return "unreadable"
	}
	h := sha256.New()
	fmt.Fprintf(h, "%v %d %d\n", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
	if fi.IsDir() {
		entries, err := os.ReadDir(p)
		if err != nil {
			return "unreadable folder"
		}
		for _, e := range entries {
			info, err := e.Info()
			if err != nil {
				fmt.Fprintf(h, "%s gone\n", e.Name())
				continue
			}
			fmt.Fprintf(h, "%s %v %d %d\n", e.Name(), info.Mode(), info.Size(), info.ModTime().UnixNano())
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Marks is Mark of each of rels.
func Marks(root string, rels []string) map[string]string {
	out := make(map[string]string, len(rels))
	for _, r := range rels {
		out[r] = Mark(root, r)
	}
	return out
}

// waitPoll is how often a path watch compares the marks even without an
// event (events may be lost, or fsnotify may not run); tests change it.
var waitPoll = taskFileVerify

// MaxWaitWatchers is how many fsnotify watchers (each an inotify instance
// on Linux, of which a user has 128 by default, shared with every program
// of theirs) the path watches of waits hold at once, in all: a watch
// started while they are taken compares its marks at each poll only.
// Waits are made by the model (one per session, and its shell reaches
// every session) and arrive from a team's etcd, so without a bound they
// could take every instance of the person's user (docs/runtime.md §2.13).
const MaxWaitWatchers = 8

// waitWatchers holds a token for each fsnotify watcher a wait holds.
var waitWatchers = make(chan struct{}, MaxWaitWatchers)

// WatchPaths watches rels under root until one's mark differs from
// marks (a path marks lacks counts as "absent"), then calls changed once
// with it, on a goroutine of its own. Only the first goal.MaxWaitPaths of
// rels are watched (a record from etcd may hold more). fsnotify events on
// the paths and their folders make it compare at once; it compares every
// few seconds anyway, and only so when fsnotify cannot start or
// MaxWaitWatchers are taken. The marks are compared first thing, so a
// change already made is seen. stop ends the watch without waiting (a
// notice of the store calls it under a session's lock); a compare under
// way may still call changed once.
func WatchPaths(root string, rels []string, marks map[string]string, changed func(rel string)) (stop func()) {
	w := newPathWatch(root, rels, marks, changed)
	go w.loop()
	return func() { w.once.Do(func() { close(w.done) }) }
}

// newPathWatch is WatchPaths' watch, its fsnotify watcher added, not
// started.
func newPathWatch(root string, rels []string, marks map[string]string, changed func(rel string)) *pathWatch {
	rels = rels[:min(len(rels), goal.MaxWaitPaths)]
	w := &pathWatch{root: root, rels: rels, marks: marks, changed: changed, poll: waitPoll, done: make(chan struct{})}
	select {
	case waitWatchers <- struct{}{}:
	default:
		return w // every watcher is taken: poll only
	}
	fsw, err := newFSWatcher()
	if err != nil {
		<-waitWatchers
		return w
	}
	w.fsw = fsw
	for _, r := range rels {
		if _, err := WaitPath(root, r); err != nil {
			continue // a link takes it outside now: its mark says so, nothing outside is watched
		}
		p := filepath.Join(root, filepath.FromSlash(r))
		_ = fsw.Add(filepath.Dir(p)) // a folder not there yet: the poll sees the path appear
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			_ = fsw.Add(p)
		}
	}
	return w
}

type pathWatch struct {
	root    string
	rels    []string
	marks   map[string]string
	changed func(rel string)
	poll    time.Duration     // waitPoll when it was made
	fsw     *fsnotify.Watcher // nil: poll only; else it holds a token of waitWatchers
	done    chan struct{}
	once    sync.Once
}

func (w *pathWatch) loop() {
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w.fsw != nil {
		defer func() {
			w.fsw.Close()
			<-waitWatchers
		}()
		events, errs = w.fsw.Events, w.fsw.Errors
	}
	tick := time.NewTicker(w.poll)
	defer tick.Stop()
	for {
		if rel, ok := w.compare(); ok {
			w.changed(rel)
			return
		}
		select {
		case <-w.done:
			return
		case ev := <-events:
			if !w.concerns(ev.Name) {
				continue
			}
		case <-errs: // events may be lost: compare now
		case <-tick.C:
		}
	}
}

// concerns says whether an event on name may change a watched path.
func (w *pathWatch) concerns(name string) bool {
	for _, r := range w.rels {
		p := filepath.Join(w.root, filepath.FromSlash(r))
		if name == p || strings.HasPrefix(name, p+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// compare finds the first path whose mark changed.
func (w *pathWatch) compare() (string, bool) {
	for _, r := range w.rels {
		was, ok := w.marks[r]
		if !ok {
			was = "absent"
		}
		if Mark(w.root, r) != was {
			return r, true
		}
	}
	return "", false
}
