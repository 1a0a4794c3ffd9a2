package tests

// Real GitHub Copilot CLI with agentd (docs/hooks.md, docs/mcp.md), offline,
// after `agentd setup copilot`: `copilot -p` on a scripted Chat Completions
// model. Skipped unless AGENTD_AGENTS is set (tests/agents/ci.sh).

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copilotRun sets Copilot CLI up in a with agentd (setup copilot, and setup
// claude too when withClaude: Copilot CLI also runs .claude/settings.json's
// hooks), an editor's client on the folder first, and returns the client and
// a func that runs `copilot -p` with every tool allowed.
func copilotRun(t *testing.T, a *agentEnv, model *chatModel, withClaude bool) (*client, func(prompt string) string) {
	copilot := agentBin(t, "copilot")
	lc := a.editorFirst()
	if withClaude {
		a.setup("claude")
	}
	a.setup("copilot")
	for _, f := range []string{".github/mcp.json", ".github/hooks/agentd.json"} {
		if b, err := os.ReadFile(filepath.Join(a.ws, f)); err != nil || !strings.Contains(string(b), "agentd") {
			t.Fatalf("%s after agentd setup copilot: %v\n%s", f, err, b)
		}
	}
	env := a.environ("COPILOT_OFFLINE=true", "COPILOT_PROVIDER_BASE_URL="+model.url+"/v1", "COPILOT_PROVIDER_API_KEY=dummy",
		"COPILOT_MODEL=gpt-4.1", "COPILOT_ALLOW_ALL=true")
	return lc, func(prompt string) string {
		return a.run(env, copilot, "-p", prompt, "--allow-all-tools", "--no-auto-update")
	}
}

// TestRealCopilotCLI: after `agentd setup copilot`, `copilot -p` calls
// TodoList and CreateGoal through agentd mcp (the project's
// .github/mcp.json); the hooks continue it toward the goal it created, and
// the model completes it. An editor's LSP client sees both live.
func TestRealCopilotCLI(t *testing.T) {
	a := newAgentEnv(t)
	model := newChatModel(t, "agentd-", []chatReply{
		{calls: []chatCall{{"TodoList", scriptTodos}}, tokens: 20},
		{calls: []chatCall{{"CreateGoal", scriptGoal}}, tokens: 20},
		{text: "All set: the plan is in the todo list and the goal is recorded.", tokens: 12},
		{calls: []chatCall{{"UpdateGoal", map[string]any{"status": "complete"}}}, tokens: 9},
		{text: "All set: the goal is complete.", tokens: 12},
	})
	lc, copilot := copilotRun(t, a, model, false)
	if out := copilot("Plan the parser work and set the goal."); !strings.Contains(out, "All set: the goal is complete.") {
		t.Errorf("copilot -p output:\n%s", out)
	}
	a.checkOutcome(lc)
	if calls := model.calls(); len(calls) != 5 || !strings.Contains(calls[2], "[done] read the code") || !strings.Contains(calls[2], "ship the parser") {
		t.Errorf("%d model calls, want 5, the third carrying the outputs of TodoList and CreateGoal", len(calls))
	}
}

// TestRealCopilotCLISameWords: a user goal with a 3-turn budget and a model
// that answers "Done." every time: the agentStop hook continues Copilot CLI
// twice, each continuation a turn of its own, the budget blocks the goal
// after turn 3 with every output token counted, and Copilot CLI stops.
func TestRealCopilotCLISameWords(t *testing.T) {
	a := newAgentEnv(t)
	model := newChatModel(t, "agentd-", chatSameWords())
	lc, copilot := copilotRun(t, a, model, false)
	userGoal(t, a)
	if out := copilot("Work on the goal."); !strings.Contains(out, "Done.") {
		t.Errorf("copilot -p output: %q", out)
	}
	calls := model.calls()
	if len(calls) != 3 {
		t.Fatalf("%d model calls, want 3", len(calls))
	}
	for i, c := range calls {
		if !strings.Contains(c, markGoal) {
			t.Errorf("call %d lacks the goal reminder", i+1)
		}
		if cont := strings.Contains(c, markContinuation); cont != (i > 0) {
			t.Errorf("call %d: continuation prompt present %v, want %v", i+1, cont, i > 0)
		}
	}
	checkBudgetOutcome(t, a, lc, 11+13+17)
}

// TestRealCopilotCLILikeReal: a model that repeats its parallel tool calls
// word for word and then answers "Done." every time, in a folder set up for
// both Claude Code and Copilot CLI (Copilot CLI runs both hook files): each
// event counts once, the goal gets exactly 3 turns with every output token
// of the 5 model calls, and is blocked, not paused.
func TestRealCopilotCLILikeReal(t *testing.T) {
	a := newAgentEnv(t)
	model := newChatModel(t, "agentd-", likeReal())
	lc, copilot := copilotRun(t, a, model, true)
	userGoal(t, a)
	copilot("Work on the goal.")
	if n := len(model.calls()); n != 5 {
		t.Fatalf("%d model calls, want 5", n)
	}
	checkBudgetOutcome(t, a, lc, likeRealTokens)
}

// TestRealCopilotCLIBlockCap: a goal with 20 turns left and a model that
// answers "Done." every time: Copilot CLI obeys 8 agentStop continuations
// in a row and then ends the turn, so one `copilot -p` run makes 9 model
// calls; agentd counts exactly those 9 turns with their tokens, counts no
// tenth that no call would fill, and pauses the goal naming the cap (not
// as if the user had interrupted it).
func TestRealCopilotCLIBlockCap(t *testing.T) {
	a := newAgentEnv(t)
	model := newChatModel(t, "agentd-", chatSameWords())
	lc, copilot := copilotRun(t, a, model, false)
	userGoalTurns(t, a, 20)
	copilot("Work on the goal.")
	if n := len(model.calls()); n != 9 {
		t.Fatalf("%d model calls, want 9", n)
	}
	checkCappedGoal(t, lc, 9, 11+13+17+19*6, "paused: GitHub Copilot CLI stopped after 8 continuations in a row")
}
