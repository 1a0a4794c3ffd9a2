package tests

// Real Claude Code on a goal that waits (docs/runtime.md §2.13), offline,
// after `agentd setup`: the scripted model asks to wait for a file; the
// hook stops the agent rather than continuing; the file appearing wakes
// the goal; the next run's model is told what woke it.
// Skipped unless AGENTD_AGENTS is set (tests/agents/ci.sh).

import (
	"strings"
	"testing"
)

// TestRealClaudeCodeGoalWaits: Claude Code's model calls UpdateGoal
// waiting on ci/result.txt; agentd stops the agent after that one model
// call, the goal waits; writing the file wakes it (goalChanged wake); the
// next `claude -p` gets the wake in its first request and completes.
func TestRealClaudeCodeGoalWaits(t *testing.T) {
	a := newAgentEnv(t)
	const update = "mcp__agentd__UpdateGoal"
	model := newScriptedModel(t, []reply{
		{tool: update, input: waitForCI, tokens: 5},
		{tool: update, input: map[string]any{"status": "complete"}, tokens: 7},
		{text: "The release is out.", tokens: 5},
	})
	lc, claude := claudeRun(t, a, model, nil)
	personGoal(t, a)
	claude("Work on the goal.")
	if n := len(model.calls()); n != 1 {
		t.Fatalf("%d model calls in the run that waited, want 1: the agent went on after the wait", n)
	}
	awaitModelWait(t, lc)
	ciFolder(t, a)
	ciPasses(t, a, lc)
	if out := claude("Go on with the goal."); !strings.Contains(out, "The release is out.") {
		t.Errorf("claude -p output: %q, want the last answer", out)
	}
	calls := model.calls()
	if len(calls) != 3 {
		t.Fatalf("%d model calls, want 3", len(calls))
	}
	if !strings.Contains(calls[1], "ci/result.txt changed") {
		t.Errorf("the first request after the wake does not say what woke the goal")
	}
	if g := lc.goal(); g == nil || g.Status != "complete" {
		t.Errorf("goal after the agent: %+v", g)
	}
}
