package protocol

import "strings"

// EventKind is the kind of a session's history event and of the change
// that made it (docs/runtime.md §5.3): "todo." and how the list changed,
// "goal." and the goal's change kind (GoalEvent), or "queue." and the
// queue's change (QueueEvent). It is the one set of these names: every
// package builds and reads them here.
type EventKind string

// The todo events, and the kinds of the quiet changes, which bump no
// revision and store no event (a change's counters only).
const (
	EventTodoWrite EventKind = "todo.write" // the model's TodoList
	EventTodoSet   EventKind = "todo.set"   // a person's edit
	EventTodoUndo  EventKind = "todo.undo"  // an undo of a todo change (docs/runtime.md §6)
	// EventTodoSubagentWrite: a subagent's TodoList wrote its own list
	// (docs/runtime.md §1.3), no change of the session's; an undo looks
	// past it (§6).
	EventTodoSubagentWrite EventKind = "todo.subagentWrite"

	EventTodoRead         EventKind = "todo.read"         // quiet: a TodoList read, the stale reminder's counters
	EventGoalBookkeeping  EventKind = "goal.bookkeeping"  // quiet: a goal's counters only
	EventGoalCheckProcess EventKind = "goal.checkProcess" // quiet: the process of a running check
)

// The scopes the kinds begin with.
const (
	todoEvents  = "todo."
	goalEvents  = "goal."
	queueEvents = "queue."
)

// GoalEvent is the kind of the event of a goal change of kind k, "goal."
// and k ("goal.pause").
func GoalEvent(k GoalChangeKind) EventKind { return EventKind(goalEvents + string(k)) }

// QueueEvent is the kind of the event of a queue change ("add", "remove",
// "move", "autoAdvance"): "queue." and the change ("queue.add").
func QueueEvent(change string) EventKind { return EventKind(queueEvents + change) }

// IsTodo says whether k is a change of the todo list.
func (k EventKind) IsTodo() bool { return strings.HasPrefix(string(k), todoEvents) }

// IsGoal says whether k is a change of the goal.
func (k EventKind) IsGoal() bool { return strings.HasPrefix(string(k), goalEvents) }

// GoalChange is the goal's change kind of a goal event, "" for any other.
func (k EventKind) GoalChange() GoalChangeKind {
	c, _ := strings.CutPrefix(string(k), goalEvents)
	if !k.IsGoal() {
		return ""
	}
	return GoalChangeKind(c)
}
