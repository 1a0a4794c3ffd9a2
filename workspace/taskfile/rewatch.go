package taskfile

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"syscall"
)

// errNoWatcher is the failure to watch a folder when fsnotify could not
// start.
var errNoWatcher = errors.New("the task-file watcher is not running")

// rewatch makes t hold exactly the folders of res, adding the watches that
// are missing, making again those whose folder is no longer the one its
// path names (a mount over it, or an ancestor renamed: inotify keeps
// watching the folder it was given), and switches t to polling while one
// of them cannot be made.
func (x *Watcher) rewatch(t *target, res resolution) {
	x.opMu.Lock()
	defer x.opMu.Unlock()

	add, remove, ok := x.planWatches(t, res)
	if !ok {
		return
	}
	x.mu.Lock()
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
	x.settleWatches(t, res, add)
}

// attempt is one fsnotify Add that rewatch makes.
type attempt struct {
	dir string
	id  fileID // the folder as resolved
	gen uint64 // watchedDir.gen when planned: a loss since voids the Add
	err error
}

// planWatches moves t's folder references to res.dirs and says which
// watches to add and which to remove; ok is false when t or the watcher
// is gone. opMu is held.
func (x *Watcher) planWatches(t *target, res resolution) (add []attempt, remove []string, ok bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed || t.dead {
		return nil, nil, false
	}
	t.names = res.names
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
	return add, remove, true
}

// settleWatches records the outcome of the Adds: the watches made, a check
// again when a folder went away meanwhile, and polling (logged when it
// starts or stops) while a folder cannot be watched. opMu is held.
func (x *Watcher) settleWatches(t *target, res resolution, add []attempt) {
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
	if !dead && polling != wasPolling {
		x.logPolling(t, polling, limit)
	}
}

// logPolling says that t's task file is polled from now on (with the
// folder that could not be watched, if any), or watched again.
func (x *Watcher) logPolling(t *target, polling bool, limit *attempt) {
	root, rel := t.key.ws.Root(), t.key.rel
	switch {
	case polling && limit != nil:
		x.log.Warn("cannot watch the folder of a task file; polling the task file instead",
			"workspace", root, "taskFile", rel, "folder", limit.dir, "every", x.verify, "err", limit.err, "hint", limitHint(limit.err))
	case polling:
		x.log.Warn("the workspace folder of a task file cannot be resolved; polling the task file instead",
			"workspace", root, "taskFile", rel, "every", x.verify)
	default:
		x.log.Info("the folder of a task file is watched again; polling stopped", "workspace", root, "taskFile", rel)
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
