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
	model := newScriptedModel(t, append([]reply{
		{tool: update, input: waitForCI, tokens: 5, also: []reply{{tool: update, input: waitForCI}}},
		{text: "Done.", tokens: 2},
	}, finishScript...))
	lc, env := claudeForRun(t, a, model)
	personGoal(t, a)
	ciFolder(t, a)
	p := startRun(t, a, env)
	p.awaitLine("waiting: the goal is waiting (")
	awaitModelWait(t, lc)
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
	ciPasses(t, a, lc)
	p.awaitLine("claude (session ")
	p.waitComplete()
	calls := model.calls()
	if len(calls) <= waited {
		t.Fatalf("%d model calls, want more than the %d before the wake", len(calls), waited)
	}
	if !strings.Contains(calls[waited], "ci/result.txt changed") {
		t.Errorf("the first request after the wake does not say what woke the goal:\n%s", lastMessage(calls[waited]))
	}
	goalComplete(t, lc)
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
	lc, _ := geminiRun(t, a, []reply{
		{tool: update, input: waitForCI, tokens: 5, also: []reply{{tool: update, input: waitForCI}}},
	})
	personGoal(t, a)
	ciFolder(t, a)
	env := agentOnPath(t, a, "gemini", a.environ("GEMINI_API_KEY=dummy"))
	p := startRunOf(t, a, env, "gemini", "-m", "gemini-2.5-flash", "--fake-responses", filepath.Join(a.home, "fake-responses.jsonl"), "--yolo")
	started := p.awaitLine("starting gemini (session ")
	p.awaitLine("waiting: the goal is waiting (")
	writeGeminiScript(t, a, []reply{
		{tool: "mcp_agentd_TodoList", input: map[string]any{"todos": []item{{"write the parser", "done"}}}, tokens: 5},
		{tool: update, input: map[string]any{"status": "complete"}, tokens: 5},
		{text: "Done: the parser ships.", tokens: 4},
	})
	ciPasses(t, a, lc)
	resumed := p.awaitLine("resuming gemini (session ")
	p.waitComplete()
	sameSession(t, "gemini", started, resumed)
	if log, _ := os.ReadFile(filepath.Join(a.home, "beforemodel.jsonl")); !strings.Contains(string(log), "ci/result.txt changed") {
		t.Errorf("no request after the wake says what woke the goal")
	}
	goalComplete(t, lc)
}

// TestRealCodexRun: `agentd run codex` (`codex exec -`, the prompt on its
// stdin) on the scripted Responses model: an editor's pause while the
// model answers ends the process after that turn, the editor's resume
// starts the next (`codex exec resume ID -`, the same flags) on the
// session Codex named in its output, which carries the first one's
// conversation, and the goal completes; exit 0. The id the run shows is
// Codex's own: the one of Codex's session file.
func TestRealCodexRun(t *testing.T) {
	a := newAgentEnv(t)
	halfway, release := releaseFile(t)
	model := newResponsesModel(t, []reply{
		{tool: "mcp__agentd/TodoList", input: map[string]any{"todos": []item{{"write the parser", "in_progress"}}}, tokens: 5},
		{text: "Half of the parser is written.", tokens: 7, waitFor: halfway},
		{tool: "mcp__agentd/TodoList", input: map[string]any{"todos": []item{{"write the parser", "done"}}}, tokens: 5},
		{tool: "mcp__agentd/UpdateGoal", input: map[string]any{"status": "complete"}, tokens: 5},
		{text: "Done: the parser ships.", tokens: 4},
	})
	lc, _ := codexRun(t, a, model)
	personGoal(t, a)
	env := agentOnPath(t, a, "codex", a.environ(a.codexConfig(model.url)...))
	p := startRunOf(t, a, env, "codex", "--skip-git-repo-check", "--dangerously-bypass-hook-trust")
	p.awaitLine("starting codex (a new session, which codex names)")
	pauseWhileAnswering(t, p, lc, release, func() int { return len(model.calls()) })
	resumed := p.awaitLine("resuming codex (session ")
	p.waitComplete()
	id := strings.TrimSuffix(strings.TrimPrefix(resumed, "resuming codex (session "), ")")
	if !strings.Contains(p.output(), "codex named its session "+id) {
		t.Errorf("the run resumes session %q, not the one it said Codex named:\n%s", id, p.output())
	}
	if files, _ := filepath.Glob(filepath.Join(a.home, ".codex", "sessions", "*", "*", "*", "rollout-*-"+id+".jsonl")); len(files) != 1 {
		t.Errorf("Codex has no session file of the id the run shows, %q", id)
	}
	calls := model.calls()
	if len(calls) != 5 {
		t.Fatalf("%d model calls, want 5", len(calls))
	}
	if !strings.Contains(calls[2], "Half of the parser is written.") {
		t.Errorf("the second process's first call lacks the first process's conversation")
	}
	goalComplete(t, lc)
}
