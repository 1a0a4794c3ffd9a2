package tests

// Real Claude Code on a goal that waits (docs/runtime.md §2.13), offline,
// after `agentd setup`: the scripted model asks to wait for a file; the
// hook stops the agent rather than continuing; the file appearing wakes
// the goal; the next run's model is told what woke it.
// Skipped unless AGENTD_AGENTS is set (tests/agents/ci.sh).

import (
	"os"
	"path/filepath"
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
	wait := map[string]any{"status": "waiting", "wait": map[string]any{"paths": []string{"ci/result.txt"}, "note": "the CI run"}}
	model := newScriptedModel(t, []reply{
		{tool: update, input: wait, tokens: 5},
		{tool: update, input: map[string]any{"status": "complete"}, tokens: 7},
		{text: "The release is out.", tokens: 5},
	})
	lc, claude := claudeRun(t, a, model, nil)
	if out, errOut, code := a.cli("goal", "create", "Ship the release", "--workspace", a.ws); code != 0 {
		t.Fatalf("agentd goal create: %s%s", out, errOut)
	}
	claude("Work on the goal.")
	if n := len(model.calls()); n != 1 {
		t.Fatalf("%d model calls in the run that waited, want 1: the agent went on after the wait", n)
	}
	if gc := lc.awaitGoal("wait"); gc.Change.Actor != "model" || gc.Change.Status != "waiting" {
		t.Fatalf("goalChanged wait = %+v", gc)
	}
	if err := os.MkdirAll(filepath.Join(a.ws, "ci"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(a.ws, "ci", "result.txt"), []byte("green\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if gc := lc.awaitGoal("wake"); !strings.Contains(gc.Change.Reason, "ci/result.txt changed") {
		t.Fatalf("goalChanged wake = %+v", gc)
	}
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
