package service_test

import (
	"strings"
	"testing"

	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/service"
	"github.com/agentd/agentd/todo"
	"github.com/agentd/agentd/workspace"
)

// store writes a change of kind with before as a goal change would be
// stored, for events the commands do not make on demand.
func store(t *testing.T, ws *workspace.Workspace, kind protocol.EventKind, before workspace.HistoryBefore) {
	t.Helper()
	if _, err := ws.Update(workspace.DefaultSession, func(s *workspace.Session) (workspace.Change, error) {
		return workspace.Change{Kind: kind, Actor: goal.Runtime, Goal: true, Before: before}, nil
	}); err != nil {
		t.Fatal(err)
	}
}

func undoCode(err error) string {
	if c, ok := err.(interface{ ErrorCode() string }); ok {
		return c.ErrorCode()
	}
	return ""
}

// TestUndoLooksPastProgress: progress, task-file, budget-warning, stall and
// check events only move what an undo keeps, so a goal undo reverts the change
// before them.
func TestUndoLooksPastProgress(t *testing.T) {
	opts, root := folder(t)
	svc, ws := open(t, opts, service.OneShot, root)
	update(t, svc, ws, func(g *goal.State) ([]goal.Change, error) {
		return g.Create(goal.CreateParams{Objective: "o"}, svc.Now())
	})
	update(t, svc, ws, func(g *goal.State) ([]goal.Change, error) { return g.Pause("", svc.Now()) })
	store(t, ws, "goal.progress", workspace.GoalBefore{})
	store(t, ws, "goal.taskFile", workspace.GoalBefore{})
	store(t, ws, "goal.budgetWarning", workspace.GoalBefore{})
	store(t, ws, "goal.stall", workspace.GoalBefore{})
	store(t, ws, "goal.stallCleared", workspace.GoalBefore{})
	store(t, ws, "goal.check", workspace.GoalBefore{})

	s, undone, err := svc.Undo(ws, "", service.UndoGoal, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if undone.Kind != "goal.pause" || s.Goal.Status() != goal.Active {
		t.Errorf("undid %s, goal %s; want goal.pause undone, active", undone.Kind, s.Goal.Status())
	}
}

// TestUndoRefusals: a change undo does not revert, and one stored without
// the state before it, are refused with args.invalid naming it; nothing
// changes.
func TestUndoRefusals(t *testing.T) {
	opts, root := folder(t)
	svc, ws := open(t, opts, service.OneShot, root)
	update(t, svc, ws, func(g *goal.State) ([]goal.Change, error) {
		return g.Create(goal.CreateParams{Objective: "o"}, svc.Now())
	})
	store(t, ws, "goal.advance", workspace.GoalBefore{})
	rev := view(t, ws).Revision
	_, _, err := svc.Undo(ws, "", "", nil, "")
	if undoCode(err) != goal.CodeArgsInvalid || !strings.Contains(err.Error(), "goal.advance (seq 2), which undo does not revert") ||
		!strings.HasSuffix(err.Error(), "nothing was undone; cancel or pause the goal the queue started") {
		t.Errorf("undo of goal.advance: %v", err)
	}
	store(t, ws, "goal.wait", workspace.GoalBefore{})
	_, _, err = svc.Undo(ws, "", service.UndoGoal, nil, "")
	if undoCode(err) != goal.CodeArgsInvalid || !strings.HasSuffix(err.Error(), "nothing was undone; resume the goal to end the wait") {
		t.Errorf("undo of goal.wait: %v", err)
	}
	store(t, ws, "goal.pause", nil)
	_, _, err = svc.Undo(ws, "", service.UndoGoal, nil, "")
	if undoCode(err) != goal.CodeArgsInvalid || !strings.Contains(err.Error(), "recorded by an older agentd without the state before it") {
		t.Errorf("undo of an event without before: %v", err)
	}
	if got := view(t, ws).Revision; got != rev+2 {
		t.Errorf("revision %d after refused undos, want %d", got, rev+2)
	}
	if _, _, err := svc.Undo(ws, "", service.UndoTodo, nil, ""); undoCode(err) != goal.CodeArgsInvalid || !strings.Contains(err.Error(), "nothing to undo") {
		t.Errorf("todo undo with no todo change: %v", err)
	}
}

// TestUndoExpected: expected names the revision the caller saw; the change
// to revert must not be newer.
func TestUndoExpected(t *testing.T) {
	opts, root := folder(t)
	svc, ws := open(t, opts, service.OneShot, root)
	plan := todo.Plan{Write: true, Items: []todo.Item{{Title: "a", Status: todo.Pending}}}
	cur := view(t, ws)
	if _, err := svc.CallTodo(ws, "", goal.MainAgent, "", plan, cur); err != nil {
		t.Fatal(err)
	}
	zero := uint64(0)
	_, _, err := svc.Undo(ws, "", service.UndoTodo, &zero, "")
	if protocol.ErrorCode(err) != todo.CodeConflict {
		t.Fatalf("undo of a change newer than revision 0: %v", err)
	}
	one := uint64(1)
	s, _, err := svc.Undo(ws, "", service.UndoTodo, &one, "")
	if err != nil || len(s.Todos) != 0 {
		t.Errorf("undo at the revision seen: %v, list %v", err, s.Todos)
	}
}

// TestUndoRequestOnce: an undo sent again with its requestId, once the
// session applied it, undoes nothing more: it answers the state as it is
// and the change the first copy reverted (docs/team.md, "What a write
// acknowledges"); without one it would undo the next change.
func TestUndoRequestOnce(t *testing.T) {
	opts, root := folder(t)
	svc, ws := open(t, opts, service.OneShot, root)
	for _, title := range []string{"a", "b"} {
		plan := todo.Plan{Write: true, Items: []todo.Item{{Title: title, Status: todo.Pending}}}
		if _, err := svc.CallTodo(ws, "", goal.MainAgent, "", plan, view(t, ws)); err != nil {
			t.Fatal(err)
		}
	}
	first, undone, err := svc.Undo(ws, "", service.UndoTodo, nil, "undo-1")
	if err != nil || len(first.Todos) != 1 || first.Todos[0].Title != "a" {
		t.Fatalf("undo: %v, list %v; want the list a", err, first.Todos)
	}
	again, undoneAgain, err := svc.Undo(ws, "", service.UndoTodo, nil, "undo-1")
	if err != nil || again.Revision != first.Revision || len(again.Todos) != 1 || again.Todos[0].Title != "a" {
		t.Fatalf("the undo sent again: %v, revision %d, list %v; want revision %d, the list a", err, again.Revision, again.Todos, first.Revision)
	}
	if undoneAgain.Seq != undone.Seq || undoneAgain.Kind != undone.Kind {
		t.Errorf("the undo sent again answers it undid %s (seq %d), want %s (seq %d)", undoneAgain.Kind, undoneAgain.Seq, undone.Kind, undone.Seq)
	}
}
