package goal

import (
	"fmt"
	"time"

	"github.com/agentd/agentd/commands/protocol"
)

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
	// CheckSetBy is who gave Check (Check.SetBy); stored and shown.
	CheckSetBy *CheckSetter `json:"checkSetBy,omitempty"`
	// CheckApproved is Check.Approved for Check: filled in by the agentd
	// that answers from its own approvals, never stored.
	CheckApproved *bool     `json:"checkApproved,omitempty"`
	AddedAt       time.Time `json:"addedAt"`
	// TurnBudget, TokenBudget and WallClockBudgetMs are the budgets a
	// person gave the queued goal (docs/runtime.md §2.9.1): the goal it
	// starts has them as the person's limits (§2.11); nil is no limit.
	TurnBudget        *int64 `json:"turnBudget,omitempty"`
	TokenBudget       *int64 `json:"tokenBudget,omitempty"`
	WallClockBudgetMs *int64 `json:"wallClockBudgetMs,omitempty"`
}

// Limits are the queued goal's budgets.
func (q QueuedGoal) Limits() Limits {
	return Limits{TurnBudget: clonePtr(q.TurnBudget), TokenBudget: clonePtr(q.TokenBudget), WallClockBudgetMs: clonePtr(q.WallClockBudgetMs)}
}

// setLimits stores l as the queued goal's budgets.
func (q *QueuedGoal) setLimits(l Limits) {
	q.TurnBudget, q.TokenBudget, q.WallClockBudgetMs = clonePtr(l.TurnBudget), clonePtr(l.TokenBudget), clonePtr(l.WallClockBudgetMs)
}

// MaxQueuedGoals bounds the items of one session's queue (docs/runtime.md
// §2.9.1).
const MaxQueuedGoals = 50

// QueueParams are the inputs of adding a queued goal (agentd.goal.queue.add).
// Check nil means no check; CheckSetBy is the person who gives it.
type QueueParams struct {
	// ID, if set, is the queued goal's id, chosen by the client (at most
	// MaxQueuedIDBytes of letters, digits, '-' and '_'): adding again a goal
	// whose id is queued changes nothing, so that an add sent again after
	// an answer was lost does not queue it twice (docs/team.md, "What a
	// write acknowledges"). "" makes a new id.
	ID                  string
	Objective           string
	CompletionCriterion string
	Check               *string
	CheckSetBy          CheckSetter
	// Budget is the budgets the person gives the queued goal, as
	// agentd.goal.setBudget takes them (a null field is no limit).
	Budget BudgetUpdate
}

// QueueChange is one change of the queue, for the history event and the
// agentd/queueChanged notification (docs/protocol.md §4): Kind is add,
// remove, move or autoAdvance; Item is the item it is about (nil for
// autoAdvance).
type QueueChange struct {
	Kind  string      `json:"kind"`
	Item  *QueuedGoal `json:"item,omitempty"`
	Index int         `json:"index"` // the item's index after the change (add, move), or before it (remove)
}

// The queue change kinds; history event kinds are "queue." + kind
// (QueueChange.EventKind, protocol.QueueEvent).
const (
	QueueAdd         = "add"
	QueueRemove      = "remove"
	QueueMove        = "move"
	QueueAutoAdvance = "autoAdvance"
)

// EventKind is the history event kind, e.g. "queue.add".
func (c QueueChange) EventKind() protocol.EventKind { return protocol.QueueEvent(c.Kind) }

// AutoAdvance says whether a complete goal makes the first queued goal
// active (docs/runtime.md §2.9); on unless the user turned it off.
func (s *State) AutoAdvance() bool { return !s.AutoAdvanceOff }

// QueueItems returns a copy of the queue, first item first; never nil.
func (s *State) QueueItems() []QueuedGoal {
	return append([]QueuedGoal{}, s.Queue...)
}

// Enqueue appends a goal to the queue for the user (docs/runtime.md §2.9).
// The objective and criterion follow the rules of creating a goal (§2.2:
// trimmed, the same lengths and codes); the check, when given, must be a
// command (not blank after trim, at most MaxCheckChars runes, no
// control character but TAB); the budgets follow the rules of
// agentd.goal.setBudget (SetBudget). Refusals: goal.objective_empty,
// goal.objective_too_long, goal.budget_invalid, args.invalid (the queue is
// full, a bad check or text).
func (s *State) Enqueue(p QueueParams, now Instant) (QueueChange, error) {
	objective, criterion, err := normalizeObjective(p.Objective, p.CompletionCriterion)
	if err != nil {
		return QueueChange{}, err
	}
	check, err := normalizeCheck(p.Check)
	if err != nil {
		return QueueChange{}, err
	}
	limits, err := mergeBudget(p.Budget, Limits{})
	if err != nil {
		return QueueChange{}, err
	}
	if p.ID != "" {
		if err := checkQueuedID(p.ID); err != nil {
			return QueueChange{}, err
		}
		for _, q := range s.Queue {
			if q.ID != p.ID {
				continue
			}
			if q.Objective != objective || q.CompletionCriterion != criterion || q.Check != check || !q.Limits().Equal(limits) {
				return QueueChange{}, errorf(CodeArgsInvalid, fmt.Sprintf("queued goal id %q is taken by another queued goal; choose a new id for a new goal", p.ID))
			}
			return QueueChange{}, nil // added already: Item nil, nothing changes
		}
	}
	if len(s.Queue) >= MaxQueuedGoals {
		return QueueChange{}, errorf(CodeArgsInvalid, fmt.Sprintf("the queue already holds %d goals, the most it may; remove one first", MaxQueuedGoals))
	}
	id := p.ID
	if id == "" {
		id = newID()
	}
	item := QueuedGoal{ID: id, Objective: objective, CompletionCriterion: criterion, Check: check, AddedAt: now.Wall}
	item.setLimits(limits)
	if check != "" {
		item.CheckSetBy = &p.CheckSetBy
	}
	s.Queue = append(s.Queue, item)
	return QueueChange{Kind: QueueAdd, Item: &item, Index: len(s.Queue) - 1}, nil
}

// MaxQueuedIDBytes bounds a queued goal id a client chooses.
const MaxQueuedIDBytes = 64

// checkQueuedID refuses a client's queued goal id that is empty, longer
// than MaxQueuedIDBytes or holds other than letters, digits, '-' and '_'.
func checkQueuedID(id string) error {
	ok := len(id) <= MaxQueuedIDBytes
	for _, r := range id {
		ok = ok && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}
	if !ok {
		return errorf(CodeArgsInvalid, fmt.Sprintf("queued goal id %q: at most %d letters, digits, '-' and '_'", id, MaxQueuedIDBytes))
	}
	return nil
}

// indexOf is the index of the queued goal with id, or an args.invalid
// error naming it.
func (s *State) indexOf(id string) (int, error) {
	for i, q := range s.Queue {
		if q.ID == id {
			return i, nil
		}
	}
	return 0, errorf(CodeArgsInvalid, fmt.Sprintf("no queued goal has the id %q; list the queue for the current ids", oneLine(id, 80)))
}

// Dequeue removes the queued goal with id for the user. Refusal:
// args.invalid (no such item).
func (s *State) Dequeue(id string) (QueueChange, error) {
	i, err := s.indexOf(id)
	if err != nil {
		return QueueChange{}, err
	}
	item := s.Queue[i]
	s.Queue = append(s.Queue[:i:i], s.Queue[i+1:]...)
	return QueueChange{Kind: QueueRemove, Item: &item, Index: i}, nil
}

// MoveQueued moves the queued goal with id to index (0 is first), the
// others keeping their order. Moving an item to where it is changes
// nothing (ok false). Refusals: args.invalid (no such item, an index
// outside 0 … len-1).
func (s *State) MoveQueued(id string, index int) (ch QueueChange, ok bool, err error) {
	i, err := s.indexOf(id)
	if err != nil {
		return QueueChange{}, false, err
	}
	if index < 0 || index >= len(s.Queue) {
		return QueueChange{}, false, errorf(CodeArgsInvalid, fmt.Sprintf("index %d is outside the queue; use 0 to %d", index, len(s.Queue)-1))
	}
	if i == index {
		return QueueChange{}, false, nil
	}
	item := s.Queue[i]
	rest := append(s.Queue[:i:i], s.Queue[i+1:]...)
	s.Queue = append(rest[:index:index], append([]QueuedGoal{item}, rest[index:]...)...)
	return QueueChange{Kind: QueueMove, Item: &item, Index: index}, true, nil
}

// SetAutoAdvance turns auto-advance on or off for the user (docs/runtime.md
// §2.9); ok is false when it already was so.
func (s *State) SetAutoAdvance(on bool) (QueueChange, bool) {
	if s.AutoAdvance() == on {
		return QueueChange{}, false
	}
	s.AutoAdvanceOff = !on
	return QueueChange{Kind: QueueAutoAdvance}, true
}

// createParams is the one place a queued goal becomes the parameters of
// the goal it starts (docs/runtime.md §2.9): objective, criterion and
// check with who set it (§2.10).
func (q QueuedGoal) createParams() CreateParams {
	return CreateParams{Objective: q.Objective, CompletionCriterion: q.CompletionCriterion, Check: q.Check, CheckSetBy: clonePtr(q.CheckSetBy)}
}

// advance makes the first queued goal the current goal after the current
// one completed, when auto-advance is on and the queue is not empty
// (docs/runtime.md §2.9): a fresh active goal (new uuid, zero counters, no
// task file) whose budgets are the queued goal's, each the person's limit
// (§2.11), actor runtime, change kind advance. The live
// turns of the main agent become its starter turns, as for a goal created
// mid-turn (§2.4), but the turn that completed the old goal keeps working
// for that one, so a later goal tool call in it is a stale call (§2.8).
// It returns the advance change, or nothing.
func (s *State) advance(now Instant) []Change {
	if s.Goal == nil || s.Goal.Status != Complete || !s.AutoAdvance() || len(s.Queue) == 0 {
		return nil
	}
	next := s.Queue[0]
	s.Queue = append([]QueuedGoal{}, s.Queue[1:]...)
	s.Goal = newGoal(next.createParams(), Runtime, now)
	s.Goal.Limits, s.Goal.PersonLimits = next.Limits(), next.Limits()
	s.noteActivated("", now)
	return []Change{{Kind: ChangeAdvance, Status: Active, Reason: "the next goal of the queue", Actor: Runtime, Goal: s.Goal.snapshot(now)}}
}
