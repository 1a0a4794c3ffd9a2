package workspace

import "errors"

// Stable error codes of this package (docs/runtime.md §3). The protocol layer maps
// them through the ErrorCode method.
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
	// CodeOutcomeUnknown: a write was sent to the etcd cluster of a team
	// folder but no answer came back (the request timed out, or the
	// connection broke after it was sent), and resending it got no answer
	// either: the cluster may have applied it. If it did, it reaches every
	// daemon through the watch like any other change (docs/team.md,
	// "What a write acknowledges").
	CodeOutcomeUnknown = "workspace.outcome_unknown"
	// CodeNoSpace: the etcd cluster of a team folder refused a write
	// because its database reached its quota (etcd's NOSPACE alarm):
	// nothing was written until an operator frees space and disarms the
	// alarm (docs/team.md, "A full etcd").
	CodeNoSpace = "workspace.no_space"
)

// A call that asks for what a limit refuses (a new session beyond
// MaxSessions) or names an unusable task file is refused with
// goal.CodeArgsInvalid, the protocol's args.invalid.

// Error is a refusal of this package that carries a stable code. Callers
// detect the code through the ErrorCode method; Unwrap gives the cause.
type Error struct {
	Code string // one of the Code constants above or goal.CodeArgsInvalid
	Msg  string // the whole message for the user: what happened (with the cause's text where it helps) and what to do
	Path string // the state file concerned
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
	// ErrNotSaved is wrapped by the error of an Update whose transaction did
	// not commit (disk full, read-only file, closed store...). Nothing of the
	// change was kept; the session reads as before.
	ErrNotSaved = errors.New("the change was not saved")

	// ErrClosed is returned by the methods of a Workspace after its last
	// Release or after Registry.Close, and by Open after Registry.Close.
	ErrClosed = errors.New("workspace store is closed")
)
