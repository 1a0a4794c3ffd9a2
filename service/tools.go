package service

import (
	"context"
	"errors"

	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/todo"
	"github.com/agentd/agentd/workspace"
)

// The model's tools (docs/runtime.md §1, §2.8), run on one session in one
// transaction each.

// CallTodo stores what a TodoList call of agent planned (todo.PlanCall) on
// session of ws and returns the session after it; cur is that session as
// the caller last read it (workspace.Workspace.View). A call on turnID
// ("" outside a turn) is refused when that turn has ended, in cur or in the
// session the write is made on (goal.State.CheckTurn: code turn.ended),
// and changes nothing. A write replaces the
// list (actor model); a read changes nothing but, for the main agent, marks
// the list used for the stale reminder (docs/runtime.md §1.1), quietly. A
// read that has nothing to mark (the list already used in cur, or a
// subagent's read) is answered from cur, without a transaction
// (docs/performance.md "Reads"). A read whose mark cannot be stored
// (workspace.ErrNotSaved: a full disk; or a team's write whose outcome is
// unknown) still answers the stored session,
// and the failure is logged. Errors: those of workspace.Workspace.Update
// and View.
//
// A subagent's call (agent other than goal.MainAgent) reads and writes the
// subagent's own list instead (docs/runtime.md §1.3): AgentTodos is what it
// reads. Its write (kind todo.subagentWrite) leaves the session's list, the
// stale reminder's counts and the goal's plan as they are.
func (s *Service) CallTodo(ws *workspace.Workspace, session, agent, turnID string, plan todo.Plan, cur workspace.Session) (workspace.Session, error) {
	if err := cur.Goal.CheckTurn(turnID); err != nil {
		return workspace.Session{}, err
	}
	if agent != goal.MainAgent {
		return s.callSubagentTodo(ws, session, agent, turnID, plan, cur)
	}
	marks := func(st *workspace.Session) bool {
		return !st.TodoUsage.Used && st.TodoUsage.Writes == 0 && agent == goal.MainAgent
	}
	// What the call is decided on besides the list (workspace.Change.Reads):
	// the turn it checks, when it names one.
	var turn workspace.Parts
	if turnID != "" {
		turn = workspace.PartTurns
	}
	if !plan.Write && !marks(&cur) {
		return cur, nil
	}
	st, err := ws.Update(session, func(st *workspace.Session) (workspace.Change, error) {
		if err := st.Goal.CheckTurn(turnID); err != nil {
			return workspace.Change{}, err // another daemon ended the turn (docs/runtime.md §2.4.6)
		}
		if !plan.Write {
			if !marks(st) {
				return workspace.Change{}, nil
			}
			st.TodoUsage.NoteRead()
			return workspace.Change{Kind: protocol.EventTodoRead, Quiet: true, Reads: workspace.PartUsage | workspace.PartTodo | turn}, nil
		}
		if err := st.Goal.DroppedRequired(st.Todos, plan.Items); err != nil {
			return workspace.Change{}, err // an open item the goal requires leaves the list only done (docs/runtime.md §2.12)
		}
		before := workspace.TodosBefore{Items: st.Todos}
		st.Todos = plan.Items
		// The stale reminder counts the main agent's writes (docs/runtime.md
		// §1.1), with the list: the steps' counters take them at the next
		// step's begin or end (todo.Usage.Catch).
		st.TodoUsage.CountWrite()
		ch := TodoChange(st, protocol.EventTodoWrite, goal.Model, workspace.TodoPayload{Items: plan.Items, Agent: &agent}, before, s.Now())
		ch.Reads = TodoReads(st) | turn
		return ch, nil
	})
	if err != nil && !plan.Write && (errors.Is(err, workspace.ErrNotSaved) || protocol.ErrorCode(err) == workspace.CodeOutcomeUnknown) {
		s.log.Warn("todo list read: usage not recorded", "session", session, "err", err)
		return ws.View(session)
	}
	return st, err
}

// AgentTodos is the list agent's TodoList reads in st: the session's list
// for goal.MainAgent, a subagent's own list otherwise, [] until its first
// write (docs/runtime.md §1.3).
func AgentTodos(st workspace.Session, agent string) []todo.Item {
	if agent == goal.MainAgent {
		return st.Todos
	}
	if items, ok := todo.SubagentItems(st.SubagentLists, agent); ok {
		return items
	}
	return []todo.Item{}
}

// callSubagentTodo is CallTodo for a subagent: a read is answered from cur;
// a write replaces the subagent's own list (todo.WriteSubagent: linked to
// the session's in_progress item at its first write, the oldest lists
// pruned), as a change of the session's todo lists by the model.
func (s *Service) callSubagentTodo(ws *workspace.Workspace, session, agent, turnID string, plan todo.Plan, cur workspace.Session) (workspace.Session, error) {
	if !plan.Write {
		return cur, nil
	}
	return ws.Update(session, func(st *workspace.Session) (workspace.Change, error) {
		if err := st.Goal.CheckTurn(turnID); err != nil {
			return workspace.Change{}, err
		}
		lists, before := todo.WriteSubagent(st.SubagentLists, agent, plan.Items, st.Todos)
		if before == nil {
			before = []todo.Item{}
		}
		st.SubagentLists = lists
		return TodoChange(st, protocol.EventTodoSubagentWrite, goal.Model, workspace.TodoPayload{Items: plan.Items, Agent: &agent}, workspace.TodosBefore{Items: before}, s.Now()), nil
	})
}

// CallGoalTool runs tc, the decoded call of the goal tool named name, on
// session of ws (goal.State.CallTool) and stores its changes; cur is that
// session as the caller last read it (workspace.Workspace.View). GetGoal is
// a read: it is answered from cur without a transaction, refused or not, so
// that it never depends on a commit (a full disk). A refusal is a
// ToolResult with IsError, not an error; errors are those of
// workspace.Workspace.Update.
//
// An UpdateGoal complete of a goal that has a check runs the check first
// (docs/runtime.md §2.10.1): started is called once the check is marked
// running, before it runs (the caller may let later requests go ahead
// meanwhile), and the call returns when the check has ended; the check is
// killed when ctx ends. started is not called for any other call.
func (s *Service) CallGoalTool(ctx context.Context, ws *workspace.Workspace, session, name string, tc goal.ToolCall, cur workspace.Session, started func()) (goal.ToolResult, error) {
	switch name {
	case goal.GetGoalTool:
		res, _ := cur.Goal.CallTool(tc, s.Now())
		return res, nil
	case goal.UpdateGoalTool:
		return s.completeWithCheck(ctx, ws, session, tc, started)
	}
	var res goal.ToolResult
	_, err := s.UpdateGoal(ws, session, func(g *goal.State) ([]goal.Change, error) {
		var cs []goal.Change
		res, cs = g.CallTool(tc, s.Now())
		return cs, nil
	})
	return res, err
}
