package tests

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd/agentd/tests/lsptest"
)

// undoResult is the answer of agentd.undo (docs/protocol.md §3).
type undoResult struct {
	state
	Undone historyEvent `json:"undone"`
}

func (c *client) history() []historyEvent {
	c.T.Helper()
	var h struct {
		Events []historyEvent `json:"events"`
	}
	c.MustExec("agentd.history", nil, &h)
	return h.Events
}

// undoRefusal runs agentd.undo with args and returns its JSON-RPC error.
func (c *client) undoRefusal(args map[string]any) *lsptest.Error {
	c.T.Helper()
	err := c.Exec("agentd.undo", args, nil)
	we, ok := err.(*lsptest.Error)
	if !ok {
		c.T.Fatalf("agentd.undo %v = %v, want a refusal", args, err)
	}
	return we
}

// TestUndoTodo: undoing the model's list write restores the list before it
// as the user, notifies it like any change, and records a todo.undo event
// naming what it reverted; the reverted event stays (docs/runtime.md §6).
// Undoing the undo is a redo.
func TestUndoTodo(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	c.MustExec("agentd.todo.set", map[string]any{"items": []item{{"plan", "pending"}}}, nil)
	c.tool("TodoList", map[string]any{"todos": []item{{"plan", "done"}, {"build", "in_progress"}}})

	var res undoResult
	c.MustExec("agentd.undo", map[string]any{"scope": "todo", "expectedRevision": 2}, &res)
	if res.Undone.Kind != "todo.write" || res.Undone.Seq != 2 || res.Undone.Actor != "model" {
		t.Errorf("undone = %+v, want the model's todo.write (seq 2)", res.Undone)
	}
	if len(res.Todos.Items) != 1 || res.Todos.Items[0] != (item{"plan", "pending"}) || res.Revision != 3 || res.Todos.Revision != 3 {
		t.Errorf("state after undo = %+v, want [plan pending] at revision 3", res.state)
	}
	var note struct {
		Revision uint64
		Actor    string
		Items    []item
	}
	json.Unmarshal(c.Await("agentd/todoChanged", revisionAtLeast(3)), &note)
	if note.Revision != 3 || note.Actor != "user" || len(note.Items) != 1 || note.Items[0].Status != "pending" {
		t.Errorf("todoChanged of the undo = %+v", note)
	}

	h := c.history()
	if len(h) != 3 || h[0].Kind != "todo.undo" || h[0].Actor != "user" || h[1].Kind != "todo.write" {
		t.Fatalf("history = %+v, want todo.undo over the todo.write it reverted", h)
	}
	var payload struct {
		Items   []item
		Reverts struct {
			Seq, Revision uint64
			Kind          string
		}
	}
	json.Unmarshal(h[0].Payload, &payload)
	if payload.Reverts.Seq != 2 || payload.Reverts.Revision != 2 || payload.Reverts.Kind != "todo.write" || len(payload.Items) != 1 {
		t.Errorf("todo.undo payload = %s", h[0].Payload)
	}
	if string(h[1].Before) != `{"items":[{"title":"plan","status":"pending"}]}` || h[1].Revision != 2 {
		t.Errorf("the todo.write event keeps before %s at revision %d", h[1].Before, h[1].Revision)
	}

	// Undo of the undo: the model's list again.
	c.MustExec("agentd.undo", map[string]any{}, &res)
	if res.Undone.Kind != "todo.undo" || len(res.Todos.Items) != 2 || res.Todos.Items[1] != (item{"build", "in_progress"}) {
		t.Errorf("redo: undone %s, list %+v", res.Undone.Kind, res.Todos.Items)
	}
}

// TestUndoGoalPause: undoing a pause makes the goal active again as the
// user, with a goalChanged of kind undo; the todo list is not touched.
func TestUndoGoalPause(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "port the parser"}, nil)
	c.MustExec("agentd.goal.pause", map[string]any{"reason": "lunch"}, nil)
	c.MustExec("agentd.todo.set", map[string]any{"items": []item{{"plan", "pending"}}}, nil)

	var res undoResult
	c.MustExec("agentd.undo", map[string]any{"scope": "goal"}, &res)
	if res.Undone.Kind != "goal.pause" || res.Undone.Seq != 2 {
		t.Errorf("undone = %+v, want goal.pause (seq 2)", res.Undone)
	}
	gc := c.awaitGoal("undo")
	if gc.Goal == nil || gc.Goal.Status != "active" || gc.Change.Status != "active" || gc.Change.Actor != "user" || gc.Revision != 4 ||
		gc.Change.Reason != "undo of goal.pause (seq 2)" || gc.Goal.TerminalReason != "" || gc.Goal.LastActor != "user" {
		t.Errorf("goalChanged of the undo = %+v (goal %+v)", gc, gc.Goal)
	}
	if st := c.state(); len(st.Todos.Items) != 1 || st.Todos.Revision != 3 {
		t.Errorf("a goal undo changed the todo list: %+v", st.Todos)
	}
	if h := c.history(); h[0].Kind != "goal.undo" || h[1].Kind != "todo.set" || h[2].Kind != "goal.pause" {
		t.Errorf("history kinds = %s %s %s, want goal.undo, todo.set, goal.pause", h[0].Kind, h[1].Kind, h[2].Kind)
	}

	// Undoing the create clears the goal.
	c.MustExec("agentd.undo", map[string]any{"scope": "goal"}, &res)
	if res.Undone.Kind != "goal.undo" {
		t.Fatalf("second undo reverted %s, want the goal.undo (a redo)", res.Undone.Kind)
	}
	if g := c.goal(); g == nil || g.Status != "paused" || g.TerminalReason != "lunch" {
		t.Errorf("after the redo the goal is %+v, want paused for lunch", g)
	}
}

// TestUndoConflict: an undo that would revert a change newer than the
// revision the caller saw is refused with todo.conflict and the current
// state, and nothing changes.
func TestUndoConflict(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	c.tool("TodoList", map[string]any{"todos": []item{{"one", "pending"}}})
	seen := c.state().Revision
	c.tool("TodoList", map[string]any{"todos": []item{{"one", "done"}}}) // a newer change in between

	we := c.undoRefusal(map[string]any{"scope": "todo", "expectedRevision": seen})
	var cur state
	json.Unmarshal(we.DataField("state"), &cur)
	if we.DataCode() != "todo.conflict" || !strings.Contains(we.Message, "todo.write (seq 2, revision 2), newer than the revision 1 you saw") ||
		cur.Revision != 2 || cur.Todos.Items[0].Status != "done" {
		t.Errorf("refusal = %d %s %q, state %+v", we.Code, we.DataCode(), we.Message, cur)
	}
	if st := c.state(); st.Revision != 2 || len(c.history()) != 2 {
		t.Errorf("a refused undo changed the session: revision %d", st.Revision)
	}

	// The goal scope: a pause after the revision the panel saw.
	c.MustExec("agentd.goal.create", map[string]any{"objective": "o"}, nil)
	seen = c.state().Revision
	c.MustExec("agentd.goal.pause", map[string]any{}, nil)
	if we := c.undoRefusal(map[string]any{"scope": "goal", "expectedRevision": seen}); we.DataCode() != "todo.conflict" {
		t.Errorf("goal undo over an unseen pause: %s %q", we.DataCode(), we.Message)
	}
	if g := c.goal(); g.Status != "paused" {
		t.Errorf("goal after the refused undo: %s", g.Status)
	}
	// A change of the other scope is no conflict.
	c.MustExec("agentd.todo.set", map[string]any{"items": []item{}}, nil)
	var res undoResult
	c.MustExec("agentd.undo", map[string]any{"scope": "goal", "expectedRevision": seen + 1}, &res)
	if res.Undone.Kind != "goal.pause" {
		t.Errorf("undone %s, want goal.pause", res.Undone.Kind)
	}
}

// TestUndoNothing: a session without changes has nothing to undo: a clear
// args.invalid, and no event; a bad scope is refused too.
func TestUndoNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	if we := c.undoRefusal(map[string]any{}); we.Code != -32602 || we.DataCode() != "args.invalid" || !strings.Contains(we.Message, "nothing to undo") {
		t.Errorf("undo of nothing = %d %s %q", we.Code, we.DataCode(), we.Message)
	}
	c.MustExec("agentd.todo.set", map[string]any{"items": []item{}}, nil)
	if we := c.undoRefusal(map[string]any{"scope": "goal"}); !strings.Contains(we.Message, "nothing to undo: the goal has no change") {
		t.Errorf("goal undo with only a todo change = %q", we.Message)
	}
	if we := c.undoRefusal(map[string]any{"scope": "goals"}); we.DataCode() != "args.invalid" || !strings.Contains(we.Message, `scope "goals"`) {
		t.Errorf("bad scope = %s %q", we.DataCode(), we.Message)
	}
	if n := len(c.history()); n != 1 {
		t.Errorf("refused undos left %d events, want 1", n)
	}
}

// TestUndoCLI: agentd undo prints what it reverted, --json the result;
// nothing to undo exits 1 saying so.
func TestUndoCLI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, stderr, code := e.cli("undo", "--workspace", e.ws); code != 1 || !strings.Contains(stderr, "agentd undo: nothing to undo") {
		t.Errorf("undo of nothing: exit %d, stderr %q", code, stderr)
	}
	e.cli("tool", "TodoList", `{"todos":[{"title":"a","status":"pending"}]}`, "--workspace", e.ws)
	e.cli("goal", "create", "ship it", "--workspace", e.ws)
	out, stderr, code := e.cli("undo", "--scope", "todo", "--workspace", e.ws)
	if code != 0 || !strings.HasPrefix(out, "Undid todo.write (seq 1, by model at ") || !strings.HasSuffix(out, "Todo list is empty.\n") {
		t.Errorf("undo --scope todo: exit %d, out %q, stderr %q", code, out, stderr)
	}
	out, _, code = e.cli("undo", "--json", "--workspace", e.ws)
	var res undoResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || res.Undone.Kind != "todo.undo" || len(res.Todos.Items) != 1 {
		t.Errorf("undo --json: exit %d, %v, %+v", code, err, res)
	}
	out, _, code = e.cli("undo", "--scope", "goal", "--workspace", e.ws)
	if code != 0 || !strings.Contains(out, "Undid goal.create (seq 2, by user") || !strings.HasSuffix(out, "No goal.\n") {
		t.Errorf("undo --scope goal: exit %d, out %q", code, out)
	}
	if _, stderr, code := e.cli("undo", "--scope", "x", "--workspace", e.ws); code != 1 || !strings.Contains(stderr, `scope "x" is not an undo scope`) {
		t.Errorf("bad scope: exit %d, %q", code, stderr)
	}
}

// TestUndoCancelKeepsTheCheck: undoing the cancel of a goal whose check
// was running brings the goal back with its check, not running, and the
// model's complete runs it again (docs/runtime.md §6).
func TestUndoCancelKeepsTheCheck(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	dir := t.TempDir()
	c.MustExec("agentd.goal.create", map[string]any{"objective": "ship it", "check": sleeperCheck(dir)}, nil)
	pending := c.asyncTool("UpdateGoal", map[string]any{"status": "complete"})
	c.awaitCheck(true)
	shell := readPid(t, filepath.Join(dir, "shell.pid"))
	c.MustExec("agentd.goal.cancel", nil, nil)
	c.awaitAsync(pending, "UpdateGoal complete")
	awaitGone(t, "after the cancel", shell)

	var res undoResult
	c.MustExec("agentd.undo", map[string]any{"scope": "goal"}, &res)
	if res.Undone.Kind != "goal.cancel" {
		t.Fatalf("undone = %+v, want goal.cancel", res.Undone)
	}
	chk := c.checkOf()
	if chk == nil || chk.Command != sleeperCheck(dir) || chk.Running {
		t.Fatalf("check after the undo = %+v", chk)
	}
	c.MustExec("agentd.goal.setCheck", map[string]any{"command": "exit 3"}, nil)
	if res := c.tool("UpdateGoal", map[string]any{"status": "complete"}); res.ErrorCode != "goal.check_failed" {
		t.Errorf("complete of the goal brought back = %+v, want goal.check_failed", res)
	}
}

// TestUndoCheckChange: undoing a person's removal of the goal's check
// brings the check back (it does not reach past it to the create and
// clear the goal); a run of the check is looked past (docs/runtime.md §6).
func TestUndoCheckChange(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "ship it", "check": "true"}, nil)
	c.MustExec("agentd.goal.runCheck", nil, nil)
	c.MustExec("agentd.goal.setCheck", map[string]any{"command": nil}, nil)
	var res undoResult
	c.MustExec("agentd.undo", map[string]any{"scope": "goal"}, &res)
	if res.Undone.Kind != "goal.check" {
		t.Fatalf("undone = %+v, want the check's removal (goal.check)", res.Undone)
	}
	if chk := c.checkOf(); chk == nil || chk.Command != "true" || chk.Running {
		t.Fatalf("check after undoing its removal = %+v, want true back", chk)
	}
	// Undo again: a redo of the removal, not a step back past the run.
	c.MustExec("agentd.undo", map[string]any{"scope": "goal"}, &res)
	if res.Undone.Kind != "goal.undo" || c.checkOf() != nil {
		t.Fatalf("second undo undid %+v; check %+v, want the removal redone", res.Undone, c.checkOf())
	}
	if g := c.goal(); g == nil || g.Status != "active" {
		t.Fatalf("the goal after the undos: %+v, want it active", g)
	}
}
