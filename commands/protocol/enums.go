package protocol

// Origin is why a turn began (docs/protocol.md §3 agentd.turn.begin).
type Origin string

// Turn origins.
const (
	OriginUser         Origin = "user"
	OriginContinuation Origin = "continuation"
	OriginResume       Origin = "resume"
)

// FinishReason is how a step (one model response) ended.
type FinishReason string

// Step finish reasons.
const (
	FinishStop      FinishReason = "stop"
	FinishToolCalls FinishReason = "tool_calls"
)

// Outcome is how a turn ended (docs/protocol.md §3 agentd.turn.end).
type Outcome string

// Turn outcomes (docs/runtime.md §2.6).
const (
	OutcomeCompleted Outcome = "completed"
	OutcomeCancelled Outcome = "cancelled" // user interrupt
	OutcomeFailed    Outcome = "failed"    // with an error kind
	OutcomeBlocked   Outcome = "blocked"   // a host hook refused the prompt
	OutcomeStepLimit Outcome = "stepLimit"
)

// UndoScope names what agentd.undo reverts (docs/runtime.md §6).
type UndoScope string

// The undo scopes; "" is the newest change of either.
const (
	UndoTodo UndoScope = "todo"
	UndoGoal UndoScope = "goal"
)

// UndoScopes returns the scopes, for the error naming them.
func UndoScopes() []UndoScope { return []UndoScope{UndoTodo, UndoGoal} }

// TodoStatus is the state of one todo item. docs/runtime.md §1 fixes the
// three values.
type TodoStatus string

// The only accepted todo statuses (docs/runtime.md §1).
const (
	TodoPending    TodoStatus = "pending"
	TodoInProgress TodoStatus = "in_progress"
	TodoDone       TodoStatus = "done"
)

// TodoItem is one entry of the todo list. Order of items in a list is
// kept exactly.
type TodoItem struct {
	Title  string     `json:"title"`
	Status TodoStatus `json:"status"`
}

// SubagentList is the todo list of one subagent of a session
// (docs/runtime.md §1.3): its own list, kept beside the session's list and
// never changing it.
type SubagentList struct {
	Agent string `json:"agent"` // the subagent's id, as its calls name it
	// ParentItem is the title of the session list's item that was
	// in_progress when the subagent first wrote its list; absent when no
	// item was, or several were.
	ParentItem string     `json:"parentItem,omitempty"`
	Items      []TodoItem `json:"items"` // never null
}

// Valid reports whether s is one of the three statuses.
func (s TodoStatus) Valid() bool {
	switch s {
	case TodoPending, TodoInProgress, TodoDone:
		return true
	}
	return false
}
