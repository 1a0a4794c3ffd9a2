package service_test

import (
	"testing"

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
