package storage

import "errors"

// The stable codes of a store's refusals (docs/runtime.md §3), which
// workspace's callers see as workspace.CodeLocked and the others. The
// protocol layer maps them through the ErrorCode method.
const (
	// CodeLocked: another process holds the folder's state file (docs/protocol.md §1).
	CodeLocked = "workspace.locked"
	// CodeCorrupt: the state file cannot be used: unreadable content that could
	// not be moved aside, a session record that does not decode, or a schema
	// written by a newer agentd.
	CodeCorrupt = "workspace.corrupt"
	// CodeUnavailable: the etcd cluster of a team folder (docs/team.md) did
	// not answer in time: a write was not acknowledged and nothing of it
	// was kept on this machine; a read could not be made.
	CodeUnavailable = "workspace.unavailable"
)

// Error is a refusal of a store or of its opener that carries a stable
// code. Callers detect the code through the ErrorCode method; Unwrap gives
// the cause.
type Error struct {
	Code string // CodeLocked, CodeCorrupt, CodeUnavailable or the protocol's args.invalid
	Msg  string // the whole message for the user: what happened (with the cause's text where it helps) and what to do
	Path string // the state file concerned, or what names a team's etcd state
	Pid  int    // CodeLocked: the pid of the process holding the lock, 0 when unknown
	Err  error  // the underlying cause, if any
}

// Error returns Msg (or the cause's text when Msg is empty).
func (e *Error) Error() string {
	if e.Msg == "" && e.Err != nil {
		return e.Err.Error()
	}
	return e.Msg
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the stable code, e.g. "workspace.locked".
func (e *Error) ErrorCode() string { return e.Code }

var (
	// ErrNotSaved is wrapped by the error of a change that was not
	// committed (disk full, read-only file, closed store, etcd that did not
	// answer...). Nothing of the change was kept on this machine.
	ErrNotSaved = errors.New("the change was not saved")

	// ErrClosed is returned by a closed store, and by the methods of a
	// workspace after its last Release.
	ErrClosed = errors.New("workspace store is closed")
)
