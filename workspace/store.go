package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentd/agentd/workspace/boltstore"
	"github.com/agentd/agentd/workspace/wsfolder"
	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// Names on disk (docs/protocol.md §1). Each folder gets its own directory
//
//	<StateDir>/workspaces/<key>/state.db        the bbolt file
//	<StateDir>/workspaces/<key>/workspace.json  {"path", "createdAt"}
//	<StateDir>/workspaces/<key>/owner.json      {"pid", "startedAt"} of the last process that took the lock
//
// where key is wsfolder.FolderKey, the hex of the first 16 bytes of the
// SHA-256 of the folder's absolute, cleaned path (wsfolder.WorkspacesDir and
// wsfolder.StateFileName name the rest).
const (
	folderFile    = "workspace.json"
	ownerFile     = "owner.json"
	corruptSuffix = ".corrupt-" // + UTC time, e.g. state.db.corrupt-20250102T150405Z
)

// checkLimit is the largest state file that gets bbolt's full consistency
// check (Tx.Check) at open. Check walks every page and costs roughly a
// millisecond per few hundred kilobytes; a state file stays well below
// this limit (sessions are small and history is bounded by MaxHistoryBytes),
// so a larger file only skips the walk, keeping the truncation check.
const checkLimit = 32 << 20

type folderInfo struct {
	Path      string    `json:"path"`
	CreatedAt time.Time `json:"createdAt"`
}

type ownerInfo struct {
	Pid       int       `json:"pid"`
	StartedAt time.Time `json:"startedAt"`
}

// openStore opens (creating if needed) the state file of w.root, recovering
// from a corrupt file, and brings it to the current schema. File I/O only;
// no transaction is open while it writes its JSON files.
func (r *Registry) openStore(w *Workspace) error {
	if r.opts.StateDir == "" {
		return errors.New("workspace: Options.StateDir is empty")
	}
	team, notice, err := teamOf(r.opts.StateDir, w.root)
	if err != nil {
		return err
	}
	if team != nil {
		return r.openTeam(w, team)
	}
	if notice != nil {
		r.log.Debug("the folder's team file is not used on this machine; its own state serves it", "workspace", w.root, "teamFile", notice.Line())
	}
	w.path = wsfolder.StateFile(r.opts.StateDir, w.root)
	w.dir = filepath.Dir(w.path)
	if err := os.MkdirAll(w.dir, 0o700); err != nil {
		return fmt.Errorf("workspace %s: creating the state directory: %w", w.root, err)
	}

	db, err := r.openDB(w)
	if err != nil {
		return err
	}

	now := r.now()
	if err := wsfolder.WriteJSONAtomic(filepath.Join(w.dir, ownerFile), ownerInfo{Pid: os.Getpid(), StartedAt: now}, false); err != nil {
		r.log.Warn("cannot record the state file's owner", "workspace", w.root, "err", err)
	}
	r.ensureFolderInfo(w, now)

	from, err := migrate(db, w.root)
	if err != nil {
		_ = db.Close()
		return err
	}
	if from != currentSchema() {
		r.log.Debug("state file schema upgraded", "workspace", w.root, "path", w.path, "from", from, "to", currentSchema())
	}
	w.store = r.wrap(boltstore.New(r.compactIfSparse(w, db), boltstore.Options{Limits: limits}))
	return nil
}

// openDB opens w.path with the file lock, moving a corrupt file aside first.
func (r *Registry) openDB(w *Workspace) (*bbolt.DB, error) {
	for attempt := 0; ; attempt++ {
		corrupt, checked, err := r.checkFile(w)
		if err != nil {
			return nil, err
		}
		if corrupt != nil {
			if err := r.recoverCorrupt(w, checked, corrupt); err != nil {
				return nil, err
			}
		}
		var db *bbolt.DB
		var opened openedFile
		err = boltstore.Protect(func() (err error) {
			db, err = bbolt.Open(w.path, 0o600, &bbolt.Options{Timeout: r.lockTimeout(), MaxSize: r.opts.maxSize, OpenFile: opened.open})
			return err
		})
		switch {
		case err == nil && opened.replacedWhileWaiting(w.path):
			// Another process compacted the file while this one waited for
			// its lock (compact.go): what is locked is the old, unlinked file.
			_ = db.Close()
			continue
		case err == nil:
			return db, nil
		case errors.Is(err, berrors.ErrTimeout):
			return nil, r.lockedError(w, err)
		case isCorruptOpen(err) && attempt == 0:
			// The file changed between the check and the open; check again.
			continue
		case isCorruptOpen(err):
			return nil, &Error{Code: CodeCorrupt, Err: err,
				Msg: fmt.Sprintf("the state file %s of workspace %s cannot be opened: %v", w.path, w.root, err)}
		default:
			return nil, fmt.Errorf("workspace %s: opening the state file %s: %w", w.root, w.path, err)
		}
	}
}

// checkFile opens w.path read-only (a shared lock, so a process holding the
// file makes it wait and time out) and returns corrupt != nil when bbolt
// cannot use it: bad meta pages, a file shorter than its data, or a failed
// consistency check. checked describes the file that was examined. A
// missing or empty file is fine: bbolt initialises it.
func (r *Registry) checkFile(w *Workspace) (corrupt error, checked fs.FileInfo, err error) {
	fi, err := os.Stat(w.path)
	if errors.Is(err, fs.ErrNotExist) || err == nil && fi.Size() == 0 {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("workspace %s: %w", w.root, err)
	}
	var db *bbolt.DB
	err = boltstore.Protect(func() (err error) {
		db, err = bbolt.Open(w.path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: r.lockTimeout()})
		return err
	})
	switch {
	case err == nil:
	case errors.Is(err, berrors.ErrTimeout):
		return nil, nil, r.lockedError(w, err)
	case isCorruptOpen(err):
		return err, fi, nil
	default:
		return nil, nil, fmt.Errorf("workspace %s: opening the state file %s: %w", w.root, w.path, err)
	}
	defer db.Close()
	// Under the shared lock the size is stable.
	if fi, err = os.Stat(w.path); err != nil {
		return nil, nil, fmt.Errorf("workspace %s: %w", w.root, err)
	}
	err = boltstore.Protect(func() error { return verify(db, fi.Size()) })
	return err, fi, nil
}

// verify checks, in one read transaction, that the file holds every page
// its meta page counts (a truncated file otherwise faults when a page past
// its end is touched) and, for files up to checkLimit, runs bbolt's
// consistency check.
func verify(db *bbolt.DB, size int64) error {
	return db.View(func(tx *bbolt.Tx) error {
		if need := tx.Size(); need > size {
			return fmt.Errorf("the file is truncated: it has %d bytes, its data needs %d", size, need)
		}
		if size > checkLimit {
			return nil
		}
		var errs []error
		for err := range tx.Check() { // drain: Check's goroutine sends every finding
			if len(errs) < 3 {
				errs = append(errs, err)
			}
		}
		if len(errs) > 0 {
			return fmt.Errorf("consistency check failed: %w", errors.Join(errs...))
		}
		return nil
	})
}

// isCorruptOpen says whether an error of bbolt.Open means the content is not
// a usable bbolt file (as opposed to a lock, permission or I/O problem).
func isCorruptOpen(err error) bool {
	var p *boltstore.PanicError
	return errors.Is(err, berrors.ErrInvalid) ||
		errors.Is(err, berrors.ErrChecksum) ||
		errors.Is(err, berrors.ErrVersionMismatch) ||
		errors.As(err, &p) ||
		// bbolt's size check has no sentinel error.
		strings.Contains(err.Error(), "file size too small")
}

// recoverCorrupt moves the file examined by checkFile aside, unless it was
// replaced since (another process recovered it first), and records the
// message for Recovered.
func (r *Registry) recoverCorrupt(w *Workspace, checked fs.FileInfo, cause error) error {
	cur, err := os.Stat(w.path)
	if errors.Is(err, fs.ErrNotExist) || err == nil && !os.SameFile(cur, checked) {
		return nil // someone else moved it; open what is there now
	}
	if err != nil {
		return fmt.Errorf("workspace %s: %w", w.root, err)
	}
	stamp := r.now().UTC().Format("20060102T150405Z")
	aside := w.path + corruptSuffix + stamp
	for i := 2; ; i++ {
		if _, err := os.Lstat(aside); errors.Is(err, fs.ErrNotExist) {
			break
		}
		aside = fmt.Sprintf("%s%s%s-%d", w.path, corruptSuffix, stamp, i)
	}
	if err := os.Rename(w.path, aside); err != nil {
		return &Error{Code: CodeCorrupt, Err: fmt.Errorf("%w; moving it aside failed: %w", cause, err),
			Msg: fmt.Sprintf("the state file %s of workspace %s cannot be read (%v), and moving it aside failed: %v", w.path, w.root, cause, err)}
	}
	w.recovered = fmt.Sprintf("The agentd state of workspace %s could not be read (%v). The file was moved aside to %s and a fresh state was started: the todo lists, goals and history of this folder are empty.",
		w.root, cause, aside)
	r.log.Error("corrupt state file moved aside; starting a fresh state",
		"workspace", w.root, "path", w.path, "movedTo", aside, "err", cause)
	return nil
}

// lockedError names the process holding the lock, read from owner.json.
func (r *Registry) lockedError(w *Workspace, cause error) *Error {
	holder := &LockHolder{Err: cause}
	var owner ownerInfo
	data, err := os.ReadFile(filepath.Join(w.dir, ownerFile))
	if err == nil && json.Unmarshal(data, &owner) == nil && owner.Pid > 0 {
		holder.Pid = owner.Pid
	}
	who := "another agentd process"
	if holder.Pid > 0 {
		who = fmt.Sprintf("another agentd process (pid %d)", holder.Pid)
	}
	msg := fmt.Sprintf("workspace %s is in use by %s: its state file %s stayed locked for %s", w.root, who, w.path, r.lockTimeout())
	if r.opts.LockedHint != "" {
		msg += "; " + r.opts.LockedHint
	}
	return &Error{Code: CodeLocked, Msg: msg, Err: holder}
}

// ensureFolderInfo writes workspace.json when it is missing or unreadable.
func (r *Registry) ensureFolderInfo(w *Workspace, now time.Time) {
	p := filepath.Join(w.dir, folderFile)
	var info folderInfo
	if data, err := os.ReadFile(p); err == nil && json.Unmarshal(data, &info) == nil && info.Path != "" {
		if info.Path != w.root {
			r.log.Error("state directory records another folder", "workspace", w.root, "recorded", info.Path, "dir", w.dir)
		}
		return
	}
	if err := wsfolder.WriteJSONAtomic(p, folderInfo{Path: w.root, CreatedAt: now}, true); err != nil {
		r.log.Warn("cannot write workspace.json", "workspace", w.root, "err", err)
	}
}
