package service_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentd/agentd/service"
	"github.com/agentd/agentd/todo"
	"github.com/agentd/agentd/workspace"
)

// TestUndoOldHistory: the history an agentd wrote before the history
// records (workspace/testdata/history1-state.db: a todo write and its
// undo, a goal's check set and its undo) still undoes: undoing each undo
// redoes the change it reverted.
func TestUndoOldHistory(t *testing.T) {
	opts, root := folder(t)
	data, err := os.ReadFile("../workspace/testdata/history1-state.db")
	if err != nil {
		t.Fatal(err)
	}
	// The first open makes the folder's state file, which the old one
	// then replaces.
	first := service.New(opts, service.OneShot)
	ws, err := first.Registry().Open(root)
	if err != nil {
		t.Fatal(err)
	}
	ws.Release()
	first.Close()
	paths, err := filepath.Glob(filepath.Join(opts.StateDir, "*", "*", "state.db"))
	if err != nil || len(paths) != 1 {
		t.Fatalf("state files %v, %v; want one", paths, err)
	}
	if err := os.WriteFile(paths[0], data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "TASK.md"), []byte("# Task\n\n- [ ] add the flag\n- [ ] document it\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	svc, ws := open(t, opts, service.OneShot, root)
	if c := view(t, ws).Goal.Goal.Check; c == nil || c.Command != "go test ./..." {
		t.Fatalf("check before the undo: %+v, want go test ./...", c)
	}
	st, ev, err := svc.Undo(ws, workspace.DefaultSession, service.UndoGoal, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if ev.Kind != "goal.undo" || st.Goal.Goal.Check == nil || st.Goal.Goal.Check.Command != "make test" || st.Goal.Goal.Check.SetBy == nil {
		t.Errorf("goal undo reverted %s to check %+v, want goal.undo to make test with its setter", ev.Kind, st.Goal.Goal.Check)
	}
	st, ev, err = svc.Undo(ws, workspace.DefaultSession, service.UndoTodo, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []todo.Item{{Title: "Add the flag", Status: todo.InProgress}, {Title: "Document it", Status: todo.Pending}}
	if ev.Kind != "todo.undo" || len(st.Todos) != 2 || st.Todos[0] != want[0] || st.Todos[1] != want[1] {
		t.Errorf("todo undo reverted %s to %+v, want todo.undo to %+v", ev.Kind, st.Todos, want)
	}
}
