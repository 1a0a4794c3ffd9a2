package taskfile

import (
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/workspace"
)

// Tunables of the watcher, read when a Watcher is made; tests change them.
var (
	// taskFileSettle is how long a task file must stay free of events
	// before it is read (docs/runtime.md §4: debounced, about 100-300 ms).
	taskFileSettle = 150 * time.Millisecond
	// taskFileVerify is how often every referenced task file is verified
	// (the changes events do not show are found within it).
	taskFileVerify = 2 * time.Second
	// racyStamp is how recent a file's change time may be for its stat not
	// to prove that no later write happened: a write within the same tick
	// of the file system's clock (a few ms on Linux, 2 s on FAT) leaves the
	// same stat. A check that saw so recent a change time is followed by a
	// read at the next verification.
	racyStamp = 2 * time.Second
	// newFSWatcher makes the process's fsnotify watcher.
	newFSWatcher = fsnotify.NewWatcher
	// addWatch watches one folder; tests make it fail as the kernel does
	// when its inotify limits are reached.
	addWatch = func(w *fsnotify.Watcher, dir string) error { return w.Add(dir) }
)

// maxSettle bounds how long events that keep coming can postpone the
// reading of a task file.
const maxSettle = 2 * time.Second

// maxLinkHops bounds the symbolic links followed for one task file (the
// kernel's own limit is 40).
const maxLinkHops = 40

// Watcher watches the folders of referenced task files. Lock order:
// target.checkMu, then a session's lock (OnChange calls Update), then
// opMu, then mu. fsnotify is called with mu released, so fsnotify's reader
// (which may block sending to the event loop, a taker of mu) never waits
// for a holder of mu.
type Watcher struct {
	log      *slog.Logger
	identity func() string // workspace.Registry.Identity
	onChange func(w *workspace.Workspace, rel string, info goal.TaskFileInfo)
	unfeed   func()
	settle   time.Duration
	verify   time.Duration
	racy     time.Duration // racyStamp
	newFS    func() (*fsnotify.Watcher, error)
	add      func(*fsnotify.Watcher, string) error

	opMu sync.Mutex // serialises changes of the watched folders with their fsnotify calls

	mu       sync.Mutex
	started  bool
	closed   bool
	fsw      *fsnotify.Watcher // nil when fsnotify could not start: every task file is polled
	fsErr    error             // why fsw is nil
	done     chan struct{}     // closed by stop: ends the event loop
	loopDone chan struct{}     // closed when the event loop has returned
	dirs     map[string]*watchedDir
	targets  map[targetKey]*target
	sessions map[sessionKey]string // the task file (rel) each session references
	checks   sync.WaitGroup        // running checks
}

type targetKey struct {
	ws  *workspace.Workspace
	rel string // slash-separated, relative to the workspace root
}

type sessionKey struct {
	ws      *workspace.Workspace
	session string
}

// watchedDir is one watched folder.
type watchedDir struct {
	refs int    // targets that hold it
	ok   bool   // an fsnotify watch is in place
	id   fileID // the folder the watch was made on (its path named it before the Add); zero if none
	gen  uint64 // bumped when the watch is known lost; an Add begun before does not count
}

// target is one referenced task file of one workspace.
type target struct {
	key targetKey // immutable

	// Guarded by Watcher.mu.
	refs     map[string]goal.TaskFileInfo // session → what its goal records (compared: Exists, SHA256, Size)
	seen     *goal.TaskFileInfo           // what the last check read; nil before the first
	last     *lead                        // where the path led at the last check that read; nil before the first
	racy     bool                         // and its stat cannot rule out a later write (racyStamp)
	dirs     []string                     // folders this target holds a reference on
	names    map[string]bool              // paths whose events concern it
	polling  bool                         // a folder could not be watched: only verifications find changes
	outside  bool                         // a link leads outside the workspace (logged once)
	timer    *time.Timer
	due      bool      // the timer is set and has not fired
	dueSince time.Time // when the pending check was first asked for
	dead     bool      // no longer referenced

	checkMu sync.Mutex // one check of this target at a time
}

// Options configure a Watcher.
type Options struct {
	// Logger receives the watcher's logs; nil discards them.
	Logger *slog.Logger
	// OnChange, if set, is called when the watcher sees that a referenced
	// task file really changed on disk (docs/runtime.md §4): rel is its
	// path as goals record it, info what is there now. It runs on a
	// goroutine of the watcher, or, for the check of the folder's task
	// files that workspace.Registry.Open makes (after OnOpen), inside Open
	// before it returns; always outside any lock or transaction, one call
	// at a time per task file. It may call Update (agentd records the
	// change in every session whose goal references rel). Nil: task files
	// are not watched.
	OnChange func(w *workspace.Workspace, rel string, info goal.TaskFileInfo)
}

// Watch makes the task-file watcher of reg's folders and feeds it reg's
// commits (workspace.Registry.Feed) from the next folder opened on. Stop
// it before closing reg.
func Watch(reg *workspace.Registry, opts Options) *Watcher {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	x := newWatcher(log, reg.Identity, opts.OnChange)
	x.unfeed = reg.Feed(x.fed)
	return x
}

func newWatcher(log *slog.Logger, identity func() string, onChange func(*workspace.Workspace, string, goal.TaskFileInfo)) *Watcher {
	return &Watcher{
		log:      log,
		identity: identity,
		onChange: onChange,
		settle:   taskFileSettle,
		verify:   taskFileVerify,
		racy:     racyStamp,
		newFS:    newFSWatcher,
		add:      addWatch,
		dirs:     map[string]*watchedDir{},
		targets:  map[targetKey]*target{},
		sessions: map[sessionKey]string{},
	}
}

// sameContent says whether two readings of a task file show the same
// content (what goal.UpdateTaskFile compares).
func sameContent(a, b goal.TaskFileInfo) bool {
	return a.Exists == b.Exists && a.SHA256 == b.SHA256 && a.Size == b.Size
}

// fed handles one event of the commit feed.
func (x *Watcher) fed(e workspace.FeedEvent) {
	switch e.Kind {
	case workspace.FeedSession:
		x.watchTaskFile(e.Workspace, e.Session.Name, x.watchedTaskFile(e.Workspace, e.Session.Goal))
	case workspace.FeedOpened:
		x.checkWorkspace(e.Workspace)
	case workspace.FeedClosing:
		x.dropWorkspace(e.Workspace)
	}
}

// watchedTaskFile is the task file this process watches for goal g of ws,
// without its modification time; nil when it watches none. It is the one
// g references (goal.State.ReferencedTaskFile), except that in a team
// folder only the daemon whose agent drives the goal (a live turn of its
// identity) watches and records it, each machine having its own checkout
// (docs/team.md).
func (x *Watcher) watchedTaskFile(ws *workspace.Workspace, g goal.State) *goal.TaskFileInfo {
	tf := g.ReferencedTaskFile()
	if tf == nil {
		return nil
	}
	tf.ModifiedAt = nil
	if !ws.Shared() {
		return tf
	}
	id := x.identity()
	for _, t := range g.Turns {
		if !t.Ended && id != "" && t.Owner == id {
			return tf
		}
	}
	return nil
}

// watchTaskFile records that session of ws references ref (nil: nothing).
// Called for every commit, under the session's lock, and at Open (the
// commit feed). A task
// file not watched yet gets its watches before this returns, so every edit
// made after the goal was created is seen; that costs a few metadata
// system calls (lstat, readlink, inotify_add_watch) on a goal create or
// replace only. The file itself is read later, by a check on its own
// goroutine.
func (x *Watcher) watchTaskFile(ws *workspace.Workspace, session string, ref *goal.TaskFileInfo) {
	if x.onChange == nil { // nobody to tell: watch nothing
		return
	}
	sk := sessionKey{ws, session}
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return
	}
	var drop, fresh *target
	if old, had := x.sessions[sk]; had && (ref == nil || ref.Path != old) {
		delete(x.sessions, sk)
		if t := x.targets[targetKey{ws, old}]; t != nil {
			delete(t.refs, session)
			if len(t.refs) == 0 {
				x.forgetLocked(t)
				drop = t
			}
		}
	}
	if ref != nil {
		if !x.started {
			x.startLocked()
		}
		k := targetKey{ws, ref.Path}
		t := x.targets[k]
		if t == nil {
			t = &target{key: k, refs: map[string]goal.TaskFileInfo{}}
			x.targets[k] = t
			fresh = t
		}
		t.refs[session] = *ref
		x.sessions[sk] = ref.Path
		if t.seen == nil || !sameContent(*t.seen, *ref) {
			x.scheduleLocked(t)
		}
	}
	x.mu.Unlock()
	if drop != nil {
		x.releaseDirs(drop)
	}
	if fresh != nil {
		x.rewatch(fresh, resolveTaskPath(ws.Root(), fresh.key.rel))
	}
}

// dropWorkspace forgets every task file of ws (its store is closing).
func (x *Watcher) dropWorkspace(ws *workspace.Workspace) {
	x.mu.Lock()
	var dropped []*target
	for k, t := range x.targets {
		if k.ws == ws {
			x.forgetLocked(t)
			dropped = append(dropped, t)
		}
	}
	for k := range x.sessions {
		if k.ws == ws {
			delete(x.sessions, k)
		}
	}
	x.mu.Unlock()
	for _, t := range dropped {
		x.releaseDirs(t)
	}
}

// forgetLocked removes t from the targets; its folders are released by
// releaseDirs.
func (x *Watcher) forgetLocked(t *target) {
	t.dead = true
	if t.timer != nil {
		t.timer.Stop()
	}
	delete(x.targets, t.key)
}

// releaseDirs drops the folder references of a forgotten target, removing
// the watches nobody needs any more.
func (x *Watcher) releaseDirs(t *target) {
	x.opMu.Lock()
	defer x.opMu.Unlock()
	x.mu.Lock()
	var remove []string
	for _, d := range t.dirs {
		if x.unrefLocked(d) {
			remove = append(remove, d)
		}
	}
	t.dirs = nil
	fsw := x.fsw
	x.mu.Unlock()
	for _, d := range remove {
		_ = fsw.Remove(d) // already gone with its folder: nothing to do
	}
}

// unrefLocked drops one reference of folder d and says whether its fsnotify
// watch must now be removed.
func (x *Watcher) unrefLocked(d string) bool {
	wd := x.dirs[d]
	if wd == nil {
		return false
	}
	if wd.refs--; wd.refs > 0 {
		return false
	}
	delete(x.dirs, d)
	return wd.ok && x.fsw != nil
}

// startLocked starts fsnotify and the event loop.
func (x *Watcher) startLocked() {
	x.started = true
	fsw, err := x.newFS()
	if err != nil {
		x.fsErr = err
		x.log.Warn("cannot start the task-file watcher (fsnotify); task files are polled instead",
			"every", x.verify, "err", err, "hint", limitHint(err))
	} else {
		x.fsw = fsw
	}
	x.done, x.loopDone = make(chan struct{}), make(chan struct{})
	go x.loop(fsw, x.done, x.loopDone)
}

// Stop ends the watcher: it is fed no more, no check starts any more,
// running checks (and their OnChange calls) are waited for, fsnotify is
// closed. Call it before the registry closes.
func (x *Watcher) Stop() {
	if x.unfeed != nil {
		x.unfeed()
	}
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return
	}
	x.closed = true
	for _, t := range x.targets {
		if t.timer != nil {
			t.timer.Stop()
		}
	}
	started, fsw := x.started, x.fsw
	x.mu.Unlock()
	if !started {
		return
	}
	close(x.done)
	<-x.loopDone
	x.checks.Wait()
	if fsw != nil {
		x.opMu.Lock() // no Add or Remove runs while fsnotify closes
		defer x.opMu.Unlock()
		if err := fsw.Close(); err != nil {
			x.log.Warn("closing the task-file watcher failed", "err", err)
		}
	}
}

// loop hands fsnotify's events and errors to the targets, and starts the
// verifications.
func (x *Watcher) loop(fsw *fsnotify.Watcher, done, loopDone chan struct{}) {
	defer close(loopDone)
	var events chan fsnotify.Event
	var errs chan error
	if fsw != nil {
		events, errs = fsw.Events, fsw.Errors
	}
	tick := time.NewTicker(x.verify)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			x.event(ev)
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			x.lost(err)
		case <-tick.C:
			x.verifyTargets()
		}
	}
}

// event schedules a check of every target the event concerns. A watched
// folder that was removed or renamed has lost its watch.
func (x *Watcher) event(ev fsnotify.Event) {
	name := filepath.Clean(ev.Name)
	x.mu.Lock()
	defer x.mu.Unlock()
	if wd := x.dirs[name]; wd != nil && ev.Has(fsnotify.Remove|fsnotify.Rename) {
		wd.ok = false
		wd.gen++
	}
	for _, t := range x.targets {
		if t.names[name] || slices.Contains(t.dirs, name) {
			x.scheduleLocked(t)
		}
	}
}

// lost handles a watcher error or an event overflow: events may have been
// missed, so every watch is made again and every task file re-read.
func (x *Watcher) lost(err error) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		x.log.Warn("task-file watcher: the kernel's event queue overflowed and events were lost; re-reading every watched task file")
	} else {
		x.log.Warn("task-file watcher error; re-reading every watched task file", "err", err)
	}
	x.rescan()
}

// rescan re-watches every folder and re-reads every task file.
func (x *Watcher) rescan() {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, wd := range x.dirs {
		wd.ok = false // fsnotify's Add of a watched folder only refreshes it
		wd.gen++
	}
	for _, t := range x.targets {
		x.scheduleLocked(t)
	}
}

// verifyTargets starts a verification of every target whose check is not
// pending already (a pending check reads the file anyway).
func (x *Watcher) verifyTargets() {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, t := range x.targets {
		if !t.due {
			go x.run(t, true)
		}
	}
}

// checkWorkspace checks every task file of ws now, in the calling
// goroutine (Open). A pending settle timer of one of them is stopped: this
// check reads what it would have.
func (x *Watcher) checkWorkspace(ws *workspace.Workspace) {
	x.mu.Lock()
	var ts []*target
	for k, t := range x.targets {
		if k.ws != ws {
			continue
		}
		if t.due && t.timer.Stop() {
			t.due = false
		}
		ts = append(ts, t)
	}
	x.mu.Unlock()
	for _, t := range ts {
		x.run(t, false)
	}
}

// scheduleLocked (re)starts t's settle timer. A file that never settles
// is still read once its first pending event is maxSettle old.
func (x *Watcher) scheduleLocked(t *target) {
	if x.closed || t.dead {
		return
	}
	now := time.Now()
	if !t.due {
		t.due, t.dueSince = true, now
	} else if now.Sub(t.dueSince) >= maxSettle {
		return // the pending check comes soon enough
	}
	if t.timer == nil {
		t.timer = time.AfterFunc(x.settle, func() { x.fire(t) })
		return
	}
	t.timer.Reset(x.settle)
}

// fire runs a check of t when its settle timer expires.
func (x *Watcher) fire(t *target) {
	x.mu.Lock()
	t.due = false
	x.mu.Unlock()
	x.run(t, false)
}

// run runs one check of t, or with verify one verification, unless the
// watcher is closed or t forgotten. A verification is skipped while a
// check of t runs.
func (x *Watcher) run(t *target, verify bool) {
	x.mu.Lock()
	if x.closed || t.dead {
		x.mu.Unlock()
		return
	}
	x.checks.Add(1)
	x.mu.Unlock()
	defer x.checks.Done()
	if !verify {
		t.checkMu.Lock()
	} else if !t.checkMu.TryLock() {
		return // the running check resolves and reads the file itself
	}
	defer t.checkMu.Unlock()
	x.check(t, verify)
}

// check resolves t's path again (moving its watches, and making again
// those whose folder the path no longer names), reads the file, and calls
// onChange when the content differs from what a referencing goal
// recorded. With verify, the file is read only when the resolution shows
// it may have changed since the last check. t.checkMu is held.
func (x *Watcher) check(t *target, verify bool) {
	ws, rel := t.key.ws, t.key.rel
	res := resolveTaskPath(ws.Root(), rel)
	x.rewatch(t, res)
	if verify {
		x.mu.Lock()
		same := t.last != nil && *t.last == res.lead && !t.racy
		x.mu.Unlock()
		if same {
			return
		}
	}
	info, err := res.read(rel)

	x.mu.Lock()
	if x.closed || t.dead {
		x.mu.Unlock()
		return
	}
	t.last, t.racy = &res.lead, res.racy(x.racy)
	logOutside := res.outside && !t.outside
	t.outside = res.outside
	if err != nil {
		x.mu.Unlock()
		x.log.Warn("cannot read a task file; it is read again when it changes", "workspace", ws.Root(), "taskFile", rel, "err", err)
		return
	}
	t.seen = &info
	changed := false
	for s, known := range t.refs {
		if !sameContent(known, info) {
			changed = true
			t.refs[s] = info
		}
	}
	x.mu.Unlock()
	if logOutside {
		x.log.Warn("a symbolic link now takes the task file outside the workspace; it is treated as missing", "workspace", ws.Root(), "taskFile", rel)
	}
	if changed && x.onChange != nil {
		x.onChange(ws, rel, info)
	}
}
