package commands

import (
	"fmt"

	"github.com/agentd/agentd/commands/protocol"
)

// Error is a refusal with a stable code (docs/runtime.md §3): the
// protocol's one coded error, named here for the commands.
type Error = protocol.Error

func argsErrorf(format string, args ...any) *Error {
	return &Error{Code: protocol.CodeArgsInvalid, Msg: fmt.Sprintf(format, args...)}
}
