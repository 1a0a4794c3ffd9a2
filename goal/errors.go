package goal

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/jsonin"
)

// Stable error codes of the goal runtime (docs/runtime.md §3). The commands layer
// maps them to JSON-RPC errors; tool results carry them in ErrorCode.
const (
	CodeAlreadyExists    = "goal.already_exists"
	CodeNotFound         = "goal.not_found"
	CodeObjectiveEmpty   = "goal.objective_empty"
	CodeObjectiveTooLong = "goal.objective_too_long"
	CodeStatusInvalid    = "goal.status_invalid"
	CodeNotResumable     = "goal.not_resumable"
	CodeUnsupportedAgent = "goal.unsupported_agent"
	CodeStaleCall        = "goal.stale_call"
	CodeBudgetInvalid    = "goal.budget_invalid"
	CodeTaskFileOutside  = "goal.task_file_outside"
	// CodeCheckFailed: the goal's check did not pass (it exited non-zero,
	// ran out of time or did not start), so it was not completed
	// (docs/runtime.md §2.10.1).
	CodeCheckFailed = "goal.check_failed"
	// CodeCheckRunning: the goal's check is running; one run at a time.
	CodeCheckRunning = "goal.check_running"
	// CodeNoCheck: the goal has no check to run.
	CodeNoCheck = "goal.no_check"
	// CodePersonSet: the model tried to drop or get around what a person
	// set: replace a goal that has a person's check or budget, or raise a
	// person's limit (docs/runtime.md §2.11).
	CodePersonSet = "goal.person_set"
	// CodeCheckUnapproved: the goal's check was not approved by the person
	// at this machine, so it does not run here (docs/runtime.md §2.10.4).
	CodeCheckUnapproved = "goal.check_unapproved"
	// CodeCheckChanged: the check to approve is not the goal's check any
	// more; nothing was approved (docs/runtime.md §2.10.4).
	CodeCheckChanged = "goal.check_changed"
	// CodeTodosOpen: the goal requires its todo items and some are not
	// done, so the model may not complete it, nor drop those items from
	// the list (docs/runtime.md §2.12).
	CodeTodosOpen = "goal.todos_open"
	// CodeArgsInvalid is args.invalid, declared once in jsonin: a badly
	// shaped input, a turn id or reason the rules refuse.
	CodeArgsInvalid = jsonin.CodeArgsInvalid
)

// Error is a refusal with a stable code (docs/runtime.md §3): the
// protocol's one coded error, named here for the rules. Msg is lowercase
// without a final period, readable by a person; callers find the code with
// protocol.ErrorCode.
type Error = protocol.Error

func errorf(code, msg string) *Error { return &Error{Code: code, Msg: msg} }

// sentence turns an error message into model-facing prose: first letter
// upper case, final period.
func sentence(msg string) string {
	if msg == "" {
		return msg
	}
	r, n := utf8.DecodeRuneInString(msg)
	msg = string(unicode.ToUpper(r)) + msg[n:]
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}
