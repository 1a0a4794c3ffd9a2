package protocol

import "errors"

// Error is a refusal with a stable code (docs/runtime.md §3): what the
// commands return and what a client rebuilds from a daemon's answer. Data
// holds extra fields a client may use (e.g. "state" for todo.conflict);
// the lsp package sends them as the JSON-RPC error's data next to "code".
type Error struct {
	Code string
	Msg  string
	Data map[string]any
	Err  error // the cause, if any
}

func (e *Error) Error() string {
	if e.Err != nil && e.Msg == "" {
		return e.Err.Error()
	}
	return e.Msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode is the stable code, e.g. "todo.conflict".
func (e *Error) ErrorCode() string { return e.Code }

// ErrorData is the extra data for the client, or nil.
func (e *Error) ErrorData() map[string]any { return e.Data }

// Codes every client may see (docs/runtime.md §3); the refusals of one
// domain (todo.*, goal.*) are declared by it.
const (
	// CodeArgsInvalid is the code of a badly shaped argument; the lsp
	// package answers it with JSON-RPC -32602 (docs/protocol.md §3).
	CodeArgsInvalid = "args.invalid"
	// CodeAgentShell is the refusal of a person-only command called from
	// an agent's shell tool (docs/runtime.md, "Who is calling: a person
	// or an agent's shell").
	CodeAgentShell = "caller.agent_shell"
	// CodeTurnEnded is the refusal of a call that carries a turn (a tool
	// call with its turnId, a step or turn end) when that turn has ended,
	// so that a call made on a stale belief changes nothing
	// (docs/runtime.md §2.4.6).
	CodeTurnEnded = "turn.ended"
	// CodeNoWorkspace is the refusal of a command that needs a folder on
	// a connection that has none open (docs/protocol.md §2, §3).
	CodeNoWorkspace = "workspace.none"
	// CodeUnknownWorkspace is the refusal of a command whose folder is not
	// open on the connection, or that names none while several are
	// (docs/protocol.md §2, §3).
	CodeUnknownWorkspace = "workspace.unknown"
)

// ErrorCode returns the stable code of err or of anything it wraps (any
// error with an ErrorCode method), or "".
func ErrorCode(err error) string {
	var c interface{ ErrorCode() string }
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	return ""
}
