package taskfile

// The task-file watcher (docs/runtime.md §4; docs/task-files.md).
//
// One watcher per Registry, so one per process. It is started by the first
// task file that needs watching and stopped by Registry.Close. What it
// watches comes from the stored sessions: Open registers the task file of
// every current goal (after OnOpen's recovery), and every committed Update
// registers its session's again, so the set follows creates, replaces and
// cancels; a newly referenced file is watched before that Update returns.
// A goal references its task file until it is complete
// (goal.State.ReferencedTaskFile). Without Options.OnTaskFile nothing is
// watched (one-shot shell commands).
//
// It watches folders, never files: for each task file, the folder that
// holds it, or, while that folder does not exist yet, its nearest existing
// ancestor inside the workspace (the watch moves down as folders appear);
// for a path that goes through symbolic links, the folder of each link too,
// so a re-pointed link is seen. Folders are reference-counted across task
// files, sessions and workspaces: two task files in one folder take one
// watch, removed with the last reference.
//
// An event that concerns a task file (its path, a folder or link on the
// way to it, or the watched folder itself) (re)starts that file's settle
// timer; when no such event came for taskFileSettle (150 ms; events that
// never stop postpone it by at most maxSettle), the path is resolved again
// (moving the watches), the file is read and its sha256, size and
// existence compared with what every referencing goal recorded. Only a
// real difference calls Options.OnTaskFile, outside any lock or
// transaction. A watcher error or an event overflow re-reads every watched
// task file.
//
// Events do not tell everything: inotify sees no file system mounted over
// a watched folder, a watch stays on its folder when an ancestor is renamed
// (the path then names another folder, or nothing), and some file systems
// send no events at all. So every taskFileVerify (2 s) each referenced task
// file is verified: its path is resolved again (an lstat per name, nothing
// read), a watched folder that the path no longer names (another device or
// inode) is watched again under its path, and the file is read and hashed
// only when where the path leads or the file's stat (device, inode, size,
// modification and change time) differs from the last check's, or that
// stat was too recent to tell a later write from (racyStamp). A folder that
// cannot be watched (inotify limits: ENOSPC, EMFILE...) is logged once at
// Warn; its task files then rely on the verification alone, which also
// tries to watch the folder again.
//
// When Open opens a folder, its task files are checked before Open
// returns, so a change made while no process watched them is recorded
// before the first command on the folder reads its state.

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/agentd/agentd/goal"
)

// Tunables of the watcher, read when a Registry is made; tests change them.
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

// watcher watches the folders of referenced task files. Lock order:
// target.checkMu, then a session's lock (OnTaskFile calls Update), then
// opMu, then mu. fsnotify is called with mu released, so fsnotify's reader
// (which may block sending to the event loop, a taker of mu) never waits
// for a holder of mu.
type watcher struct {
	log      *slog.Logger
	onChange func(w *Workspace, rel string, info goal.TaskFileInfo)
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
	ws  *Workspace
	rel string // slash-separated, relative to the workspace root
}

type sessionKey struct {
	ws      *Workspace
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

	// Guarded by watcher.mu.
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

func newWatcher(log *slog.Logger, onChange func(*Workspace, string, goal.TaskFileInfo)) *watcher {
	return &watcher{
		log:      log,
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

// referencedTaskFile is the task file a session's goal references
// (goal.State.ReferencedTaskFile), without its modification time, for
// watching; nil when it references none.
func referencedTaskFile(g goal.State) *goal.TaskFileInfo {
	tf := g.ReferencedTaskFile()
	if tf != nil {
		tf.ModifiedAt = nil
	}
	return tf
}

// watchTaskFile records that session of ws references ref (nil: nothing).
// Called after every commit, under the session's lock, and at Open. A task
// file not watched yet gets its watches before this returns, so every edit
// made after the goal was created is seen; that costs a few metadata
// system calls (lstat, readlink, inotify_add_watch) on a goal create or
// replace only. The file itself is read later, by a check on its own
// goroutine.
func (x *watcher) watchTaskFile(ws *Workspace, session string, ref *goal.TaskFileInfo) {
	if x.onChange == nil { // nobody to tell: watch nothing (one-shot commands)
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
		x.rewatch(fresh, resolveTaskPath(ws.root, fresh.key.rel))
	}
}

// dropWorkspace forgets every task file of ws (its store is closing).
func (x *watcher) dropWorkspace(ws *Workspace) {
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
func (x *watcher) forgetLocked(t *target) {
	t.dead = true
	if t.timer != nil {
		t.timer.Stop()
	}
	delete(x.targets, t.key)
}

// releaseDirs drops the folder references of a forgotten target, removing
// the watches nobody needs any more.
func (x *watcher) releaseDirs(t *target) {
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
func (x *watcher) unrefLocked(d string) bool {
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
func (x *watcher) startLocked() {
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

// stop ends the watcher: no check starts any more, running checks (and
// their OnTaskFile calls) are waited for, fsnotify is closed.
func (x *watcher) stop() {
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
func (x *watcher) loop(fsw *fsnotify.Watcher, done, loopDone chan struct{}) {
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
func (x *watcher) event(ev fsnotify.Event) {
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
func (x *watcher) lost(err error) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		x.log.Warn("task-file watcher: the kernel's event queue overflowed and events were lost; re-reading every watched task file")
	} else {
		x.log.Warn("task-file watcher error; re-reading every watched task file", "err", err)
	}
	x.rescan()
}

// rescan re-watches every folder and re-reads every task file.
func (x *watcher) rescan() {
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
func (x *watcher) verifyTargets() {
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
func (x *watcher) checkWorkspace(ws *Workspace) {
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
func (x *watcher) scheduleLocked(t *target) {
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
func (x *watcher) fire(t *target) {
	x.mu.Lock()
	t.due = false
	x.mu.Unlock()
	x.run(t, false)
}

// run runs one check of t, or with verify one verification, unless the
// watcher is closed or t forgotten. A verification is skipped while a
// check of t runs.
func (x *watcher) run(t *target, verify bool) {
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
func (x *watcher) check(t *target, verify bool) {
	ws, rel := t.key.ws, t.key.rel
	res := resolveTaskPath(ws.root, rel)
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
		x.log.Warn("cannot read a task file; it is read again when it changes", "workspace", ws.root, "taskFile", rel, "err", err)
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
		x.log.Warn("a symbolic link now takes the task file outside the workspace; it is treated as missing", "workspace", ws.root, "taskFile", rel)
	}
	if changed && x.onChange != nil {
		x.onChange(ws, rel, info)
	}
}

// errNoWatcher is the failure to watch a folder when fsnotify could not
// start.
var errNoWatcher = errors.New("the task-file watcher is not running")

// rewatch makes t hold exactly the folders of res, adding the watches that
// are missing, making again those whose folder is no longer the one its
// path names (a mount over it, or an ancestor renamed: inotify keeps
// watching the folder it was given), and switches t to polling while one
// of them cannot be made.
func (x *watcher) rewatch(t *target, res resolution) {
	x.opMu.Lock()
	defer x.opMu.Unlock()

	x.mu.Lock()
	if x.closed || t.dead {
		x.mu.Unlock()
		return
	}
	t.names = res.names
	type attempt struct {
		dir string
		id  fileID
		gen uint64
		err error
	}
	var add []attempt
	var remove []string
	for _, d := range res.dirs {
		wd := x.dirs[d]
		if wd == nil {
			wd = &watchedDir{}
			x.dirs[d] = wd
		}
		if !slices.Contains(t.dirs, d) {
			wd.refs++
		}
		if wd.id != (fileID{}) && wd.id != res.ids[d] {
			// The watch (if fsnotify still has it) is on another folder:
			// remove it, or an Add would only add a second one.
			wd.ok, wd.id = false, fileID{}
			wd.gen++
			remove = append(remove, d)
		}
		if !wd.ok {
			add = append(add, attempt{dir: d, id: res.ids[d], gen: wd.gen})
		}
	}
	for _, d := range t.dirs {
		if !slices.Contains(res.dirs, d) && x.unrefLocked(d) {
			remove = append(remove, d)
		}
	}
	t.dirs = res.dirs
	fsw, fsErr := x.fsw, x.fsErr
	x.mu.Unlock()

	for _, d := range remove {
		_ = fsw.Remove(d)
	}
	for i := range add {
		if fsw == nil {
			add[i].err = fmt.Errorf("%w: %w", errNoWatcher, fsErr)
			continue
		}
		add[i].err = x.add(fsw, add[i].dir)
	}

	x.mu.Lock()
	var limit *attempt
	again := false
	for i, a := range add {
		wd := x.dirs[a.dir]
		switch {
		case a.err == nil:
			if wd != nil && wd.gen == a.gen {
				wd.ok, wd.id = true, a.id
			}
		case errors.Is(a.err, fs.ErrNotExist) || errors.Is(a.err, syscall.ENOTDIR):
			again = true // the folder went away since it was resolved
		default:
			limit = &add[i]
		}
	}
	wasPolling := t.polling
	polling := limit != nil || len(res.dirs) == 0
	t.polling = polling
	if again {
		x.scheduleLocked(t)
	}
	dead := t.dead
	x.mu.Unlock()
	if dead {
		return
	}
	ws, rel := t.key.ws, t.key.rel
	switch {
	case polling && !wasPolling && limit != nil:
		x.log.Warn("cannot watch the folder of a task file; polling the task file instead",
			"workspace", ws.root, "taskFile", rel, "folder", limit.dir, "every", x.verify, "err", limit.err, "hint", limitHint(limit.err))
	case polling && !wasPolling:
		x.log.Warn("the workspace folder of a task file cannot be resolved; polling the task file instead",
			"workspace", ws.root, "taskFile", rel, "every", x.verify)
	case !polling && wasPolling:
		x.log.Info("the folder of a task file is watched again; polling stopped", "workspace", ws.root, "taskFile", rel)
	}
}

// limitHint explains a failure to watch, for the log.
func limitHint(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "the inotify watch limit is reached: raise fs.inotify.max_user_watches (sysctl)"
	case errors.Is(err, syscall.EMFILE):
		return "too many inotify instances or open files: raise fs.inotify.max_user_instances (sysctl) or the open-file limit"
	case errors.Is(err, syscall.ENFILE):
		return "the system's open-file limit is reached"
	case errors.Is(err, syscall.ENOMEM):
		return "the kernel is out of memory for watches"
	case errors.Is(err, fs.ErrPermission):
		return "no permission to watch the folder"
	}
	return "the folder cannot be watched"
}

// resolution is where a task file path leads now and what to watch for it.
type resolution struct {
	lead
	dirs  []string          // folders to watch, sorted; empty when the workspace folder itself is gone
	ids   map[string]fileID // each of dirs as it was when resolved; zero when it could not be read
	names map[string]bool   // paths whose events concern the task file
	at    time.Time         // when the resolution began
}

// lead is where a task file path leads, as verifications compare it: the
// same lead at two checks means the file was not written in between,
// unless the first was racy.
type lead struct {
	real    string // the path reached, links resolved
	exists  bool   // something is at real
	isDir   bool   // and it is a folder
	outside bool   // a symbolic link leads outside the workspace (or links loop)
	file    stamp  // the lstat of what is at real; zero when nothing is
}

// racy says whether the file's change time was less than window before
// the resolution, so that a write right after it may have left the same
// stat (racyStamp).
func (r resolution) racy(window time.Duration) bool {
	return r.exists && r.file.ctime > r.at.Add(-window).UnixNano()
}

// fileID names a file system object: a path whose fileID changed names
// another one.
type fileID struct{ dev, ino uint64 }

// stamp is what a stat says about a file. Every write changes its change
// time, which nothing but the clock sets.
type stamp struct {
	fileID
	size         int64
	mtime, ctime int64 // nanoseconds since the epoch
}

// portableStamp is what any system's stat says: no file id, and the
// modification time standing in for the change time (stampOf).
func portableStamp(fi fs.FileInfo) stamp {
	t := fi.ModTime().UnixNano()
	return stamp{size: fi.Size(), mtime: t, ctime: t}
}

// dirID is the fileID of the folder at path, zero when it cannot be read.
func dirID(path string) fileID {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}
	}
	return stampOf(fi).fileID
}

// resolveTaskPath follows rel under the workspace folder root one name at
// a time, reading symbolic links itself so that each link's folder is
// watched as well as the folder reached. A missing name stops the walk:
// the folder that should hold it is watched (the nearest existing
// ancestor).
func resolveTaskPath(root, rel string) resolution {
	res := resolution{names: map[string]bool{}, ids: map[string]fileID{}, at: time.Now()}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return res
	}
	dirs := map[string]bool{}
	finish := func() resolution {
		for d := range dirs {
			res.dirs = append(res.dirs, d)
			res.ids[d] = dirID(d)
		}
		sort.Strings(res.dirs)
		return res
	}
	pending := strings.Split(rel, "/")
	cur := realRoot
	hops := 0
	for len(pending) > 0 {
		name := pending[0]
		pending = pending[1:]
		switch name {
		case "", ".":
			continue
		case "..": // from a link's target only: rel itself is clean
			if cur == realRoot {
				res.outside = true
				return finish()
			}
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, name)
		res.names[next] = true
		fi, err := os.Lstat(next)
		if err != nil || (len(pending) > 0 && fi.Mode()&fs.ModeSymlink == 0 && !fi.IsDir()) {
			// Missing (or a file where a folder should be): watch the folder
			// that would hold it.
			dirs[cur] = true
			res.real = filepath.Join(append([]string{next}, pending...)...)
			return finish()
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			dirs[cur] = true // a re-pointed link is an event here
			target, err := os.Readlink(next)
			if hops++; err != nil || hops > maxLinkHops {
				res.outside = err == nil
				res.real = next
				return finish()
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(cur, target)
			}
			r, ok := within(realRoot, filepath.Clean(target))
			if !ok {
				// An absolute target may name the folder by another path.
				if real, err := evalExisting(target); err == nil {
					r, ok = within(realRoot, real)
				}
			}
			if !ok {
				res.outside = true
				res.real = target
				return finish()
			}
			pending = append(strings.Split(filepath.ToSlash(r), "/"), pending...)
			cur = realRoot
			continue
		}
		cur = next
		if len(pending) == 0 {
			res.exists, res.isDir, res.file = true, fi.IsDir(), stampOf(fi)
		}
	}
	res.real = cur
	if cur != realRoot {
		dirs[filepath.Dir(cur)] = true
	} else {
		dirs[cur] = true
	}
	return finish()
}

// within returns p relative to root when p is root or inside it.
func within(root, p string) (string, bool) {
	r, err := filepath.Rel(root, p)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	return r, true
}

// read reads the task file where the path leads. A path that leads nowhere,
// outside the workspace, or to anything but a regular file reads as missing;
// a file larger than MaxTaskFileBytes reads without a hash (its size is the
// change signal).
func (r resolution) read(rel string) (goal.TaskFileInfo, error) {
	if !r.exists || r.isDir || r.outside {
		return goal.TaskFileInfo{Path: rel}, nil
	}
	info, err := readTaskFile(filepath.Dir(r.real), filepath.Base(r.real))
	var notRegular *notRegularError
	if errors.As(err, &notRegular) {
		return goal.TaskFileInfo{Path: rel}, nil
	}
	var tooLarge *tooLargeError
	if errors.As(err, &tooLarge) {
		err = nil
	}
	info.Path = rel
	return info, err
}

// watchStoredTaskFiles registers the task files of every stored session
// (Open, after recovery), each under its session's lock so that a
// concurrent Update cannot be overtaken, then checks them: a change made
// while the folder was closed is recorded (OnTaskFile) before it returns.
func (w *Workspace) watchStoredTaskFiles() {
	if w.reg.watch.onChange == nil {
		return
	}
	sessions, err := w.Sessions()
	if err != nil {
		w.reg.log.Warn("cannot read the sessions to watch their task files", "workspace", w.root, "err", err)
		return
	}
	for _, s := range sessions {
		if w.watchedTaskFile(s.Goal) == nil {
			continue
		}
		st := w.state(s.Name)
		st.mu.Lock()
		if cur, err := w.load(s.Name, st); err == nil {
			w.reg.watch.watchTaskFile(w, s.Name, w.watchedTaskFile(cur.Goal))
		}
		st.mu.Unlock()
	}
	// Nothing watched the files while the folder was closed: read them now,
	// before Open returns and a command reads the state.
	w.reg.watch.checkWorkspace(w)
}
