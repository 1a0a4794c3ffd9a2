package tests

import (
	"slices"
	"sync"
	"testing"
)

// TestParallelCallsAtABudgetCrossing: a model that calls its goal tools in
// parallel while its step's tokens cross a person's token budget (the
// host's step end arrives among the calls): raises of the budget, resumes
// and replaces race the crossing. Whatever order they land in, every raise
// and replace is refused (goal.person_set before the crossing, not run
// after it), the goal ends blocked by the
// person's budget of 100 tokens with all 150 counted, and nothing replaced
// it (docs/runtime.md §2.11).
func TestParallelCallsAtABudgetCrossing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "tidy the docs"}, nil)
	c.MustExec("agentd.goal.setBudget", map[string]any{"tokens": 100}, nil)
	c.MustExec("agentd.turn.begin", map[string]any{"turnId": "t1", "origin": "user"}, nil)
	c.MustExec("agentd.step.begin", map[string]any{"turnId": "t1"}, nil)

	calls := []struct {
		name  string
		input map[string]any
	}{
		{"SetGoalBudget", map[string]any{"value": 1000, "unit": "tokens"}},
		{"CreateGoal", map[string]any{"objective": "tidy the docs", "replace": true}},
		{"UpdateGoal", map[string]any{"status": "active"}},
		{"SetGoalBudget", map[string]any{"value": 100000, "unit": "tokens"}},
		{"CreateGoal", map[string]any{"objective": "anything", "replace": true}},
		{"UpdateGoal", map[string]any{"status": "active"}},
	}
	results := make([]toolResult, len(calls))
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Go(func() {
			errs[i] = c.Exec("agentd.callTool", map[string]any{"name": call.name, "turnId": "t1", "input": call.input}, &results[i])
		})
	}
	wg.Go(func() {
		c.MustExec("agentd.step.end", map[string]any{"turnId": "t1", "outputTokens": 150, "finishReason": "tool_calls"}, nil)
	})
	wg.Wait()
	for i, call := range calls {
		if errs[i] != nil {
			t.Fatalf("%s: %v", call.name, errs[i])
		}
		if call.name != "UpdateGoal" && !results[i].IsError {
			t.Errorf("%s %v = %+v; want it refused (goal.person_set, or not run once the budget is spent)", call.name, call.input, results[i])
		}
	}
	g := c.goal()
	if g.Status != "blocked" || g.TokensUsed != 150 || g.Budget.TokenBudget == nil || *g.Budget.TokenBudget != 100 || g.Objective != "tidy the docs" {
		t.Fatalf("the goal after the race: %+v, token budget %v; want blocked by the person's 100 tokens, 150 counted", g, g.Budget.TokenBudget)
	}
	if kinds := c.historyKinds(); slices.Contains(kinds, "goal.replace") {
		t.Fatalf("the history holds a replace: %v", kinds)
	}
}
