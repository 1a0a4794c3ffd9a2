package service_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/service"
	"github.com/agentd/agentd/todo"
	"github.com/agentd/agentd/workspace"
)

// TestTodoReadMarksOnce: the main agent's first TodoList read stores the
// mark; a read with nothing to mark (the list used in the session the
// caller read, or a subagent's read) is answered from that session without
// a transaction: the store is not touched (docs/performance.md "Reads").
func TestTodoReadMarksOnce(t *testing.T) {
	opts, root := folder(t)
	svc, ws := open(t, opts, service.Daemon, root)
	read := todo.Plan{}
	s, err := svc.CallTodo(ws, workspace.DefaultSession, goal.MainAgent, "", read, view(t, ws))
	if err != nil || !s.TodoUsage.Used || !view(t, ws).TodoUsage.Used {
		t.Fatalf("first read: used %v, stored used %v, err %v; want the mark stored", s.TodoUsage.Used, view(t, ws).TodoUsage.Used, err)
	}
	stored := view(t, ws)
	// A session as read that differs from the store: answered as is, so the
	// store was not read, let alone written.
	cur := stored
	cur.Todos = []todo.Item{{Title: "only in cur", Status: todo.Pending}}
	for _, agent := range []string{goal.MainAgent, "helper"} {
		s, err = svc.CallTodo(ws, workspace.DefaultSession, agent, "", read, cur)
		if err != nil || len(s.Todos) != 1 || s.Todos[0].Title != "only in cur" {
			t.Fatalf("read by %s of a used list = %+v, %v; want cur", agent, s.Todos, err)
		}
	}
	if after := view(t, ws); after.Revision != stored.Revision || !after.UpdatedAt.Equal(stored.UpdatedAt) || len(after.Todos) != 0 {
		t.Fatalf("store after the reads: revision %d, updatedAt %v, todos %v; want unchanged (%d, %v, none)", after.Revision, after.UpdatedAt, after.Todos, stored.Revision, stored.UpdatedAt)
	}
}

// TestSubagentListLeavesTheSessionsList: a subagent's TodoList writes and
// reads its own list, linked to the item in progress (docs/runtime.md
// §1.3); the session's list, the stale reminder's counts and a goal's
// required items stay as they were, the session's todo revision rises, and
// an undo of the todo list looks past the subagent's write.
func TestSubagentListLeavesTheSessionsList(t *testing.T) {
	opts, root := folder(t)
	svc, ws := open(t, opts, service.Daemon, root)
	plan := []todo.Item{{Title: "parse", Status: todo.InProgress}, {Title: "render", Status: todo.Pending}}
	if _, err := svc.CallTodo(ws, workspace.DefaultSession, goal.MainAgent, "", todo.Plan{Write: true, Items: plan}, view(t, ws)); err != nil {
		t.Fatal(err)
	}
	update(t, svc, ws, func(g *goal.State) ([]goal.Change, error) {
		return g.Create(goal.CreateParams{Objective: "o"}, svc.Now())
	})
	parent := view(t, ws)
	// The subagent drops every item of the parent's plan from its own
	// list: no item of the goal's plan is dropped (the parent's list is
	// not its list), so nothing refuses it.
	mine := []todo.Item{{Title: "read the grammar", Status: todo.InProgress}}
	for range 2 { // a model that repeats its call
		if _, err := svc.CallTodo(ws, workspace.DefaultSession, "task-1", "", todo.Plan{Write: true, Items: mine}, view(t, ws)); err != nil {
			t.Fatal(err)
		}
	}
	s := view(t, ws)
	want := []todo.SubagentList{{Agent: "task-1", ParentItem: "parse", Items: mine}}
	if !cmp.Equal(s.Todos, parent.Todos) || !cmp.Equal(s.SubagentLists, want) {
		t.Fatalf("after the subagent's writes: list %v, subagent lists %+v; want %v and %+v", s.Todos, s.SubagentLists, parent.Todos, want)
	}
	if s.TodoUsage != parent.TodoUsage || s.TodosRevision != s.Revision || s.Revision != parent.Revision+2 {
		t.Fatalf("usage %+v (was %+v), todos revision %d, revision %d (was %d); want usage unchanged, both revisions raised by the two writes",
			s.TodoUsage, parent.TodoUsage, s.TodosRevision, s.Revision, parent.Revision)
	}
	if got := service.AgentTodos(s, "task-1"); !cmp.Equal(got, mine) {
		t.Fatalf("the subagent reads %v, want its own %v", got, mine)
	}
	if got := service.AgentTodos(s, "task-2"); got == nil || len(got) != 0 {
		t.Fatalf("a subagent with no list reads %v, want []", got)
	}
	after, undone, err := svc.Undo(ws, "", service.UndoTodo, nil, "")
	if err != nil || undone.Kind != "todo.write" || len(after.Todos) != 0 || !cmp.Equal(after.SubagentLists, want) {
		t.Fatalf("undo: %s undone, list %v, subagent lists %+v, %v; want the main agent's todo.write undone, the subagent's list kept", undone.Kind, after.Todos, after.SubagentLists, err)
	}
}
