package tests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// What a person set, the model cannot undo (docs/runtime.md §2.11), over
// the real binary: the model's goal tools cannot drop a person's check or
// budget, complete past a failing check, or advance the queue.

// toolIn runs a goal tool as the model does in the turn turnID.
func (c *client) toolIn(turnID, name string, input any) toolResult {
	c.T.Helper()
	var res toolResult
	c.MustExec("agentd.callTool", map[string]any{"name": name, "turnId": turnID, "input": input}, &res)
	return res
}

// expectRefused fails the test unless res is a refusal with code whose
// output says each of says.
func expectRefused(t *testing.T, what string, res toolResult, code string, says ...string) {
	t.Helper()
	if !res.IsError || res.ErrorCode != code {
		t.Fatalf("%s = %+v, want a refusal %s", what, res, code)
	}
	for _, s := range says {
		if !strings.Contains(res.Output, s) {
			t.Errorf("%s: output %q does not say %q", what, res.Output, s)
		}
	}
}

// TestModelCannotDropAPersonsCheck: a goal with a failing check a person
// set and "deploy to production" queued after it. The model's CreateGoal
// replace (same objective) then UpdateGoal complete, its pause and cancel
// attempts, and a replace once it marked the goal blocked are all refused:
// the check runs at every complete, the goal is never completed, the
// queue never advances. On the code before goal.person_set the replace
// went through and the complete advanced to the deploy.
func TestModelCannotDropAPersonsCheck(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	runs := filepath.Join(t.TempDir(), "runs")
	const objective = "make the deploy safe"
	var st struct{ Goal goalSnap }
	c.MustExec("agentd.goal.create", map[string]any{"objective": objective, "check": "echo run >> '" + runs + "'; echo 'deploy is not safe yet'; exit 1"}, &st)
	person := st.Goal.GoalID
	c.queueCall("agentd.goal.queue.add", map[string]any{"objective": "deploy to production"})
	c.MustExec("agentd.turn.begin", map[string]any{"turnId": "t1", "origin": "user"}, nil)
	c.MustExec("agentd.step.begin", map[string]any{"turnId": "t1"}, nil)

	complete := map[string]any{"status": "complete"}
	expectRefused(t, "the first complete", c.toolIn("t1", "UpdateGoal", complete), "goal.check_failed", "deploy is not safe yet")
	expectRefused(t, "CreateGoal replace", c.toolIn("t1", "CreateGoal", map[string]any{"objective": objective, "replace": true}),
		"goal.person_set", "It has a check the user set", "ask them to cancel or replace the current one themselves")
	expectRefused(t, "the complete after the replace", c.toolIn("t1", "UpdateGoal", complete), "goal.check_failed", "deploy is not safe yet")
	for _, status := range []string{"paused", "cancelled"} {
		expectRefused(t, "UpdateGoal "+status, c.toolIn("t1", "UpdateGoal", map[string]any{"status": status}), "goal.status_invalid", "Only the user can pause or cancel a goal")
	}
	// Outside the turn too (no turnId): the same rules.
	expectRefused(t, "CreateGoal replace with no turn", c.tool("CreateGoal", map[string]any{"objective": "anything", "replace": true}), "goal.person_set")
	if res := c.toolIn("t1", "UpdateGoal", map[string]any{"status": "blocked"}); res.IsError {
		t.Fatalf("UpdateGoal blocked = %+v", res)
	}
	expectRefused(t, "CreateGoal replace of the blocked goal", c.toolIn("t1", "CreateGoal", map[string]any{"objective": objective, "replace": true}),
		"goal.person_set", "the current goal is blocked")
	expectRefused(t, "CreateGoal without replace", c.toolIn("t1", "CreateGoal", map[string]any{"objective": objective}),
		"goal.already_exists", "so only the user can replace it")

	if g := c.goal(); g == nil || g.GoalID != person || g.Status != "blocked" {
		t.Fatalf("the person's goal is now %+v", g)
	}
	if _, q := c.queueCall("agentd.goal.queue.list", nil); !slices.Equal(queueObjectives(q.Items), []string{"deploy to production"}) {
		t.Fatalf("the queue is now %+v", q)
	}
	if data, _ := os.ReadFile(runs); string(data) != "run\nrun\n" {
		t.Errorf("the check ran %q, want twice (once per complete)", data)
	}
	for _, k := range c.historyKinds() {
		if k == "goal.replace" || k == "goal.complete" || k == "goal.advance" || k == "goal.cancel" {
			t.Fatalf("the history holds %s: %v", k, c.historyKinds())
		}
	}
	// The person may replace it: the rule binds the model only.
	c.MustExec("agentd.goal.create", map[string]any{"objective": "the person's new goal", "replace": true}, nil)
	if g := c.goal(); g.Objective != "the person's new goal" {
		t.Fatalf("the person's replace: %+v", g)
	}
}

// TestModelCannotRaiseAPersonsBudget: a person's 3-turn budget. The
// model's SetGoalBudget of 10 turns is refused before and after the goal
// runs out; the goal blocks after its third turn, and the model can
// neither resume it, raise it, nor replace it. It may lower the limit.
// On the code before goal.person_set the raise went through and the goal
// ran on.
func TestModelCannotRaiseAPersonsBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "tidy the docs"}, nil)
	c.MustExec("agentd.goal.setBudget", map[string]any{"turns": 3}, nil)

	raise := map[string]any{"value": 10, "unit": "turns"}
	for i, id := range []string{"t1", "t2", "t3"} {
		origin := "continuation"
		if i == 0 {
			origin = "user"
		}
		c.MustExec("agentd.turn.begin", map[string]any{"turnId": id, "origin": origin}, nil)
		c.MustExec("agentd.step.begin", map[string]any{"turnId": id}, nil)
		expectRefused(t, "SetGoalBudget 10 turns in "+id, c.toolIn(id, "SetGoalBudget", raise), "goal.person_set",
			"the user set a turn budget of 3 turns; only the user can raise it")
		c.MustExec("agentd.step.end", map[string]any{"turnId": id, "outputTokens": 10, "finishReason": "stop"}, nil)
		c.MustExec("agentd.turn.end", map[string]any{"turnId": id, "outcome": "completed"}, nil)
	}
	if gc := c.awaitGoal("block"); gc.Goal.Status != "blocked" || !strings.Contains(gc.Change.Reason, "turn budget of 3 turns") {
		t.Fatalf("after 3 turns: %+v", gc)
	}
	c.MustExec("agentd.turn.begin", map[string]any{"turnId": "t4", "origin": "user"}, nil)
	c.MustExec("agentd.step.begin", map[string]any{"turnId": "t4"}, nil)
	expectRefused(t, "SetGoalBudget 10 turns when blocked", c.toolIn("t4", "SetGoalBudget", raise), "goal.person_set")
	expectRefused(t, "UpdateGoal active", c.toolIn("t4", "UpdateGoal", map[string]any{"status": "active"}), "goal.not_resumable")
	expectRefused(t, "CreateGoal replace", c.toolIn("t4", "CreateGoal", map[string]any{"objective": "tidy the docs", "replace": true}),
		"goal.person_set", "It has a budget the user set")
	if g := c.goal(); g.Status != "blocked" || g.Budget.TurnBudget == nil || *g.Budget.TurnBudget != 3 || g.TurnsUsed != 3 {
		t.Fatalf("the goal is now %+v, budget %v", g, g.Budget.TurnBudget)
	}
	if res := c.toolIn("t4", "SetGoalBudget", map[string]any{"value": 2, "unit": "turns"}); res.IsError {
		t.Fatalf("lowering the person's limit: %+v", res)
	}
	if g := c.goal(); *g.Budget.TurnBudget != 2 {
		t.Fatalf("after lowering: %+v", g.Budget)
	}
	// The person raises it; then the goal resumes.
	c.MustExec("agentd.goal.setBudget", map[string]any{"turns": 10}, nil)
	if res := c.toolIn("t4", "UpdateGoal", map[string]any{"status": "active"}); res.IsError {
		t.Fatalf("resume after the person's raise: %+v", res)
	}
}
