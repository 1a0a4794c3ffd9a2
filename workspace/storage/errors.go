package storage

import (
	"errors"

	"github.com/agentd/agentd/commands/protocol"
)

// The stable codes of a store's refusals (docs/runtime.md §3), which
// workspace's callers see as workspace.CodeLocked and the others; a
// refusal that carries one is an *Error.
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

// Error is a refusal of a store or of its opener: the protocol's coded
// error (protocol.Error), so that a store's refusal reaches the client
// with its code as every other refusal does. Msg is the whole message
// for the user (what happened, with the cause's text where it helps, and
// what to do); Err the cause.
type Error = protocol.Error

var (
	// ErrNotSaved is wrapped by the error of a change that was not
	// committed (disk full, read-only file, closed store, etcd that did not
	// answer...). Nothing of the change was kept on this machine.
	ErrNotSaved = errors.New("the change was not saved")

	// ErrClosed is returned by a closed store, and by the methods of a
	// workspace after its last Release.
	ErrClosed = errors.New("workspace store is closed")
)
