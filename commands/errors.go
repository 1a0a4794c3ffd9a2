package commands

import (
	"errors"
	"fmt"

	"github.com/agentd/agentd/commands/coded"
	"github.com/agentd/agentd/jsonin"
)

// Error is a refusal with a stable code (docs/runtime.md §3): coded.Error,
// named here for the commands and the packages above them.
type Error = coded.Error

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
