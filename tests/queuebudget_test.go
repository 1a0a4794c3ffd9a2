package tests

import (
	"strings"
	"testing"
)

// TestGoalQueueBudget: a goal queued from a shell with --budget starts,
// when the goal before it completes, bounded by that budget as the person's
// limit (docs/runtime.md §2.9.1, §2.11): the model's SetGoalBudget cannot
// raise it, and the goal is blocked when its one turn is spent. A bad
// budget is refused before anything is queued.
func TestGoalQueueBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, errOut, code := e.cli("goal", "queue", "add", "x", "--budget", "0 turns", "--workspace", e.ws); code != 2 || !strings.Contains(errOut, `"0 turns" is out of range`) {
		t.Fatalf("queue add --budget \"0 turns\": %d %q, want a usage error naming the budget", code, errOut)
	}
	if _, errOut, code := e.cli("goal", "create", "first goal", "--workspace", e.ws); code != 0 {
		t.Fatalf("goal create: %d %q", code, errOut)
	}
	out, errOut, code := e.cli("goal", "queue", "add", "second goal", "--budget", "1 turn, 50k tokens", "--budget", "2 hours", "--workspace", e.ws)
	if code != 0 || !strings.Contains(out, "  1. second goal\n") || !strings.Contains(out, "Budget: 1 turn, 50000 tokens, 2 hours\n") {
		t.Fatalf("queue add --budget: %d %q %q", code, out, errOut)
	}

	c := e.start().connect()
	c.Initialize(nil, e.ws)
	var st struct{ Queue queueState }
	c.MustExec("agentd.state", nil, &st)
	if len(st.Queue.Items) != 1 || st.Queue.Items[0].TurnBudget == nil || *st.Queue.Items[0].TurnBudget != 1 || *st.Queue.Items[0].TokenBudget != 50000 || *st.Queue.Items[0].WallClockBudgetMs != 7_200_000 {
		t.Fatalf("agentd.state's queue = %+v", st.Queue)
	}

	c.MustExec("agentd.turn.begin", map[string]any{"turnId": "t1", "origin": "user"}, nil)
	c.MustExec("agentd.step.begin", map[string]any{"turnId": "t1"}, nil)
	var res toolResult
	c.MustExec("agentd.callTool", map[string]any{"name": "UpdateGoal", "turnId": "t1", "input": map[string]any{"status": "complete"}}, &res)
	adv := c.awaitGoal("advance")
	if g := adv.Goal; g.Objective != "second goal" || g.Budget.TurnBudget == nil || *g.Budget.TurnBudget != 1 || g.Budget.TokenBudget == nil || *g.Budget.TokenBudget != 50000 {
		t.Fatalf("the advanced goal = %+v, want the queued budgets", g)
	}
	c.MustExec("agentd.step.end", map[string]any{"turnId": "t1", "outputTokens": 10, "finishReason": "stop"}, nil)
	c.MustExec("agentd.turn.end", map[string]any{"turnId": "t1", "outcome": "completed"}, nil)

	// The next turn works on the second goal; the model tries to give
	// itself more turns, and repeats itself, then ends its turn.
	c.MustExec("agentd.turn.begin", map[string]any{"turnId": "t2", "origin": "continuation"}, nil)
	c.MustExec("agentd.step.begin", map[string]any{"turnId": "t2"}, nil)
	for range 2 {
		var raise toolResult
		c.MustExec("agentd.callTool", map[string]any{"name": "SetGoalBudget", "turnId": "t2", "input": map[string]any{"value": 100, "unit": "turns"}}, &raise)
		if !raise.IsError || raise.ErrorCode != "goal.person_set" {
			t.Fatalf("the model raising the queued goal's turn budget = %+v, want goal.person_set", raise)
		}
	}
	c.MustExec("agentd.step.end", map[string]any{"turnId": "t2", "outputTokens": 10, "finishReason": "stop"}, nil)
	c.MustExec("agentd.turn.end", map[string]any{"turnId": "t2", "outcome": "completed"}, nil)
	blocked := c.awaitGoalWhere("blocked", func(g goalChanged) bool { return g.Goal.Status == "blocked" })
	if g := blocked.Goal; g.Objective != "second goal" || g.TerminalReason != "budget reached: turn budget of 1 turn" {
		t.Fatalf("the second goal after its turn = %+v, want blocked by its turn budget", g)
	}
}
