package taskfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentd/agentd/goal"
)

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
	w := &walk{res: res, realRoot: realRoot, dirs: map[string]bool{}, pending: strings.Split(rel, "/"), cur: realRoot}
	for len(w.pending) > 0 {
		if w.step() {
			return w.finish()
		}
	}
	w.res.real = w.cur
	if w.cur != realRoot {
		w.dirs[filepath.Dir(w.cur)] = true
	} else {
		w.dirs[w.cur] = true
	}
	return w.finish()
}

// walk is resolveTaskPath under way.
type walk struct {
	res      resolution
	realRoot string          // the workspace folder, links resolved
	dirs     map[string]bool // the folders to watch so far
	pending  []string        // the names still to follow
	cur      string          // the folder reached
	hops     int             // symbolic links followed
}

// step follows the next pending name; done says the walk ended short of
// it (a missing name, a link that leads out, or "..", from a link's
// target, above the workspace folder).
func (w *walk) step() (done bool) {
	name := w.pending[0]
	w.pending = w.pending[1:]
	switch name {
	case "", ".":
		return false
	case "..": // from a link's target only: rel itself is clean
		if w.cur == w.realRoot {
			w.res.outside = true
			return true
		}
		w.cur = filepath.Dir(w.cur)
		return false
	}
	next := filepath.Join(w.cur, name)
	w.res.names[next] = true
	fi, err := os.Lstat(next)
	if err != nil || (len(w.pending) > 0 && fi.Mode()&fs.ModeSymlink == 0 && !fi.IsDir()) {
		// Missing (or a file where a folder should be): watch the folder
		// that would hold it.
		w.dirs[w.cur] = true
		w.res.real = filepath.Join(append([]string{next}, w.pending...)...)
		return true
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return w.follow(next)
	}
	w.cur = next
	if len(w.pending) == 0 {
		w.res.exists, w.res.isDir, w.res.file = true, fi.IsDir(), stampOf(fi)
	}
	return false
}

// follow reads the symbolic link at next and puts the path its target
// names, relative to the workspace folder, before the pending names; a
// link that leads outside the folder (or one too many) ends the walk.
func (w *walk) follow(next string) (done bool) {
	w.dirs[w.cur] = true // a re-pointed link is an event here
	target, err := os.Readlink(next)
	if w.hops++; err != nil || w.hops > maxLinkHops {
		w.res.outside = err == nil
		w.res.real = next
		return true
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(w.cur, target)
	}
	r, ok := within(w.realRoot, filepath.Clean(target))
	if !ok {
		// An absolute target may name the folder by another path.
		if real, err := evalExisting(target); err == nil {
			r, ok = within(w.realRoot, real)
		}
	}
	if !ok {
		w.res.outside = true
		w.res.real = target
		return true
	}
	w.pending = append(strings.Split(filepath.ToSlash(r), "/"), w.pending...)
	w.cur = w.realRoot
	return false
}

// finish lists the folders to watch, sorted, with what each is now.
func (w *walk) finish() resolution {
	for d := range w.dirs {
		w.res.dirs = append(w.res.dirs, d)
		w.res.ids[d] = dirID(d)
	}
	sort.Strings(w.res.dirs)
	return w.res
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
