package protocol

import "time"

// The goal as the wire carries it (docs/runtime.md §2.1, docs/protocol.md
// §3): the results and notifications that show a goal carry these values,
// which package commands fills from the goal package's rules. Their JSON is
// the goal's as clients have always read it (commands' TestResultGolden,
// TestWireMirrorsDomain).

// GoalStatus is the status of a goal (docs/runtime.md §2.1): one of the
// values goal.Statuses declares ("active", "paused", "blocked", "complete").
type GoalStatus string

// Actor says who made a change (docs/runtime.md §2.1): "user", "model",
// "runtime" or "system", the values of goal.Actor.
type Actor string

// GoalChangeKind says what happened to the goal (agentd/goalChanged's
// change.kind, docs/protocol.md §4): the values of goal.ChangeKind.
type GoalChangeKind string

// GoalSnapshot is the goal as clients see it (docs/runtime.md §2.1). Models see it
// without GoalID (goal.Snapshot.ModelView). Durations are milliseconds;
// counts are plain integers.
type GoalSnapshot struct {
	GoalID              string        `json:"goalId,omitempty"`
	Objective           string        `json:"objective"`
	CompletionCriterion string        `json:"completionCriterion,omitempty"`
	Status              GoalStatus    `json:"status"`
	TurnsUsed           int64         `json:"turnsUsed"`
	TokensUsed          int64         `json:"tokensUsed"`
	WallClockMs         int64         `json:"wallClockMs"`
	Budget              GoalBudget    `json:"budget"`
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
	// checkboxes; absent when there are neither (docs/runtime.md §2.12).
	Progress *Progress `json:"progress,omitempty"`
	// Wait is what a waiting goal waits for; absent unless the status is
	// "waiting" (docs/runtime.md §2.13).
	Wait *GoalWait `json:"wait,omitempty"`
}

// GoalWait is what a waiting goal waits for (docs/runtime.md §2.13):
// since when and by whom, and its wake conditions. Any one condition
// wakes it; a person's resume always does.
type GoalWait struct {
	Since time.Time `json:"since"`
	By    Actor     `json:"by"`
	Note  string    `json:"note,omitempty"`
	// Until: wake when this time arrives.
	Until *time.Time `json:"until,omitempty"`
	// Paths: wake when one of these workspace-relative files or folders
	// changes.
	Paths []string `json:"paths,omitempty"`
	// CheckPasses: wake when the goal's check, approved on this machine,
	// passes (polled with back-off).
	CheckPasses bool `json:"checkPasses,omitempty"`
	// WallClock is "counts" (the wait counts against the wall-clock
	// budget) or "stops" (a person's choice only).
	WallClock string `json:"wallClock"`
}

// WaitConditions is what ends a wait, as a model (UpdateGoal's wait) or
// a person (agentd.goal.wait) asks for it (docs/runtime.md §2.13): at
// least one of Until, For, Paths and CheckPasses.
type WaitConditions struct {
	// Until is a time: RFC 3339, or a time of day "HH:MM" (its next
	// occurrence, in the daemon's local time).
	Until string `json:"until,omitempty"`
	// For is a duration from now, as "90s", "30m", "2h30m".
	For string `json:"for,omitempty"`
	// Paths are files or folders inside the workspace.
	Paths       []string `json:"paths,omitempty"`
	CheckPasses bool     `json:"checkPasses,omitempty"`
	Note        string   `json:"note,omitempty"`
}

// GoalBudget is the budget part of a GoalSnapshot. Limits are nil when not
// set; Remaining* are nil when there is no limit, else max(0, limit-used).
// A budget is reached when used >= limit (docs/runtime.md §2.1).
type GoalBudget struct {
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

// Progress is a goal's progress as its plan shows it (docs/runtime.md
// §2.12): the session's todo list and the task file's checkboxes; each
// part is absent when there is nothing to count.
type Progress struct {
	Todos      *TodoProgress `json:"todos,omitempty"`
	Checkboxes *Checkboxes   `json:"checkboxes,omitempty"`
}

// TodoProgress counts the items of the todo list: done of total, and the
// titles of the open ones in list order (at most 20 named).
type TodoProgress struct {
	Done  int      `json:"done"`
	Total int      `json:"total"`
	Open  []string `json:"open"`
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

// Checkboxes counts the Markdown checkboxes of a task file
// (docs/task-files.md, "Checkboxes"): Total items, Checked of them ticked.
type Checkboxes struct {
	Checked int `json:"checked"`
	Total   int `json:"total"`
}

// Check is a goal's verification command as it is shown
// (docs/runtime.md §2.10): the command, whether a run is in progress, and
// the last run's result, nil before the first run.
type Check struct {
	Command string `json:"command"`
	// SetBy is the person who set the command (docs/runtime.md §2.10.4):
	// the OS user and host name of the machine whose agentd took the
	// setting; nil in a state written before it was recorded.
	SetBy *CheckSetter `json:"setBy,omitempty"`
	// Approved says whether the person at the machine of the agentd that
	// answers has approved the command, so that it may run there
	// (docs/runtime.md §2.10.4); nil in history events.
	Approved *bool `json:"approved,omitempty"`
	// SetOutsideAgentd: in a team folder, no history event records this
	// command with this SetBy, so the session was written to etcd other
	// than by agentd and SetBy cannot be trusted (docs/team.md).
	SetOutsideAgentd bool      `json:"setOutsideAgentd,omitempty"`
	Running          bool      `json:"running,omitempty"`
	LastRun          *CheckRun `json:"lastRun,omitempty"`
}

// CheckSetter is the person who set a check (docs/runtime.md §2.10.4): the
// OS user and the host name of their machine.
type CheckSetter struct {
	User string `json:"user"`
	Host string `json:"host"`
}

// CheckRun is the result of one run of a check. ExitCode is the command's
// exit status; -1 when it did not exit by itself (killed at the time
// limit, or when the goal ended) or did not start, and OutputTail then ends
// with a line that says so. DurationMs is the time it ran, At when it
// ended. OutputTail is at most the last 4096 bytes of its output
// (goal.MaxCheckTailBytes), valid UTF-8.
type CheckRun struct {
	ExitCode   int       `json:"exitCode"`
	DurationMs int64     `json:"durationMs"`
	At         time.Time `json:"at"`
	OutputTail string    `json:"outputTail"`
	// RunID names the run (docs/runtime.md §2.10.5): only the run the goal
	// waits on completes it.
	RunID string `json:"runId,omitempty"`
}

// QueuedGoal is one upcoming goal of a session's queue (docs/runtime.md
// §2.9): what becomes the active goal when the current one completes. ID is
// a uuid that stays the item's while it waits (remove and move name it);
// Check is the optional verification command a person gave it (docs/runtime.md
// §2.9.1); AddedAt is when it was queued (wall clock, UTC).
type QueuedGoal struct {
	ID                  string `json:"id"`
	Objective           string `json:"objective"`
	CompletionCriterion string `json:"completionCriterion,omitempty"`
	Check               string `json:"check,omitempty"`
	// CheckSetBy is who gave Check (Check.SetBy).
	CheckSetBy *CheckSetter `json:"checkSetBy,omitempty"`
	// CheckApproved is Check.Approved for Check: filled in by the agentd
	// that answers from its own approvals.
	CheckApproved *bool     `json:"checkApproved,omitempty"`
	AddedAt       time.Time `json:"addedAt"`
	// TurnBudget, TokenBudget and WallClockBudgetMs are the budgets the
	// person gave the queued goal (absent: no limit); the goal it starts
	// has them as the person's (docs/runtime.md §2.9.1).
	TurnBudget        *int64 `json:"turnBudget,omitempty"`
	TokenBudget       *int64 `json:"tokenBudget,omitempty"`
	WallClockBudgetMs *int64 `json:"wallClockBudgetMs,omitempty"`
}
