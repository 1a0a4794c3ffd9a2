package protocol

import "time"

// Notification methods (docs/protocol.md §4); the params of each are the
// type named after it (TodoChanged, GoalChanged, TaskFileChanged,
// QueueChanged, StoreChanged).
const (
	MethodTodoChanged     = "agentd/todoChanged"
	MethodGoalChanged     = "agentd/goalChanged"
	MethodTaskFileChanged = "agentd/taskFileChanged"
	MethodQueueChanged    = "agentd/queueChanged"
	MethodStoreChanged    = "agentd/storeChanged"
)

// StoreChanged is the params of agentd/storeChanged (docs/protocol.md §4.3):
// the store of a team folder (docs/team.md) became unreachable, so what the
// client shows may be behind (stale), or reachable again.
type StoreChanged struct {
	Workspace string `json:"workspace"`
	Stale     bool   `json:"stale"` // true: etcd does not answer; reads serve the last state seen, writes fail with workspace.unavailable
}

// TodoChanged is the params of agentd/todoChanged.
type TodoChanged struct {
	Workspace string     `json:"workspace"`
	Session   string     `json:"session"`
	Revision  uint64     `json:"revision"`
	Items     []TodoItem `json:"items"`
	Actor     Actor      `json:"actor"`
	// SubagentLists is State.todos.subagentLists after the change
	// (docs/runtime.md §1.3); absent when there are none.
	SubagentLists []SubagentList `json:"subagentLists,omitempty"`
}

// GoalChanged is the params of agentd/goalChanged.
type GoalChanged struct {
	Workspace string        `json:"workspace"`
	Session   string        `json:"session"`
	Revision  uint64        `json:"revision"`
	Goal      *GoalSnapshot `json:"goal"`
	Change    GoalChange    `json:"change"`
}

// GoalChange says what happened to the goal.
type GoalChange struct {
	Kind   GoalChangeKind `json:"kind"`
	Status GoalStatus     `json:"status,omitempty"`
	Reason string         `json:"reason,omitempty"`
	Actor  Actor          `json:"actor"`
	// Percent is the threshold of a budgetWarning: 50 or 80
	// (docs/runtime.md §2.4.4); absent for other kinds.
	Percent int `json:"percent,omitempty"`
}

// TaskFileChanged is the params of agentd/taskFileChanged (docs/protocol.md §4).
type TaskFileChanged struct {
	Workspace string    `json:"workspace"`
	Session   string    `json:"session"`
	Revision  uint64    `json:"revision"`
	Path      string    `json:"path"`   // relative to the workspace folder, with forward slashes
	Exists    bool      `json:"exists"` // false: missing (deleted, moved, not created yet)
	SHA256    string    `json:"sha256,omitempty"`
	ChangedAt time.Time `json:"changedAt"` // when agentd recorded the change
	// Checkboxes of the file now (docs/task-files.md, "Checkboxes"); absent
	// when it has none.
	Checkboxes *Checkboxes `json:"checkboxes,omitempty"`
}

// QueueChanged is the params of agentd/queueChanged (docs/protocol.md §4):
// the session's goal queue after a change, as agentd.state has it.
type QueueChanged struct {
	Workspace   string       `json:"workspace"`
	Session     string       `json:"session"`
	Revision    uint64       `json:"revision"`
	Items       []QueuedGoal `json:"items"` // never null
	AutoAdvance bool         `json:"autoAdvance"`
	Actor       Actor        `json:"actor"`
}
