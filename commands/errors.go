package commands

import (
	"errors"
	"fmt"

	"github.com/agentd/agentd/jsonin"
)

// Error is a refusal with a stable code (docs/runtime.md §3). Data holds extra
// fields a client may use (e.g. "state" for todo.conflict); the lsp package
// sends them as the JSON-RPC error's data next to "code".
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

// CodeArgsInvalid is the code of a badly shaped argument; the lsp package
// answers it with JSON-RPC -32602 (docs/protocol.md §3). It is jsonin's, the one
// declaration, named here for the packages above commands.
const CodeArgsInvalid = jsonin.CodeArgsInvalid

func argsErrorf(format string, args ...any) *Error {
	return &Error{Code: CodeArgsInvalid, Msg: fmt.Sprintf(format, args...)}
}

// coder is any error with a stable code: *Error here, and the error types of
// todo, goal and workspace.
type coder interface{ ErrorCode() string }

// ErrorCode returns the stable code of err or of anything it wraps, or "".
func ErrorCode(err error) string {
	var c coder
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	return ""
}
