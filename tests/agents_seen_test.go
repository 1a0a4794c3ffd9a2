package tests

// What people and models see in real agents (issue 26, item 6): the goal
// prompt's words in Claude Code, agentd's context as each agent wraps it,
// continuations not printed whole, and a short line when a budget stops
// the agent. Skipped unless AGENTD_AGENTS is set (tests/agents/ci.sh).

import (
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRealClaudeCodeGoalPromptWords: `/mcp__agentd__goal Ship the docs --
// make docs passes` in `claude -p` (which passes each word as its own
// prompt argument) creates the user's goal "Ship the docs" with the
// criterion "make docs passes", and the model gets the whole objective.
func TestRealClaudeCodeGoalPromptWords(t *testing.T) {
	a := newAgentEnv(t)
	model := newScriptedModel(t, []reply{
		{tool: "mcp__agentd__UpdateGoal", input: map[string]any{"status": "complete"}, tokens: 9},
		{text: "The docs are shipped.", tokens: 7},
	})
	lc, claude := claudeRun(t, a, model, nil)
	claude("/mcp__agentd__goal Ship the docs -- make docs passes")
	gc := lc.awaitGoal("create")
	if gc.Goal == nil || gc.Goal.Objective != "Ship the docs" || gc.Goal.CompletionCriterion != "make docs passes" || gc.Change.Actor != "user" {
		t.Errorf("the goal the prompt created: %+v, want the user's goal \"Ship the docs\" with criterion \"make docs passes\"", gc)
	}
	if calls := model.calls(); len(calls) == 0 || !strings.Contains(calls[0], "I have set a goal for this workspace: Ship the docs\\nIt is done when: make docs passes") {
		t.Errorf("the model's first call lacks the whole goal (%d calls)", len(calls))
	}
}

// TestMCPGoalPromptWords: the goal prompt joins its word arguments (the
// way Claude Code passes a slash command's words), parts the criterion at
// a lone "--", keeps a named criterion (Gemini CLI's --criterion=) and its
// "--" inside the objective, and refuses a filled last word slot, whose
// words after it the host may have dropped.
func TestMCPGoalPromptWords(t *testing.T) {
	for _, tc := range []struct {
		args                 map[string]string
		objective, criterion string
	}{
		{map[string]string{"objective": "Ship", "w2": "the", "w3": "docs"}, "Ship the docs", ""},
		{map[string]string{"objective": "Ship", "w2": "the", "w3": "docs", "w4": "--", "w5": "make", "w6": "docs", "w7": "passes"}, "Ship the docs", "make docs passes"},
		{map[string]string{"objective": "Ship the docs -- make docs passes"}, "Ship the docs", "make docs passes"},
		{map[string]string{"objective": "Ship the --docs", "criterion": "a -- b"}, "Ship the --docs", "a -- b"},
	} {
		e := newEnv(t)
		c := e.mcp("", "", "--workspace", e.ws)
		ctx, cancel := c.ctx()
		if _, err := c.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "goal", Arguments: tc.args}); err != nil {
			t.Fatalf("goal prompt %v: %v", tc.args, err)
		}
		cancel()
		out, _, _ := e.cli("goal", "status", "--json", "--workspace", e.ws)
		if !strings.Contains(out, fmt.Sprintf("%q: %q", "objective", tc.objective)) || (tc.criterion != "") != strings.Contains(out, fmt.Sprintf("%q: %q", "completionCriterion", tc.criterion)) {
			t.Errorf("goal prompt %v made %s, want objective %q, criterion %q", tc.args, out, tc.objective, tc.criterion)
		}
	}
	e := newEnv(t)
	c := e.mcp("", "", "--workspace", e.ws)
	ctx, cancel := c.ctx()
	defer cancel()
	args := map[string]string{"objective": "one"}
	for i := 2; i <= 40; i++ {
		args[fmt.Sprintf("w%d", i)] = "word"
	}
	_, err := c.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "goal", Arguments: args})
	if re := rpcErrorOf(t, "goal prompt of 40 words", err); re.Code != jsonrpc.CodeInvalidParams || !strings.Contains(re.Message, "at most 39 words") {
		t.Errorf("goal prompt of 40 words: %d %q, want -32602 naming the limit", re.Code, re.Message)
	}
	if out, _, _ := e.cli("goal", "status", "--workspace", e.ws); strings.Contains(out, "one word") {
		t.Errorf("a goal was created from 40 words: %s", out)
	}
}
