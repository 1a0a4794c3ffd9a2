package goal

import "time"

// Status of a goal (docs/runtime.md §2.1).
type Status string

// The goal statuses: the spec's four and waiting, our addition
// (docs/runtime.md §2.13).
const (
	Active   Status = "active"
	Paused   Status = "paused"
	Blocked  Status = "blocked"
	Complete Status = "complete"
	Waiting  Status = "waiting"
)

// Statuses returns every goal status, in the order above. A status added
// here must be handled wherever Go code switches on a status: its change
// kind (Status.ChangeKind), the per-turn goal reminder
// (reminder.GoalReminder), the exit code of `agentd goal status
// --exit-code` (commands.StatusExitCode), and the statuses each action
// accepts (PauseFrom and the others below); TestEveryGoalStatus in tests/
// runs each status through all of them and fails until each handles it.
func Statuses() []Status { return []Status{Active, Paused, Blocked, Complete, Waiting} }

// The statuses each status-changing action accepts, declared once: the
// rules (State.Pause, State.Resume, State.SetBudget, the SetGoalBudget and
// UpdateGoal tools) check these, commands/protocolgen writes them into the
// clients' protocol files, and the clients offer an action only for a goal
// in one of its statuses (the VS Code manifest's when clauses are tested
// against them). A status added to Statuses belongs in each set whose
// action it allows. Cancel accepts every status.

// PauseFrom returns the statuses a user may pause a goal from
// (docs/runtime.md §2.3, §2.13). Pausing a paused goal is a no-op.
func PauseFrom() []Status { return []Status{Active, Waiting} }

// ResumeFrom returns the statuses a goal may be resumed from, by the user
// or by the model with UpdateGoal active (docs/runtime.md §2.3; the model
// a waiting goal only when the wait is its own, §2.13). Resuming an
// active goal is a no-op.
func ResumeFrom() []Status { return []Status{Paused, Blocked, Waiting} }

// BudgetFrom returns the statuses in which a goal's budget may be changed,
// by the user or by the model with SetGoalBudget (docs/runtime.md §2.3,
// §2.8).
func BudgetFrom() []Status { return []Status{Active, Paused, Blocked, Waiting} }

// ModelStatuses returns the statuses the model may set with UpdateGoal
// (docs/runtime.md §2.8), in the order of the tool schema's enum.
func ModelStatuses() []Status { return []Status{Active, Complete, Blocked, Waiting} }

// ChangeKind is the kind of the change that moves a goal to s: resume,
// pause, block, complete or wait (a wake is a move to active of its own
// kind, ChangeWake); false for a status that is not declared.
func (s Status) ChangeKind() (ChangeKind, bool) {
	switch s {
	case Active:
		return ChangeResume, true
	case Paused:
		return ChangePause, true
	case Blocked:
		return ChangeBlock, true
	case Complete:
		return ChangeComplete, true
	case Waiting:
		return ChangeWait, true
	}
	return "", false
}

// Actor says who made a change (docs/runtime.md §2.1): of the goal, and of the
// todo list too (todo has no notion of actors; the commands layer records
// its changes with these), the one actor type of agentd.
type Actor string

// The four actors.
const (
	User    Actor = "user"
	Model   Actor = "model"
	Runtime Actor = "runtime"
	System  Actor = "system"
)

// Snapshot is the goal as clients see it (docs/runtime.md §2.1). Models see it
// without GoalID (see ModelView). Durations are milliseconds; counts are
// plain integers.
type Snapshot struct {
	GoalID              string        `json:"goalId,omitempty"`
	Objective           string        `json:"objective"`
	CompletionCriterion string        `json:"completionCriterion,omitempty"`
	Status              Status        `json:"status"`
	TurnsUsed           int64         `json:"turnsUsed"`
	TokensUsed          int64         `json:"tokensUsed"`
	WallClockMs         int64         `json:"wallClockMs"`
	Budget              BudgetReport  `json:"budget"`
	TerminalReason      string        `json:"terminalReason,omitempty"`
	TaskFile            *TaskFileInfo `json:"taskFile,omitempty"`
	// Check is the goal's verification command and its last run; absent
	// when the goal has none (docs/runtime.md §2.10).
	Check     *Check    `json:"check,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	LastActor Actor     `json:"lastActor"`
	// Stalled: goal turns in a row made no change to the todo list or the
	// task file (the stallTurns setting; docs/runtime.md §2.4.5).
	Stalled bool `json:"stalled"`
	// RequireTodos: the goal requires the items of the todo list
	// (docs/runtime.md §2.12).
	RequireTodos bool `json:"requireTodos"`
	// Progress counts the todo list's items and the task file's
	// checkboxes; absent when there are neither, and absent from a
	// snapshot taken without the list (WithPlan, docs/runtime.md §2.12).
	Progress *Progress `json:"progress,omitempty"`
	// Wait is what a waiting goal waits for; nil unless it waits
	// (docs/runtime.md §2.13).
	Wait *Wait `json:"wait,omitempty"`
	// Woke is the reason of the wake that made the goal active again,
	// until the model is told (the first step of a goal turn, or the
	// continuation); not part of the wire snapshot.
	Woke string `json:"-"`
}

// BudgetReport is the budget part of a Snapshot. Limits are nil when not
// set; Remaining* are nil when there is no limit, else max(0, limit-used).
// A budget is reached when used >= limit (docs/runtime.md §2.1).
type BudgetReport struct {
	TokenBudget            *int64 `json:"tokenBudget"`
	TurnBudget             *int64 `json:"turnBudget"`
	WallClockBudgetMs      *int64 `json:"wallClockBudgetMs"`
	RemainingTokens        *int64 `json:"remainingTokens"`
	RemainingTurns         *int64 `json:"remainingTurns"`
	RemainingWallClockMs   *int64 `json:"remainingWallClockMs"`
	TokenBudgetReached     bool   `json:"tokenBudgetReached"`
	TurnBudgetReached      bool   `json:"turnBudgetReached"`
	WallClockBudgetReached bool   `json:"wallClockBudgetReached"`
	OverBudget             bool   `json:"overBudget"`
}

// TaskFileInfo is what agentd knows of a goal's task file (docs/runtime.md §4).
// Path is relative to the workspace root, with forward slashes.
type TaskFileInfo struct {
	Path                 string     `json:"path"`
	Exists               bool       `json:"exists"`
	SHA256               string     `json:"sha256,omitempty"`
	Size                 int64      `json:"size"`
	ModifiedAt           *time.Time `json:"modifiedAt,omitempty"`
	ChangedSinceLastTurn bool       `json:"changedSinceLastTurn"`
	// Checkboxes are the file's Markdown checkboxes (docs/task-files.md,
	// "Checkboxes"); nil when it has none or was not read.
	Checkboxes *Checkboxes `json:"checkboxes,omitempty"`
}

// ModelView is the snapshot as a model sees it: the same fields without
// GoalID (docs/runtime.md §2.1, §2.8).
func (s Snapshot) ModelView() Snapshot {
	s.GoalID = ""
	return s
}
