package protocol

import (
	"encoding/json"
	"time"
)

// The results that show a session: its State, and those that carry the
// goal or history events besides it (docs/protocol.md §3).

// State is what clients read of a session (docs/protocol.md §3).
type State struct {
	Workspace string        `json:"workspace"` // folder URI
	Session   string        `json:"session"`
	Revision  uint64        `json:"revision"` // the session's revision, bumped by every change
	Todos     TodosState    `json:"todos"`
	Goal      *GoalSnapshot `json:"goal"`  // null when there is no goal
	Queue     QueueState    `json:"queue"` // the upcoming goals (docs/runtime.md §2.9)
	// Stale: the folder's team store (docs/team.md) does not answer; this is
	// the last state this daemon saw. Absent otherwise.
	Stale bool `json:"stale,omitempty"`
	// TeamFile: the folder has a .agentd/team.json that this machine does
	// not use (not accepted, or unusable): this machine's own state serves
	// it (docs/team.md). Absent otherwise. agentd.state only.
	TeamFile *TeamFileNotice `json:"teamFile,omitempty"`
}

// TodosState is the todo list and the session revision of its last change,
// which agentd.todo.set compares expectedRevision with.
type TodosState struct {
	Items    []TodoItem `json:"items"`
	Revision uint64     `json:"revision"`
	// SubagentLists are the lists each subagent of the session keeps, the least
	// recently written first (docs/runtime.md §1.3); absent when there are
	// none. Their writes raise Revision too.
	SubagentLists []SubagentList `json:"subagentLists,omitempty"`
}

// QueueState is the session's goal queue as clients read it
// (docs/protocol.md §3): the upcoming goals, first first, and whether a
// complete goal advances to the first of them (docs/runtime.md §2.9).
type QueueState struct {
	Items       []QueuedGoal `json:"items"` // never null
	AutoAdvance bool         `json:"autoAdvance"`
}

// TeamFileNotice is what agentd.state says of a team file that this
// machine does not use (docs/protocol.md §3, State.teamFile): absent when
// the folder has none, or it is accepted.
type TeamFileNotice struct {
	Status    string   `json:"status"`              // "pending" (not accepted on this machine) or "invalid" (it cannot be used)
	Path      string   `json:"path"`                // ".agentd/team.json", relative to the folder
	ID        string   `json:"id,omitempty"`        // the team id it names
	Endpoints []string `json:"endpoints,omitempty"` // the etcd endpoints it names
	SHA256    string   `json:"sha256"`              // of the file's bytes: what agentd.team.accept takes
	Error     string   `json:"error,omitempty"`     // invalid: why it cannot be used
	Accept    string   `json:"accept,omitempty"`    // pending: "agentd team accept", the command that accepts it
}

// SessionInfo is one row of agentd.sessions.
type SessionInfo struct {
	Session    string     `json:"session"`
	UpdatedAt  time.Time  `json:"updatedAt"`
	TodoCount  int        `json:"todoCount"`
	GoalStatus GoalStatus `json:"goalStatus,omitempty"` // "" when there is no goal
}

// SessionsResult is the answer of agentd.sessions: every session of the
// workspace folder.
type SessionsResult struct {
	Sessions []SessionInfo `json:"sessions"`
}

// HistoryEvent is one entry of a session's history, newest has the highest Seq.
// Seq counts the session's events from 1; At is UTC (docs/runtime.md §6).
type HistoryEvent struct {
	Seq    uint64    `json:"seq"`
	At     time.Time `json:"at"`
	Actor  string    `json:"actor"`
	Kind   EventKind `json:"kind"`
	Reason string    `json:"reason,omitempty"` // the change's reason, if any
	// Revision is the session's revision the change made (0 in events
	// stored by an agentd before it was recorded).
	Revision uint64 `json:"revision,omitempty"`
	// Before is the scope's state before the change (absent when the
	// change gave none, and in older events), as stored (docs/runtime.md §6,
	// "The stored history").
	Before  json.RawMessage `json:"before,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// HistoryResult is the answer of agentd.history: events newest first, and
// whether older ones exist (ask again with before = the last Seq).
type HistoryResult struct {
	Events []HistoryEvent `json:"events"`
	More   bool           `json:"more"`
}

// UndoResult is the answer of agentd.undo: the State after the undo, and
// the change it reverted (its history event, docs/protocol.md §3).
type UndoResult struct {
	State
	Undone HistoryEvent `json:"undone"`
}

// CancelResult is the answer of agentd.goal.cancel: the State after it,
// and the goal it cleared as it ended (its objective, status and usage), so
// that the canceller can say what was cancelled.
type CancelResult struct {
	State
	Cancelled *GoalSnapshot `json:"cancelled"`
}

// CheckResult is the answer of agentd.goal.runCheck: the State after the
// run and the run itself (docs/runtime.md §2.10). The goal's status is
// unchanged; Passed is run.exitCode == 0.
type CheckResult struct {
	State
	Run    CheckRun `json:"run"`
	Passed bool     `json:"passed"`
}

// TurnBeginResult is the answer of agentd.turn.begin.
type TurnBeginResult struct {
	GoalDriven bool          `json:"goalDriven"`
	Goal       *GoalSnapshot `json:"goal"`
}

// TurnEndResult is the answer of agentd.turn.end.
type TurnEndResult struct {
	Continuation *Continuation `json:"continuation"`
	Goal         *GoalSnapshot `json:"goal"`
}

// Continuation is the prompt that starts the next goal turn (docs/runtime.md
// §2.5), as agentd.turn.end answers it (docs/protocol.md §3): the host sends
// Prompt as the next user message, then begins a turn with origin
// "continuation". Variant is one of goal's continuation variants.
type Continuation struct {
	Variant string `json:"variant"`
	Prompt  string `json:"prompt"`
}
