package workspace

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/todo"
	"github.com/agentd/agentd/workspace/wsfolder"
)

// DefaultSession is the session used when a caller names none (docs/runtime.md,
// scope); it is folder's, named here for the packages above workspace.
const DefaultSession = wsfolder.DefaultSession

// Session is the state of one session of one workspace folder. It is a
// value: Update hands the callback a private copy, and View returns one.
// Its stored form is sessionRecord (record.go), not its own JSON.
type Session struct {
	Name          string
	Revision      uint64      // bumped by every change (docs/runtime.md §1, [agentd])
	Todos         []todo.Item // never nil once stored
	TodosRevision uint64      // Revision at the list's last change (docs/protocol.md §3, State)
	TodoUsage     todo.Usage  // counters of the stale todo reminder (docs/runtime.md §1.1)
	// SubagentLists are the lists each subagent of the session keeps, least recently
	// written first (docs/runtime.md §1.3); their writes are Todos changes.
	SubagentLists []todo.SubagentList
	Goal          goal.State // owned by package goal
	UpdatedAt     time.Time
	Requests      []Request // the identified writes it applied, newest last (request.go)
}

// Change describes what an Update callback did. The zero Change means
// "nothing changed": nothing is written and no one is told.
type Change struct {
	Kind   protocol.EventKind // what happened, e.g. "todo.set", "goal.create", "goal.pause"; "" = no change
	Actor  goal.Actor         // who made the change: user, model, runtime or system (docs/runtime.md §2.1); one type for todo and goal changes
	Reason string             // human-readable reason, if the change has one
	Todos  bool               // the todo list changed (the store sets TodosRevision)
	Goal   bool               // the goal changed
	// Payload is the change's detail stored in the history event: a
	// TodoPayload, GoalPayload or QueuePayload (historyrecord.go), each
	// stored as its record; nil stores none.
	Payload HistoryPayload
	// Before is the state of the change's scope before it, stored in the
	// history event for undo and the panels' history (docs/runtime.md §6):
	// a TodosBefore or GoalBefore (historyrecord.go); nil stores none.
	Before HistoryBefore
	// Quiet marks a counters-only change (e.g. a step ended with no goal):
	// it is stored durably but bumps no revision, appends no history event
	// and is not published.
	Quiet bool
	// TaskFile: the goal's task file changed on disk; clients also get
	// agentd/taskFileChanged (docs/protocol.md §4).
	TaskFile bool
	// Queue: the session's goal queue or its auto-advance changed; clients
	// get agentd/queueChanged (docs/protocol.md §4).
	Queue bool
	// Completed is set with an advance (docs/runtime.md §2.9): the goal that
	// completed in the same write, as it ended. Clients get its
	// agentd/goalChanged of kind complete before the one of the advance.
	Completed *goal.Snapshot
	// GoalKind is the kind of goal change agentd/goalChanged tells, when Goal
	// is set and Kind is not a goal event: a todo write that ends a stall
	// (goal.ChangeStallCleared). "" means Kind without its "goal." prefix.
	GoalKind goal.ChangeKind
	// Percent is the threshold of a goal.budgetWarning (50 or 80).
	Percent int
	// Reads names the parts of the session the change was decided on
	// (parts.go; docs/team.md, "A session in parts"); zero, the safe
	// default, is every part. A team's store commits the change only if
	// those parts (and head, which every change that is not quiet writes)
	// are as the change read them, so two changes that read and wrote
	// disjoint parts both commit without a conflict. A change that writes a
	// part it does not name fails with an internal error wrapping
	// ErrNotSaved, and nothing is written.
	Reads Parts
}

// Event is one entry of a session's history, newest has the highest Seq.
// Seq counts the session's events from 1 (bbolt bucket sequence); At is UTC.
// Its JSON is what agentd.history answers; its stored form is eventRecord
// (record.go).
type Event struct {
	Seq    uint64             `json:"seq"`
	At     time.Time          `json:"at"`
	Actor  string             `json:"actor"`
	Kind   protocol.EventKind `json:"kind"`
	Reason string             `json:"reason,omitempty"` // Change.Reason, if any
	// Revision is the session's revision the change made (0 in events
	// stored by an agentd before it was recorded).
	Revision uint64 `json:"revision,omitempty"`
	// Before is the JSON of Change.Before: the scope's state before the
	// change (absent when the change gave none, and in older events).
	Before  json.RawMessage `json:"before,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// Notice is published to subscribers after a change has been committed,
// here or, for a team folder, by another daemon (docs/team.md). A Notice
// with Store set reports a change of the store's status instead: Session
// and Change are then zero.
type Notice struct {
	Workspace *Workspace
	Session   Session // the session as committed (a private copy)
	Change    Change
	Store     *StoreStatus
}

// StoreStatus is the status of a team folder's store (Workspace.Stale).
type StoreStatus struct {
	Stale bool // etcd does not answer: reads serve the last state seen
}

// cloneSession returns a copy of s that shares no mutable memory with it,
// so that callers may change what they get (Update's fn, View, notices).
func cloneSession(s Session) Session {
	s.Todos = todo.Clone(s.Todos)
	s.SubagentLists = todo.CloneSubagentLists(s.SubagentLists)
	s.Goal = s.Goal.Clone()
	s.Requests = slices.Clone(s.Requests)
	return s
}
