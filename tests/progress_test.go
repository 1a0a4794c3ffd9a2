package tests

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// awaitGoalWhere waits for an agentd/goalChanged that match accepts.
func (c *client) awaitGoalWhere(what string, match func(goalChanged) bool) goalChanged {
	c.T.Helper()
	var gc goalChanged
	raw := c.Await("agentd/goalChanged", func(raw json.RawMessage) bool {
		var g goalChanged
		return json.Unmarshal(raw, &g) == nil && match(g)
	})
	if err := json.Unmarshal(raw, &gc); err != nil {
		c.T.Fatalf("%s: %v", what, err)
	}
	return gc
}

// playTurn runs one goal turn of one step (tokens, stop) and ends it
// completed, returning the step's injections.
func (h *host) playTurn(origin string, tokens int64) []string {
	h.t.Helper()
	turn, _ := h.beginTurn(origin)
	inj := h.beginStep(turn)
	h.endStep(turn, tokens, "stop")
	h.endTurn(turn, "completed")
	return variants(inj)
}

// TestBudgetWarningsEndToEnd: a 5-turn budget warns at turn 3 (50 %) and
// turn 4 (80 %) with budgetWarning and percent, once each; the 80 % turn's
// first step gets goal_wrap_up after the goal reminder, and the history
// keeps percent (docs/runtime.md §2.4.4).
func TestBudgetWarningsEndToEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	h := newHost(c)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "port the parser"}, nil)
	c.MustExec("agentd.goal.setBudget", map[string]any{"turns": 5}, nil)

	warned := func() []int {
		var out []int
		for _, raw := range c.NotesOf("agentd/goalChanged") {
			var g goalChanged
			if json.Unmarshal(raw, &g) == nil && g.Change.Kind == "budgetWarning" {
				out = append(out, g.Change.Percent)
			}
		}
		return out
	}
	for turn := 1; turn <= 4; turn++ {
		origin := "continuation"
		if turn == 1 {
			origin = "user"
		}
		got := h.playTurn(origin, 10)
		want := []string{"goal"}
		if turn == 4 {
			want = []string{"goal", "goal_wrap_up"}
		}
		if !slices.Equal(got, want) {
			t.Errorf("turn %d injections %v, want %v", turn, got, want)
		}
		switch turn {
		case 2:
			if w := warned(); len(w) != 0 {
				t.Fatalf("warnings after 2 of 5 turns: %v", w)
			}
		case 3:
			gc := c.awaitGoalWhere("the 50 % warning", func(g goalChanged) bool { return g.Change.Kind == "budgetWarning" && g.Change.Percent == 50 })
			if gc.Change.Actor != "runtime" || gc.Change.Reason != "50 % of the turn budget of 5 turns used" || gc.Goal.TurnsUsed != 3 {
				t.Errorf("50 %% warning %+v, goal %+v", gc.Change, gc.Goal)
			}
		case 4:
			c.awaitGoalWhere("the 80 % warning", func(g goalChanged) bool { return g.Change.Kind == "budgetWarning" && g.Change.Percent == 80 })
		}
	}
	turn, _ := h.beginTurn("continuation")
	if inj := variants(h.beginStep(turn)); slices.Contains(inj, "goal_wrap_up") {
		t.Errorf("turn 5 got the wrap-up note again: %v", inj)
	}
	if w := warned(); !slices.Equal(w, []int{50, 80}) {
		t.Errorf("warnings %v, want 50 then 80, once each", w)
	}
	var hist struct {
		Events []struct {
			Kind    string
			Payload []struct {
				Kind    string
				Percent int
			}
		}
	}
	c.MustExec("agentd.history", map[string]any{"limit": 50}, &hist)
	var percents []int
	for _, ev := range hist.Events {
		if ev.Kind == "goal.budgetWarning" {
			for _, p := range ev.Payload {
				if p.Kind == "budgetWarning" {
					percents = append(percents, p.Percent)
				}
			}
		}
	}
	if !slices.Equal(percents, []int{80, 50}) {
		t.Errorf("history percents (newest first) %v, want [80 50]", percents)
	}
}

// TestWallClockWarningsByTimer: a 2 s time budget warns at 50 % and 80 %
// and then blocks, each told by the timer without any command
// (docs/runtime.md §2.4.4).
func TestWallClockWarningsByTimer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "be quick"}, nil)
	c.MustExec("agentd.goal.setBudget", map[string]any{"wallClockMs": 2000}, nil)
	for _, p := range []int{50, 80} {
		gc := c.awaitGoalWhere("a time warning", func(g goalChanged) bool { return g.Change.Kind == "budgetWarning" && g.Change.Percent == p })
		if gc.Goal.Status != "active" || !strings.Contains(gc.Change.Reason, "wall-clock budget of 2 seconds") {
			t.Errorf("%d %% warning: %+v", p, gc)
		}
	}
	if gc := c.awaitGoal("block"); gc.Goal.Status != "blocked" {
		t.Errorf("block: %+v", gc)
	}
}

// TestStallEndToEnd: with stallTurns 2, two quiet goal turns stall the
// goal (goalChanged stall, the snapshot's stalled), the next reminder asks
// to re-plan; a TodoList write clears it (todoChanged, then goalChanged
// stallCleared); two more quiet turns stall it again and a checkbox edit of
// the task file clears it with the taskFile change, whose notifications
// carry the new counts (docs/runtime.md §2.4.5, docs/task-files.md).
func TestStallEndToEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tfWrite("TASK.md", "# Task\n\n- [ ] parse\n- [x] lex\n```\n- [ ] not a box\n```\n")
	c := e.start().connect()
	c.Initialize(map[string]any{"settings": map[string]any{"stallTurns": 2}}, e.ws)
	h := newHost(c)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "work through TASK.md", "taskFile": "TASK.md"}, nil)
	if g := c.tfGoalNow(""); g.TaskFile == nil || g.TaskFile.Checkboxes == nil || *g.TaskFile.Checkboxes != (checkboxes{Checked: 1, Total: 2}) {
		t.Fatalf("task file at create: %+v", g.TaskFile)
	}

	stallTurns := func(first string) {
		t.Helper()
		after := c.state().Revision
		h.playTurn(first, 5)
		if g := c.goal(); g.Stalled {
			t.Fatalf("stalled after one quiet turn")
		}
		h.playTurn("continuation", 5)
		gc := c.awaitGoalWhere("a stall", func(g goalChanged) bool { return g.Change.Kind == "stall" && g.Revision > after })
		if !gc.Goal.Stalled || gc.Change.Actor != "runtime" || !strings.Contains(gc.Change.Reason, "2 goal turns in a row") {
			t.Fatalf("stall notification %+v", gc)
		}
		if !c.goal().Stalled {
			t.Fatal("agentd.state does not say stalled")
		}
	}
	stallTurns("user")
	turn, _ := h.beginTurn("continuation")
	inj := h.beginStep(turn)
	if len(inj) == 0 || inj[0].Variant != "goal" || !strings.Contains(inj[0].Text, "Stalled:") || !strings.Contains(inj[0].Text, "Task file `TASK.md`: 1/2 checked.") {
		t.Fatalf("reminder of a stalled goal:\n%v", inj)
	}
	if res := c.tool("TodoList", map[string]any{"todos": []map[string]any{{"title": "try another parser", "status": "in_progress"}}}); res.IsError {
		t.Fatalf("TodoList: %+v", res)
	}
	todo := c.awaitTodo(e.ws, "try another parser")
	gc := c.awaitGoalWhere("stallCleared", func(g goalChanged) bool { return g.Change.Kind == "stallCleared" })
	if gc.Goal.Stalled || gc.Change.Status != "active" || gc.Revision != todo.Revision {
		t.Errorf("stallCleared %+v at revision %d, want unstalled at the todo write's revision %d", gc, gc.Revision, todo.Revision)
	}
	same := 0
	for _, raw := range c.NotesOf("agentd/goalChanged") {
		var g goalChanged
		if json.Unmarshal(raw, &g) == nil && g.Revision == todo.Revision {
			same++
		}
	}
	if same != 1 {
		t.Errorf("%d goalChanged of the todo write's revision %d, want 1", same, todo.Revision)
	}
	h.endStep(turn, 5, "stop")
	h.endTurn(turn, "completed") // progress was made in this turn: it does not count

	stallTurns("continuation")
	from := len(c.tfNotes())
	e.tfWrite("TASK.md", "# Task\n\n- [x] parse\n- [x] lex\n```\n- [ ] not a box\n```\n")
	tf, _ := c.awaitTaskFile(from, "TASK.md", tfPtr("# Task\n\n- [x] parse\n- [x] lex\n```\n- [ ] not a box\n```\n"))
	if tf.Checkboxes == nil || *tf.Checkboxes != (checkboxes{Checked: 2, Total: 2}) {
		t.Errorf("taskFileChanged checkboxes %+v, want 2/2", tf.Checkboxes)
	}
	gc = c.awaitGoalWhere("the taskFile change", func(g goalChanged) bool { return g.Change.Kind == "taskFile" && g.Revision == tf.Revision })
	if gc.Goal.Stalled {
		t.Errorf("still stalled after a checkbox edit: %+v", gc.Goal)
	}
	if g := c.tfGoalNow(""); g.TaskFile.Checkboxes == nil || *g.TaskFile.Checkboxes != (checkboxes{Checked: 2, Total: 2}) {
		t.Errorf("state after the edit: %+v", g.TaskFile)
	}
}

// TestShellCheckboxes: the shell's goal view shows the task file's
// checkbox counts as the file is now (docs/task-files.md, "Checkboxes").
func TestShellCheckboxes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.tfWrite("TASK.md", "- [ ] one\n  * [X] two\n+ [ ] three\n")
	out, errOut, code := e.cliIn(e.ws, "goal", "create", "work through TASK.md", "--task-file", "TASK.md")
	if code != 0 || !strings.Contains(out, "Task file: TASK.md (present), 1/3 checked") {
		t.Fatalf("goal create: exit %d %q %q, want 1/3 checked", code, out, errOut)
	}
	e.tfWrite("TASK.md", "- [x] one\n  * [X] two\n+ [ ] three\n")
	if out, _, _ := e.cliIn(e.ws, "goal", "status"); !strings.Contains(out, "Task file: TASK.md (present), 2/3 checked") {
		t.Errorf("goal status after ticking one: %q, want 2/3 checked", out)
	}
	var st struct {
		Goal struct{ TaskFile tfInfo }
	}
	out, _, _ = e.cliIn(e.ws, "state", "--json")
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.Goal.TaskFile.Checkboxes == nil || *st.Goal.TaskFile.Checkboxes != (checkboxes{Checked: 2, Total: 3}) {
		t.Errorf("state --json: %v %q", err, out)
	}
}
