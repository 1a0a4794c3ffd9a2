package workspace

import (
	"fmt"

	"github.com/agentd/agentd/workspace/storage"
)

// The stable error codes of this package (docs/runtime.md §3) are the
// stores' (workspace/storage), so that a store in a package of its own
// refuses with the same codes and type.
const (
	CodeLocked      = storage.CodeLocked
	CodeCorrupt     = storage.CodeCorrupt
	CodeUnavailable = storage.CodeUnavailable
	// CodeContended: a change of a team folder's session met another
	// daemon's write of it on every one of its attempts (maxUpdateAttempts
	// compare-and-set conflicts): nothing was written, the cluster is
	// reachable, and trying again is the fix (docs/team.md, "Faults").
	CodeContended      = "workspace.contended"
	CodeOutcomeUnknown = storage.CodeOutcomeUnknown
	CodeNoSpace        = storage.CodeNoSpace
)

// A call that asks for what a limit refuses (a new session beyond
// MaxSessions) or names an unusable task file is refused with
// goal.CodeArgsInvalid, the protocol's args.invalid.

// Error is a refusal of this package that carries a stable code: the
// stores' (storage.Error), which is the protocol's coded error.
type Error = storage.Error

// LockHolder is the cause of a CodeLocked refusal: the process that holds
// the folder's state file (Pid 0 when owner.json does not name it) and
// what the wait for the lock ended with.
type LockHolder struct {
	Pid int
	Err error
}

func (h *LockHolder) Error() string {
	if h.Pid > 0 {
		return fmt.Sprintf("the state file is locked by pid %d: %v", h.Pid, h.Err)
	}
	return fmt.Sprintf("the state file is locked: %v", h.Err)
}

// Unwrap returns what the wait for the lock ended with.
func (h *LockHolder) Unwrap() error { return h.Err }

var (
	// ErrNotSaved is wrapped by the error of an Update whose transaction did
	// not commit (disk full, read-only file, closed store...). Nothing of the
	// change was kept; the session reads as before.
	ErrNotSaved = storage.ErrNotSaved

	// ErrClosed is returned by the methods of a Workspace after its last
	// Release or after Registry.Close, and by Open after Registry.Close.
	ErrClosed = storage.ErrClosed
)
