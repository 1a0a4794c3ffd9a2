package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/workspace/wsfolder"
)

// The check commands the person at this machine approved for a folder
// (docs/runtime.md §2.10.4): a file of the machine's state directory,
// never the session record, never etcd, so that no other machine and no
// writer of the shared state can approve anything here.
//
//	<StateDir>/workspaces/<FolderKey>/approved-checks.json
//	    {"checks": [{"sha256", "at", "by": {"user", "host"}}, ...]}
//	<StateDir>/workspaces/<FolderKey>/approved-checks.lock   held while it is rewritten
//
// It is written whole through a temporary file and a rename
// (wsfolder.WriteJSONAtomic), under an flock of the .lock file, so two
// processes approving at once (a shell command and the daemon of a team
// folder, which holds no file lock) lose neither approval.
const (
	approvalsFile     = "approved-checks.json"
	approvalsLockFile = "approved-checks.lock"
)

// MaxApprovedChecks bounds the approvals kept per folder: approving one
// more drops the oldest (docs/runtime.md §2.10.4).
const MaxApprovedChecks = 1000

type approvalsRecord struct {
	Checks []approvalRecord `json:"checks"`
}

type approvalRecord struct {
	SHA256 string            `json:"sha256"` // of the command's exact text
	At     time.Time         `json:"at"`
	By     checkSetterRecord `json:"by"`
}

// approvals caches the folder's approvals file, read again when its size
// or modification time changed.
type approvals struct {
	mu     sync.Mutex
	size   int64
	mod    time.Time
	hashes map[string]bool
}

// approvalsDir is the folder's directory in the state directory, for a
// team folder too (whose state is in etcd).
func (w *Workspace) approvalsDir() string {
	return filepath.Join(w.reg.opts.StateDir, wsfolder.WorkspacesDir, wsfolder.FolderKey(w.root))
}

func commandHash(command string) string {
	sum := sha256.Sum256([]byte(command))
	return hex.EncodeToString(sum[:])
}

// CheckApproved says whether the person at this machine approved command,
// the exact text of a check, for this folder. A file that cannot be read
// approves nothing (logged).
func (w *Workspace) CheckApproved(command string) bool {
	path := filepath.Join(w.approvalsDir(), approvalsFile)
	w.approved.mu.Lock()
	defer w.approved.mu.Unlock()
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false
	case err != nil:
		w.reg.log.Warn("cannot read the approved checks; none is approved", "workspace", w.root, "err", err)
		return false
	case w.approved.hashes == nil || fi.Size() != w.approved.size || !fi.ModTime().Equal(w.approved.mod):
		rec, err := readApprovals(path)
		if err != nil {
			w.reg.log.Warn("cannot read the approved checks; none is approved", "workspace", w.root, "err", err)
			return false
		}
		w.approved.hashes = map[string]bool{}
		for _, a := range rec.Checks {
			w.approved.hashes[a.SHA256] = true
		}
		w.approved.size, w.approved.mod = fi.Size(), fi.ModTime()
	}
	return w.approved.hashes[commandHash(command)]
}

func readApprovals(path string) (approvalsRecord, error) {
	var rec approvalsRecord
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return rec, nil
	}
	if err != nil {
		return rec, err
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, fmt.Errorf("%s: %w", path, err)
	}
	return rec, nil
}

// ApproveCheck records that by, the person at this machine, approved
// command for this folder at at. Approving an approved command again
// records the newer time and person. A file that cannot be read is
// replaced (logged); the oldest approvals beyond MaxApprovedChecks go.
func (w *Workspace) ApproveCheck(command string, by goal.CheckSetter, at time.Time) error {
	dir := w.approvalsDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("workspace %s: creating the state directory: %w", w.root, err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, approvalsLockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("workspace %s: recording the approval: %w", w.root, err)
	}
	defer lock.Close()
	if err := wsfolder.Lock(lock); err != nil {
		return fmt.Errorf("workspace %s: recording the approval: %w", w.root, err)
	}
	path := filepath.Join(dir, approvalsFile)
	rec, err := readApprovals(path)
	if err != nil {
		w.reg.log.Warn("the approved checks cannot be read; starting them afresh", "workspace", w.root, "err", err)
		rec = approvalsRecord{}
	}
	hash := commandHash(command)
	rec.Checks = slices.DeleteFunc(rec.Checks, func(a approvalRecord) bool { return a.SHA256 == hash })
	rec.Checks = append(rec.Checks, approvalRecord{SHA256: hash, At: at.UTC(), By: checkSetterRecord(by)})
	if n := len(rec.Checks) - MaxApprovedChecks; n > 0 {
		rec.Checks = rec.Checks[n:]
	}
	if err := wsfolder.WriteJSONAtomic(path, rec, true); err != nil {
		return fmt.Errorf("workspace %s: recording the approval: %w", w.root, err)
	}
	return nil
}
