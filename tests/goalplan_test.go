package tests

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// planSnap is the part of a goal snapshot that docs/runtime.md §2.12 adds.
type planSnap struct {
	Status       string `json:"status"`
	RequireTodos bool   `json:"requireTodos"`
	Progress     *struct {
		Todos *struct {
			Done, Total int
			Open        []string
		} `json:"todos"`
	} `json:"progress"`
}

// awaitPlan waits for a goalChanged of change kind and returns its goal's
// plan part.
func (c *client) awaitPlan(kind string) planSnap {
	c.T.Helper()
	raw := c.Await("agentd/goalChanged", func(raw json.RawMessage) bool {
		var g goalChanged
		return json.Unmarshal(raw, &g) == nil && g.Change.Kind == kind
	})
	var gc struct{ Goal planSnap }
	if err := json.Unmarshal(raw, &gc); err != nil {
		c.T.Fatalf("goalChanged %s: %v", kind, err)
	}
	return gc.Goal
}

func todoItems(spec ...string) map[string]any {
	items := []map[string]any{}
	for _, s := range spec {
		title, status, _ := strings.Cut(s, ":")
		items = append(items, map[string]any{"title": title, "status": status})
	}
	return map[string]any{"todos": items}
}

// TestGoalWaitsForItsTodoItems: over the real binary, a goal a person
// created requires its todo items. The model's UpdateGoal complete is
// refused with goal.todos_open, naming the open items, as often as it
// tries; its TodoList may not clear the list or drop an open item; the
// continuation names the open items; goalChanged carries the list's
// progress; once every item is done the goal completes (docs/runtime.md
// §2.12). The person may remove an open item. On the code before it, the
// first complete went through.
func TestGoalWaitsForItsTodoItems(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "parse the config"}, nil)
	if g := c.awaitPlan("create"); !g.RequireTodos {
		t.Fatalf("the new goal does not require its items: %+v", g)
	}
	c.MustExec("agentd.turn.begin", map[string]any{"turnId": "t1", "origin": "user"}, nil)
	c.MustExec("agentd.step.begin", map[string]any{"turnId": "t1"}, nil)
	if res := c.toolIn("t1", "TodoList", todoItems("read the spec:done", "write the parser:in_progress", "test it:pending")); res.IsError {
		t.Fatalf("TodoList = %+v", res)
	}
	complete := map[string]any{"status": "complete"}
	for range 3 { // a misbehaving model tries again and again
		expectRefused(t, "UpdateGoal complete", c.toolIn("t1", "UpdateGoal", complete), "goal.todos_open",
			`2 items of the list are not done: "write the parser", "test it"`)
	}
	expectRefused(t, "TodoList clear", c.toolIn("t1", "TodoList", todoItems()), "goal.todos_open",
		`drops 2 items that are not done: "write the parser", "test it"`, "ask the user to remove it")
	expectRefused(t, "TodoList dropping an item", c.toolIn("t1", "TodoList", todoItems("read the spec:done", "write the parser:done")),
		"goal.todos_open", `drops 1 item that is not done: "test it"`)
	if st := c.state(); len(st.Todos.Items) != 3 {
		t.Fatalf("the list after the refused writes = %+v", st.Todos.Items)
	}
	if g := c.goal(); g.Status != "active" {
		t.Fatalf("the goal is %s, want active", g.Status)
	}

	c.MustExec("agentd.step.end", map[string]any{"turnId": "t1", "outputTokens": 10, "finishReason": "stop"}, nil)
	var end struct {
		Continuation *struct{ Variant, Prompt string } `json:"continuation"`
	}
	c.MustExec("agentd.turn.end", map[string]any{"turnId": "t1", "outcome": "completed"}, &end)
	if end.Continuation == nil {
		t.Fatal("no continuation after the turn")
	}
	for _, want := range []string{"Open todo items (1 of 3 done); the goal requires them", "\n- write the parser\n- test it\n"} {
		if !strings.Contains(end.Continuation.Prompt, want) {
			t.Errorf("the continuation lacks %q:\n%s", want, end.Continuation.Prompt)
		}
	}

	c.MustExec("agentd.goal.setBudget", map[string]any{"turns": 10}, nil)
	g := c.awaitPlan("budget")
	if p := g.Progress; p == nil || p.Todos == nil || p.Todos.Done != 1 || p.Todos.Total != 3 || !slices.Equal(p.Todos.Open, []string{"write the parser", "test it"}) {
		t.Fatalf("goalChanged budget progress = %+v", g.Progress)
	}

	// The person may remove an open item: it is no longer required.
	c.MustExec("agentd.todo.set", map[string]any{"items": todoItems("read the spec:done", "write the parser:in_progress")["todos"]}, nil)

	c.MustExec("agentd.turn.begin", map[string]any{"turnId": "t2", "origin": "continuation"}, nil)
	c.MustExec("agentd.step.begin", map[string]any{"turnId": "t2"}, nil)
	expectRefused(t, "UpdateGoal complete after the person's edit", c.toolIn("t2", "UpdateGoal", complete), "goal.todos_open",
		`1 item of the list is not done: "write the parser"`)
	if res := c.toolIn("t2", "TodoList", todoItems("read the spec:done", "write the parser:done")); res.IsError {
		t.Fatalf("TodoList = %+v", res)
	}
	if res := c.toolIn("t2", "UpdateGoal", complete); res.IsError {
		t.Fatalf("UpdateGoal complete with every item done = %+v", res)
	}
	if g := c.awaitPlan("complete"); g.Status != "complete" || g.Progress == nil || g.Progress.Todos.Done != 2 || len(g.Progress.Todos.Open) != 0 {
		t.Fatalf("goalChanged complete = %+v", g)
	}
}

// TestPersonsChoiceOfRequiredItems: a person may create a goal that does
// not wait for its items; an agent's shell may not, nor drop a required
// item with agentd.todo.set; `agentd goal status` shows the plan.
func TestPersonsChoiceOfRequiredItems(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if out, code := e.agentShellRun(false, "goal", "create", "--require-todos=false", "ship it", "--workspace", e.ws); code == 0 || !strings.Contains(out, "may not create a goal that does not require its todo items") {
		t.Fatalf("an agent's shell creating a goal without its items: exit %d, %s", code, out)
	}
	cli := func(args ...string) string {
		t.Helper()
		out, errOut, code := e.cli(append(args, "--workspace", e.ws)...)
		if code != 0 {
			t.Fatalf("agentd %v: exit %d: %s", args, code, errOut)
		}
		return out
	}
	cli("goal", "create", "--require-todos=false", "explore")
	cli("tool", "TodoList", `{"todos":[{"title":"look around","status":"pending"}]}`)
	if out := cli("goal", "status"); !strings.Contains(out, "Completion does not wait for the todo items") {
		t.Errorf("goal status of a goal without required items:\n%s", out)
	}
	if res := cli("tool", "UpdateGoal", `{"status":"complete"}`); !strings.Contains(res, "Goal marked complete") {
		t.Fatalf("completing a goal that does not require its items: %s", res)
	}

	cli("goal", "create", "ship it")
	// The open item of the finished goal is required by the new one: the
	// model may not drop it, only finish it.
	if out, _, code := e.cli("tool", "TodoList", `{"todos":[{"title":"build","status":"done"}]}`, "--workspace", e.ws); code == 0 || !strings.Contains(out, `drops 1 item that is not done: "look around"`) {
		t.Fatalf("dropping the open item of the goal before: exit %d, %s", code, out)
	}
	cli("tool", "TodoList", `{"todos":[{"title":"look around","status":"done"},{"title":"build","status":"done"},{"title":"release notes","status":"pending"}]}`)
	out := cli("goal", "status")
	for _, want := range []string{"Progress: 2/3 todo items done", `Open items: "release notes"`, "Completion waits for every todo item to be done"} {
		if !strings.Contains(out, want) {
			t.Errorf("goal status lacks %q:\n%s", want, out)
		}
	}
	// An LSP client in an agent's shell (an agentd the agent started) acts
	// as the model: its agentd.todo.set drops no required item.
	cmd := e.command()
	cmd.Env = append(cmd.Env, "CLAUDECODE=1")
	agent := e.run(cmd).connect()
	agent.Initialize(nil, e.ws)
	err := agent.Exec("agentd.todo.set", map[string]any{"items": []map[string]any{{"title": "look around", "status": "done"}, {"title": "build", "status": "done"}}}, nil)
	if code := refusalCode(err); code != "goal.todos_open" || !strings.Contains(err.Error(), `drops 1 item that is not done: "release notes"`) {
		t.Fatalf("an agent shell's agentd.todo.set dropping a required item: %v (%s)", err, code)
	}
}
