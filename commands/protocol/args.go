package protocol

import "encoding/json"

// Common holds the optional fields every command accepts (docs/protocol.md §3).
type Common struct {
	Workspace string `json:"workspace,omitempty"` // folder URI or absolute path
	Session   string `json:"session,omitempty"`   // default: the connection's, else "default"
	Agent     string `json:"agent,omitempty"`     // default "main"
}

// CommonArgs returns c, so that every Args struct (each embeds Common) gives
// its common fields to the dispatcher.
func (c *Common) CommonArgs() *Common { return c }

// NoArgs is the ARGS of a command that takes none besides Common.
type NoArgs struct{ Common }

// CallToolArgs is the ARGS of agentd.callTool.
type CallToolArgs struct {
	Common
	Name   string          `json:"name"`
	Input  json.RawMessage `json:"input"`
	TurnID string          `json:"turnId,omitempty"`
}

// DescribeToolArgs is the ARGS of agentd.describeTool.
type DescribeToolArgs struct {
	Common
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// HistoryArgs is the ARGS of agentd.history.
type HistoryArgs struct {
	Common
	Limit  int    `json:"limit,omitempty"`
	Before uint64 `json:"before,omitempty"`
}

// TodoSetArgs is the ARGS of agentd.todo.set. Items is required ([]
// clears the list).
type TodoSetArgs struct {
	Common
	Items            *[]TodoItem `json:"items"`
	ExpectedRevision *uint64     `json:"expectedRevision,omitempty"`
}

// AwaitChangeArgs is the ARGS of agentd.awaitChange.
type AwaitChangeArgs struct {
	Common
	AfterRevision uint64 `json:"afterRevision"`
	TimeoutMs     int64  `json:"timeoutMs,omitempty"`
}

// GoalCreateArgs is the ARGS of agentd.goal.create.
type GoalCreateArgs struct {
	Common
	// RequestID, if set, is chosen by the client so that the create sent
	// again (after workspace.outcome_unknown, or a lost answer) is applied
	// once: the copy the session applied already answers its state.
	RequestID           string `json:"requestId,omitempty"`
	Objective           string `json:"objective"`
	CompletionCriterion string `json:"completionCriterion,omitempty"`
	Replace             bool   `json:"replace,omitempty"`
	TaskFile            string `json:"taskFile,omitempty"`
	Check               string `json:"check,omitempty"`
	// RequireTodos: the goal requires the items of the todo list
	// (docs/runtime.md §2.12); absent means true, false is the person's
	// choice only.
	RequireTodos *bool `json:"requireTodos,omitempty"`
}

// GoalRunCheckArgs is the ARGS of agentd.goal.runCheck.
type GoalRunCheckArgs struct {
	Common
	// RequestID, if set, is chosen by the client so that the start sent
	// again (after workspace.outcome_unknown, or a lost answer) starts no
	// second run: the copy the session applied already answers the run
	// the first copy started.
	RequestID string `json:"requestId,omitempty"`
}

// GoalSetCheckArgs is the ARGS of agentd.goal.setCheck: Command nil
// removes the check; the field must be given.
type GoalSetCheckArgs struct {
	Common
	Command *string `json:"command" jsonin:"given"`
}

// GoalApproveCheckArgs is the ARGS of agentd.goal.approveCheck.
type GoalApproveCheckArgs struct {
	Common
	Command string `json:"command" jsonin:"required"`
}

// GoalPauseArgs is the ARGS of agentd.goal.pause.
type GoalPauseArgs struct {
	Common
	Reason string `json:"reason,omitempty"`
}

// GoalWaitArgs is the ARGS of agentd.goal.wait (docs/runtime.md §2.13).
// WallClock is "counts" (the default) or "stops".
type GoalWaitArgs struct {
	Common
	WaitConditions
	WallClock string `json:"wallClock,omitempty"`
}

// GoalSetBudgetArgs is the ARGS of agentd.goal.setBudget.
type GoalSetBudgetArgs struct {
	Common
	BudgetUpdate
}

// QueueAddArgs is the ARGS of agentd.goal.queue.add.
type QueueAddArgs struct {
	Common
	// ID, if set, is the queued goal's id, chosen by the client so that
	// the add sent again (after workspace.outcome_unknown, or a lost
	// answer) does not queue the goal twice.
	ID                  string  `json:"id,omitempty"`
	Objective           string  `json:"objective"`
	CompletionCriterion string  `json:"completionCriterion,omitempty"`
	Check               *string `json:"check,omitempty"`
	// BudgetUpdate is the queued goal's budgets, in the shape and with
	// the rules of agentd.goal.setBudget (a null field is no limit).
	BudgetUpdate
}

// QueueIDArgs is the ARGS of agentd.goal.queue.remove.
type QueueIDArgs struct {
	Common
	ID string `json:"id" jsonin:"required"`
}

// QueueMoveArgs is the ARGS of agentd.goal.queue.move.
type QueueMoveArgs struct {
	Common
	ID    string `json:"id" jsonin:"required"`
	Index int    `json:"index" jsonin:"required"`
}

// QueueAutoAdvanceArgs is the ARGS of agentd.goal.queue.setAutoAdvance.
type QueueAutoAdvanceArgs struct {
	Common
	On bool `json:"on" jsonin:"required"`
}

// UndoArgs is the ARGS of agentd.undo.
type UndoArgs struct {
	Common
	Scope            UndoScope `json:"scope,omitempty"`
	ExpectedRevision *uint64   `json:"expectedRevision,omitempty"`
	// RequestID, if set, is chosen by the client so that the undo sent
	// again (after workspace.outcome_unknown, or a lost answer) does not
	// undo a second change: the copy the session applied already answers
	// its state and the change it reverted.
	RequestID string `json:"requestId,omitempty"`
}

// TeamAcceptArgs is the ARGS of agentd.team.accept.
type TeamAcceptArgs struct {
	Common
	SHA256 string `json:"sha256"`
}

// TurnBeginArgs is the ARGS of agentd.turn.begin.
type TurnBeginArgs struct {
	Common
	TurnID string `json:"turnId"`
	Origin Origin `json:"origin"`
	// Detached: the turn outlives the connection that began it (a host
	// that connects once per event, agentd hook); it is never abandoned
	// when that connection closes, only ended by agentd.turn.end.
	Detached bool `json:"detached,omitempty"`
}

// StepBeginArgs is the ARGS of agentd.step.begin.
type StepBeginArgs struct {
	Common
	TurnID string `json:"turnId"`
}

// StepEndArgs is the ARGS of agentd.step.end.
type StepEndArgs struct {
	Common
	TurnID       string       `json:"turnId"`
	OutputTokens int64        `json:"outputTokens"`
	FinishReason FinishReason `json:"finishReason"`
}

// StepNextArgs is the ARGS of agentd.step.next.
type StepNextArgs struct {
	Common
	TurnID       string       `json:"turnId"`
	OutputTokens int64        `json:"outputTokens"`
	FinishReason FinishReason `json:"finishReason"`
}

// TurnEndArgs is the ARGS of agentd.turn.end.
type TurnEndArgs struct {
	Common
	TurnID  string     `json:"turnId"`
	Outcome Outcome    `json:"outcome"`
	Error   *TurnError `json:"error,omitempty"`
}

// TurnError is why a turn failed (agentd.turn.end's error).
type TurnError struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// Args is the ARGS of any command: a pointer to one of the Args structs
// above, which all embed Common.
type Args interface{ CommonArgs() *Common }
