package tests

// `agentd run` on a goal that waits for a file (docs/runtime.md §2.13,
// docs/commands.md "Running a goal unattended"), with the real Claude Code
// offline on a scripted model: the run spends nothing while the goal waits
// and starts the agent again when the file's change wakes it; and a goal
// completed through `agentd run gemini` and `agentd run codex`.
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

// agentOnPath is env with agent's program first on the PATH, as `agentd
// run AGENT` finds it.
func agentOnPath(t *testing.T, a *agentEnv, agent string, env []string) []string {
	path := filepath.Dir(agentBin(t, agent)) + string(os.PathListSeparator) + filepath.Dir(agentdBin) + string(os.PathListSeparator) + os.Getenv("PATH")
	return append(env, "PATH="+path)
}

// TestRealGeminiCLIRun: `agentd run gemini` (the prompt on Gemini CLI's
// stdin, a session id of the run's): the model asks twice in parallel to
// wait for ci/result.txt; the process ends and the run waits; writing the
// file wakes the goal, the run resumes the session (`--resume ID`), its
// first request names the change, and the model completes the goal; exit 0.
// Gemini CLI reads its scripted responses from the start in each process:
// the test writes the second process's before the wake.
func TestRealGeminiCLIRun(t *testing.T) {
	a := newAgentEnv(t)
	const update = "mcp_agentd_UpdateGoal"
	wait := map[string]any{"status": "waiting", "wait": map[string]any{"paths": []string{"ci/result.txt"}, "note": "the CI run"}}
	lc, _ := geminiRun(t, a, []reply{
		{tool: update, input: wait, tokens: 5, also: []reply{{tool: update, input: wait}}},
	})
	personGoal(t, a)
	if err := os.MkdirAll(filepath.Join(a.ws, "ci"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := agentOnPath(t, a, "gemini", a.environ("GEMINI_API_KEY=dummy"))
	p := startRunOf(t, a, env, "gemini", "-m", "gemini-2.5-flash", "--fake-responses", filepath.Join(a.home, "fake-responses.jsonl"), "--yolo")
	started := p.awaitLine("starting gemini (session ")
	p.awaitLine("waiting: the goal is waiting (")
	writeGeminiScript(t, a, []reply{
		{tool: "mcp_agentd_TodoList", input: map[string]any{"todos": []item{{"write the parser", "done"}}}, tokens: 5},
		{tool: update, input: map[string]any{"status": "complete"}, tokens: 5},
		{text: "Done: the parser ships.", tokens: 4},
	})
	writeFile(t, filepath.Join(a.ws, "ci", "result.txt"), []byte("green\n"))
	resumed := p.awaitLine("resuming gemini (session ")
	if code, last := p.wait(); code != 0 || !strings.HasPrefix(last, "goal complete after ") {
		t.Fatalf("agentd run gemini exited %d with %q, want 0 and the goal complete:\n%s\n%s", code, last, p.output(), p.stderr.String())
	}
	if id := strings.TrimPrefix(started, "starting gemini (session "); "resuming gemini (session "+id != resumed {
		t.Errorf("the second process %q does not resume the first's session %q", resumed, started)
	}
	if log, _ := os.ReadFile(filepath.Join(a.home, "beforemodel.jsonl")); !strings.Contains(string(log), "ci/result.txt changed") {
		t.Errorf("no request after the wake says what woke the goal")
	}
	if g := goalNow(t, lc); g.Status != "complete" {
		t.Errorf("goal after the run: %+v", g)
	}
}

// TestRealCodexRun: `agentd run codex` (`codex exec -`, the prompt on its
// stdin) on the scripted Responses model: an editor's pause while the
// model answers ends the process after that turn, the editor's resume
// starts the next (`codex exec resume --last -`, the same flags), which
// carries the first one's conversation, and the goal completes; exit 0.
func TestRealCodexRun(t *testing.T) {
	a := newAgentEnv(t)
	release := filepath.Join(t.TempDir(), "release")
	model := newResponsesModel(t, []reply{
		{tool: "mcp__agentd/TodoList", input: map[string]any{"todos": []item{{"write the parser", "in_progress"}}}, tokens: 5},
		{text: "Half of the parser is written.", tokens: 7, waitFor: release},
		{tool: "mcp__agentd/TodoList", input: map[string]any{"todos": []item{{"write the parser", "done"}}}, tokens: 5},
		{tool: "mcp__agentd/UpdateGoal", input: map[string]any{"status": "complete"}, tokens: 5},
		{text: "Done: the parser ships.", tokens: 4},
	})
	lc, _ := codexRun(t, a, model)
	personGoal(t, a)
	env := agentOnPath(t, a, "codex", a.environ(a.codexConfig(model.url)...))
	p := startRunOf(t, a, env, "codex", "--skip-git-repo-check", "--dangerously-bypass-hook-trust")
	p.awaitLine("now: write the parser")
	lc.MustExec("agentd.goal.pause", map[string]any{"reason": "lunch"}, nil)
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p.awaitLine("waiting: the goal is paused (lunch)")
	if n := len(model.calls()); n != 2 {
		t.Fatalf("%d model calls when the run waits, want 2", n)
	}
	lc.MustExec("agentd.goal.resume", map[string]any{}, nil)
	p.awaitLine("resuming codex (session ")
	if code, last := p.wait(); code != 0 || !strings.HasPrefix(last, "goal complete after ") {
		t.Fatalf("agentd run codex exited %d with %q, want 0 and the goal complete:\n%s\n%s", code, last, p.output(), p.stderr.String())
	}
	calls := model.calls()
	if len(calls) != 5 {
		t.Fatalf("%d model calls, want 5", len(calls))
	}
	if !strings.Contains(calls[2], "Half of the parser is written.") {
		t.Errorf("the second process's first call lacks the first process's conversation")
	}
	if g := goalNow(t, lc); g.Status != "complete" {
		t.Errorf("goal after the run: %+v", g)
	}
}
