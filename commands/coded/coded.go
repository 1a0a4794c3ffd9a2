// Package coded is the refusal with a stable code that agentd's commands
// return (Error, docs/runtime.md §3), apart from package commands so that a
// client that rebuilds one from a daemon's answer (lsp/daemon/client) links
// neither the command table nor the store below it: agentd-hook, run once
// per agent event, pays for every package it links at each exec
// (docs/performance.md). package commands names it commands.Error.
// Standard library only.
package coded

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
