package service

import (
	"errors"
	"fmt"
	"github.com/agentd/agentd/commands/protocol"
	"slices"
	"strings"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/todo"
	"github.com/agentd/agentd/workspace"
)

// Undo (docs/runtime.md §6): the user reverts the newest change of a scope
// of a session, the todo list or the goal, with compare-and-set. Every
// todo and goal change stores the state of its scope before it in its
// history event (workspace.Change.Before: workspace.TodosBefore,
// workspace.GoalBefore, stored as their records, workspace/historyrecord.go);
// the undo reads it back through those records and restores that state as a new change, which names the change it
// reverts. The reverted change stays in history.

// UndoScope names what agentd.undo reverts (docs/runtime.md §6), as the
// wire carries it; "" is the newest change of either.
type UndoScope = protocol.UndoScope

// The undo scopes.
const (
	UndoTodo = protocol.UndoTodo
	UndoGoal = protocol.UndoGoal
)

// Undoable returns the history event kinds an undo reverts, in the order
// of docs/runtime.md §6. An undo of an undo is a redo. goal.check is
// undone when it set or removed the command (transparentEvent).
func Undoable() []protocol.EventKind {
	kinds := []protocol.EventKind{protocol.EventTodoWrite, protocol.EventTodoSet, protocol.EventTodoUndo}
	for _, k := range []goal.ChangeKind{goal.ChangeCreate, goal.ChangeCancel, goal.ChangePause, goal.ChangeResume, goal.ChangeBlock, goal.ChangeComplete, goal.ChangeBudget, goal.ChangeCheck, goal.ChangeUndo} {
		kinds = append(kinds, goal.Change{Kind: k}.EventKind())
	}
	return kinds
}

// transparent are the goal events that only move counters, the task
// file's record, the budget warnings fired or the stall mark
// (docs/runtime.md §2.4.4, §2.4.5), which an undo keeps as they are: they
// are not changes of the goal scope, so an undo looks past them and they
// never conflict.
var transparent = []goal.ChangeKind{goal.ChangeProgress, goal.ChangeTaskFile, goal.ChangeBudgetWarning, goal.ChangeStall, goal.ChangeStallCleared}

// transparentEvent says whether an undo looks past ev: a kind of
// transparent, or a goal.check that only began or ended a run of the check
// (its command the same before and after, docs/runtime.md §2.10). A
// goal.check that set, changed or removed the command (a person's
// agentd.goal.setCheck) is a change of the goal, which an undo reverts.
func transparentEvent(ev workspace.Event) bool {
	if !ev.Kind.IsGoal() {
		return false
	}
	k := goal.ChangeKind(ev.Kind.GoalChange())
	if k == goal.ChangeCheck {
		return checkCommand(ev, true) == checkCommand(ev, false)
	}
	return slices.Contains(transparent, k)
}

// checkCommand is the goal's check command in an event's before or, with
// before false, after it (the goal of its payload's last change); "" for
// none or what cannot be read.
func checkCommand(ev workspace.Event, before bool) string {
	var g *goal.Snapshot
	if before {
		g, _ = ev.GoalBefore()
	} else if goals, err := ev.PayloadGoals(); err == nil && len(goals) > 0 {
		g = goals[len(goals)-1]
	}
	if g == nil || g.Check == nil {
		return ""
	}
	return g.Check.Command
}

// undoRefusal is a refused undo, the protocol's coded error: code
// todo.conflict (a newer change of the scope than the one to undo, or than
// the caller saw) or args.invalid (nothing to undo, or a change undo does
// not revert).
func undoRefusal(code, format string, args ...any) *protocol.Error {
	return &protocol.Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// maxUndoAttempts bounds the retries of an undo whose session keeps
// changing in other scopes between its read of history and its write.
const maxUndoAttempts = 8

// errUndoStale makes Undo read history again: the session changed after
// the read.
var errUndoStale = errors.New("the session changed after its history was read")

// Undo reverts, as the user, the newest change of scope ("" either) of
// session in ws and returns the session after it and the event it
// reverted (docs/runtime.md §6). requestID, when not "", identifies the
// undo: sent again once the session applied it, it changes nothing and
// answers the session as it is and the change the first copy reverted.
// expected, when given, is the revision the
// caller last saw: a change to revert that is newer than it is a conflict,
// so that a person never undoes a change they have not seen. A change of
// the scope that commits between the read of history and the write is a
// conflict too; changes of other scopes meanwhile are not (the read is
// retried). Refusals are *protocol.Error of code todo.conflict or
// args.invalid; goal.not_resumable (the goal would
// become active with a spent budget) is goal's; other errors are those of
// workspace.Workspace.History and Update.
func (s *Service) Undo(ws *workspace.Workspace, session string, scope UndoScope, expected *uint64, requestID string) (workspace.Session, workspace.Event, error) {
	if scope != "" && !slices.Contains(protocol.UndoScopes(), scope) {
		return workspace.Session{}, workspace.Event{}, undoRefusal(goal.CodeArgsInvalid, "scope %q is not an undo scope; use \"todo\", \"goal\", or none for the newest change of either", scope)
	}
	if requestID != "" {
		// Sent again: the session may say so before its history is read
		// (the newest change may now be the first copy's undo).
		st, err := ws.View(session)
		if r, done := st.Request(requestID); err != nil || done {
			return undoneBefore(ws, session, st, r, err)
		}
	}
	var target *workspace.Event
	for range maxUndoAttempts {
		ev, newest, err := newestChange(ws, session, scope)
		if err != nil {
			return workspace.Session{}, workspace.Event{}, err
		}
		switch {
		case ev == nil && target == nil:
			return workspace.Session{}, workspace.Event{}, undoRefusal(goal.CodeArgsInvalid, "nothing to undo: %s has no change in the session's history", scopeName(scope))
		case target == nil:
			target = ev
			if expected != nil && ev.Revision > *expected {
				return workspace.Session{}, workspace.Event{}, undoRefusal(todo.CodeConflict, "the newest change of %s is %s (seq %d, revision %d), newer than the revision %d you saw: nothing was undone; look again and undo what you see", scopeName(scope), ev.Kind, ev.Seq, ev.Revision, *expected)
			}
		case ev == nil || ev.Seq != target.Seq:
			return workspace.Session{}, workspace.Event{}, undoRefusal(todo.CodeConflict, "%s changed while %s (seq %d) was being undone: nothing was undone; look again and undo what you see", scopeName(scope), target.Kind, target.Seq)
		}
		if err := checkUndoable(*ev); err != nil {
			return workspace.Session{}, workspace.Event{}, err
		}
		var again *workspace.Request
		st, err := ws.Update(session, func(st *workspace.Session) (workspace.Change, error) {
			if r, done := st.Request(requestID); requestID != "" && done {
				again = &r
				return workspace.Change{}, nil
			}
			if st.Revision != newest {
				return workspace.Change{}, errUndoStale
			}
			ch, err := s.revert(st, *ev)
			if err == nil && requestID != "" {
				st.RecordRequest(workspace.Request{ID: requestID, Reverts: ev.Seq}, s.wall())
			}
			return ch, err
		})
		if again != nil {
			return undoneBefore(ws, session, st, *again, err)
		}
		if errors.Is(err, errUndoStale) {
			continue
		}
		return st, *target, err
	}
	return workspace.Session{}, workspace.Event{}, undoRefusal(todo.CodeConflict, "the session kept changing while %s (seq %d) was being undone: nothing was undone; try again", target.Kind, target.Seq)
}

// undoneBefore answers an undo sent again whose first copy the session
// st applied (the request r; docs/team.md, "What a write acknowledges"):
// st as it is, and the change that copy reverted, read back from the
// history (its seq alone once the history no longer holds it). err, of
// the read or write that found it, is returned as it is.
func undoneBefore(ws *workspace.Workspace, session string, st workspace.Session, r workspace.Request, err error) (workspace.Session, workspace.Event, error) {
	if err != nil {
		return workspace.Session{}, workspace.Event{}, err
	}
	page, err := ws.History(session, 1, r.Reverts+1)
	if err != nil {
		return workspace.Session{}, workspace.Event{}, err
	}
	if len(page.Events) == 1 && page.Events[0].Seq == r.Reverts {
		return st, page.Events[0], nil
	}
	return st, workspace.Event{Seq: r.Reverts}, nil
}

func scopeName(scope UndoScope) string {
	switch scope {
	case UndoTodo:
		return "the todo list"
	case UndoGoal:
		return "the goal"
	}
	return "the todo list or the goal"
}

// inScope says whether ev is a change of scope that an undo considers.
func inScope(ev workspace.Event, scope UndoScope) bool {
	todoEv := ev.Kind.IsTodo() && ev.Kind != protocol.EventTodoSubagentWrite // a subagent's own list (docs/runtime.md §1.3) is no change of the session's
	goalEv := ev.Kind.IsGoal() && !transparentEvent(ev)
	switch scope {
	case UndoTodo:
		return todoEv
	case UndoGoal:
		return goalEv
	}
	return todoEv || goalEv
}

// undoPageSize is how many events newestChange reads at a time.
const undoPageSize = 200

// newestChange returns the newest event of scope in the session's history
// (nil when there is none) and the revision of the history's newest event,
// which is the session's revision at the read.
func newestChange(ws *workspace.Workspace, session string, scope UndoScope) (*workspace.Event, uint64, error) {
	var newest, before uint64
	for first := true; ; first = false {
		page, err := ws.History(session, undoPageSize, before)
		if err != nil {
			return nil, 0, err
		}
		for i, ev := range page.Events {
			if first && i == 0 {
				newest = ev.Revision
			}
			if inScope(ev, scope) {
				return &ev, newest, nil
			}
		}
		if !page.More || len(page.Events) == 0 {
			return nil, newest, nil
		}
		before = page.Events[len(page.Events)-1].Seq
	}
}

// checkUndoable refuses an event undo does not revert.
func checkUndoable(ev workspace.Event) error {
	if !slices.Contains(Undoable(), ev.Kind) {
		return undoRefusal(goal.CodeArgsInvalid, "the newest change is %s (seq %d), which undo does not revert (it reverts %s); nothing was undone%s", ev.Kind, ev.Seq, joinKinds(Undoable()), instead(ev.Kind))
	}
	if len(ev.Before) == 0 || ev.Revision == 0 {
		return undoRefusal(goal.CodeArgsInvalid, "the newest change, %s (seq %d), was recorded by an older agentd without the state before it, so it cannot be undone", ev.Kind, ev.Seq)
	}
	return nil
}

// instead is what to do rather than undo a change of kind, for the
// refusal: a wait ends with a resume, a queued goal that started is
// cancelled or paused (docs/runtime.md §6); "" for the other kinds.
func instead(kind protocol.EventKind) string {
	switch kind {
	case goal.Change{Kind: goal.ChangeWait}.EventKind():
		return "; resume the goal to end the wait"
	case goal.Change{Kind: goal.ChangeAdvance}.EventKind():
		return "; cancel or pause the goal the queue started"
	}
	return ""
}

// joinKinds is kinds as a list for a message: "todo.write, todo.set".
func joinKinds(kinds []protocol.EventKind) string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// revert restores in st the state of ev's scope before ev, as the user.
func (s *Service) revert(st *workspace.Session, ev workspace.Event) (workspace.Change, error) {
	reverts := &workspace.Reverts{Seq: ev.Seq, Revision: ev.Revision, Kind: string(ev.Kind)}
	reason := fmt.Sprintf("undo of %s (seq %d)", ev.Kind, ev.Seq)
	if ev.Kind.IsTodo() {
		before, err := ev.TodosBefore()
		if err != nil {
			return workspace.Change{}, fmt.Errorf("undo: %w", err)
		}
		items, err := todo.Normalize(before)
		if err != nil {
			return workspace.Change{}, err
		}
		was := workspace.TodosBefore{Items: st.Todos}
		st.Todos = items
		ch := TodoChange(st, protocol.EventTodoUndo, goal.User, workspace.TodoPayload{Items: items, Reverts: reverts}, was, s.Now())
		ch.Reason = reason
		return ch, nil
	}
	before, err := ev.GoalBefore()
	if err != nil {
		return workspace.Change{}, fmt.Errorf("undo: %w", err)
	}
	now := s.Now()
	was := st.Goal.Snapshot(now)
	cs, err := st.Goal.Restore(before, reason, now)
	if err != nil {
		return workspace.Change{}, err
	}
	ch := StoredGoalChange(was, cs)
	ch.Payload = workspace.GoalPayload{Changes: cs, Reverts: reverts}
	return ch, nil
}
