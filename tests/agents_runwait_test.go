package tests

// `agentd run` on a goal that waits for a file (docs/runtime.md §2.13,
// docs/commands.md "Running a goal unattended"), with the real Claude Code
// offline on a scripted model: the run spends nothing while the goal waits
// and starts the agent again when the file's change wakes it.
// Skipped unless AGENTD_AGENTS is set (tests/agents/ci.sh).

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRealClaudeCodeRunWaitsForAFile: the model, in its first turn, asks
// twice in parallel to wait for ci/result.txt and then answers "Done."
// without completing anything; the hook stops the agent, the run waits
// and no model call comes while it does; writing the file wakes the goal
// (the editor's client sees the wake, the run says it waits no more), the
// run starts the agent again, its first request names the change that
// woke the goal, and the model completes the goal: exit 0.
func TestRealClaudeCodeRunWaitsForAFile(t *testing.T) {
	a := newAgentEnv(t)
	const update = "mcp__agentd__UpdateGoal"
	wait := map[string]any{"status": "waiting", "wait": map[string]any{"paths": []string{"ci/result.txt"}, "note": "the CI run"}}
	model := newScriptedModel(t, append([]reply{
		{tool: update, input: wait, tokens: 5, also: []reply{{tool: update, input: wait}}},
		{text: "Done.", tokens: 2},
	}, finishScript...))
	lc, env := claudeForRun(t, a, model)
	personGoal(t, a)
	if err := os.MkdirAll(filepath.Join(a.ws, "ci"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := startRun(t, a, env)
	p.awaitLine("waiting: the goal is waiting (")
	if gc := lc.awaitGoal("wait"); gc.Change.Actor != "model" || gc.Change.Status != "waiting" {
		t.Fatalf("goalChanged wait = %+v", gc)
	}
	const waited = 1 // the hook stops the agent after the call that waits
	if n := len(model.calls()); n != waited {
		t.Fatalf("%d model calls when the run waits, want %d: the agent went on after the wait", n, waited)
	}
	if g := goalNow(t, lc); g.Status != "waiting" {
		t.Fatalf("goal while the run waits: %+v", g)
	}
	if n := len(model.calls()); n != waited {
		t.Fatalf("%d model calls while the goal waits, want %d: the run spent while waiting", n, waited)
	}
	if err := os.WriteFile(filepath.Join(a.ws, "ci", "result.txt"), []byte("green\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if gc := lc.awaitGoal("wake"); !strings.Contains(gc.Change.Reason, "ci/result.txt changed") {
		t.Fatalf("goalChanged wake = %+v", gc)
	}
	p.awaitLine("claude (session ")
	if code, last := p.wait(); code != 0 || !strings.HasPrefix(last, "goal complete after ") {
		t.Fatalf("agentd run exited %d with %q, want 0 and the goal complete:\n%s\n%s", code, last, p.output(), p.stderr.String())
	}
	calls := model.calls()
	if len(calls) <= waited {
		t.Fatalf("%d model calls, want more than the %d before the wake", len(calls), waited)
	}
	if !strings.Contains(calls[waited], "ci/result.txt changed") {
		t.Errorf("the first request after the wake does not say what woke the goal:\n%s", lastMessage(calls[waited]))
	}
	if g := goalNow(t, lc); g.Status != "complete" {
		t.Errorf("goal after the run: %+v", g)
	}
}
