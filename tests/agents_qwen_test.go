package tests

// Real Qwen Code with agentd (docs/hooks.md, docs/mcp.md), offline, after
// `agentd setup qwen`: `qwen -p` on a scripted Chat Completions model.
// Skipped unless AGENTD_AGENTS is set (tests/agents/ci.sh).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// qwenRun sets Qwen Code up in a with agentd (setup qwen; a user settings
// file that picks the OpenAI auth and offers MCP tools to the model
// directly instead of behind its tool_search, and the folder trusted), an
// editor's client on the folder first, and returns the client and a func
// that runs `qwen -p` with every tool allowed and the flags in extra.
func qwenRun(t *testing.T, a *agentEnv, model *chatModel, extra ...string) (*client, func(prompt string) string) {
	qwen := agentBin(t, "qwen")
	lc := a.editorFirst()
	a.setup("qwen")
	if b, err := os.ReadFile(filepath.Join(a.ws, ".qwen", "settings.json")); err != nil || !strings.Contains(string(b), `"agentd-hook qwen"`) {
		t.Fatalf(".qwen/settings.json after agentd setup qwen: %v\n%s", err, b)
	}
	settings, _ := json.Marshal(map[string]any{"security": map[string]any{"auth": map[string]any{"selectedType": "openai"}},
		"tools": map[string]any{"toolSearch": map[string]any{"enabled": false}}})
	writeFile(t, filepath.Join(a.home, ".qwen", "settings.json"), settings)
	a.trustFolder(".qwen")
	env := a.environ("QWEN_CODE_SUPPRESS_YOLO_WARNING=1")
	return lc, func(prompt string) string {
		args := append([]string{"--openai-base-url", model.url + "/v1", "--openai-api-key", "dummy", "-m", "qwen3-coder-plus", "--yolo"}, extra...)
		return a.run(env, qwen, append(args, "-p", prompt)...)
	}
}

// TestRealQwenCode: after `agentd setup qwen`, `qwen -p` calls TodoList and
// CreateGoal through agentd mcp; the hooks continue it toward the goal it
// created, and the model completes it. Qwen Code's own goal tools are not
// in its tool registry (setup turned them off in the project; its --debug
// log lists the registry). An editor's LSP client sees both live.
func TestRealQwenCode(t *testing.T) {
	a := newAgentEnv(t)
	model := newChatModel(t, "mcp__agentd__", []chatReply{
		{calls: []chatCall{{"TodoList", scriptTodos}}, tokens: 20},
		{calls: []chatCall{{"CreateGoal", scriptGoal}}, tokens: 20},
		{text: "All set: the plan is in the todo list and the goal is recorded.", tokens: 12},
		{calls: []chatCall{{"UpdateGoal", map[string]any{"status": "complete"}}}, tokens: 9},
		{text: "All set: the goal is complete.", tokens: 12},
	})
	lc, qwen := qwenRun(t, a, model, "--debug")
	if out := qwen("Plan the parser work and set the goal."); !strings.Contains(out, "All set: the goal is complete.") {
		t.Errorf("qwen -p output:\n%s", out)
	}
	a.checkOutcome(lc)
	calls := model.calls()
	if len(calls) != 5 || !strings.Contains(calls[2], "[done] read the code") || !strings.Contains(calls[2], "ship the parser") {
		t.Fatalf("%d model calls, want 5, the third carrying the outputs of TodoList and CreateGoal", len(calls))
	}
	logs, _ := filepath.Glob(filepath.Join(a.home, ".qwen", "debug", "*.txt"))
	registries := 0
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		for _, line := range strings.Split(string(b), "\n") {
			if !strings.Contains(line, "ToolRegistry created:") {
				continue
			}
			registries++
			if strings.Contains(line, `"get_goal"`) || strings.Contains(line, `"update_goal"`) || strings.Contains(line, `"propose_goal"`) {
				t.Errorf("Qwen Code registered its own goal tools beside agentd's: %s", line)
			}
		}
	}
	if registries == 0 {
		t.Errorf("no tool registry in Qwen Code's debug logs %v", logs)
	}
}

// TestRealQwenCodeSameWords: a user goal with a 3-turn budget and a model
// that answers "Done." every time: the Stop hook continues Qwen Code twice,
// the budget blocks the goal after turn 3 with every output token counted,
// and Qwen Code stops.
func TestRealQwenCodeSameWords(t *testing.T) {
	a := newAgentEnv(t)
	model := newChatModel(t, "mcp__agentd__", chatSameWords())
	lc, qwen := qwenRun(t, a, model)
	userGoal(t, a)
	if out := qwen("Work on the goal."); !strings.Contains(out, "Done.") {
		t.Errorf("qwen -p output: %q", out)
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

// TestRealQwenCodeLikeReal: a model that repeats its parallel tool calls
// word for word and then answers "Done." every time. Qwen Code sends a
// UserPromptSubmit with an empty prompt each time it gives tool results
// back to the model: that is a step of the same turn, not the user
// interrupting it, so the goal gets exactly 3 turns with every output token
// of the 5 model calls, and is blocked, not paused.
func TestRealQwenCodeLikeReal(t *testing.T) {
	a := newAgentEnv(t)
	model := newChatModel(t, "mcp__agentd__", likeReal())
	lc, qwen := qwenRun(t, a, model)
	userGoal(t, a)
	qwen("Work on the goal.")
	if n := len(model.calls()); n != 5 {
		t.Fatalf("%d model calls, want 5", n)
	}
	checkBudgetOutcome(t, a, lc, likeRealTokens)
}

// TestRealQwenCodeBlockCap: a goal with 20 turns left and a model that
// answers "Done." every time: Qwen Code overrides its 8th Stop block in a
// row (stopHookBlockingCap), so one `qwen -p` run makes 8 model calls;
// agentd counts exactly those 8 turns with their tokens, counts no ninth,
// and pauses the goal naming the cap.
func TestRealQwenCodeBlockCap(t *testing.T) {
	a := newAgentEnv(t)
	model := newChatModel(t, "mcp__agentd__", chatSameWords())
	lc, qwen := qwenRun(t, a, model)
	userGoalTurns(t, a, 20)
	qwen("Work on the goal.")
	if n := len(model.calls()); n != 8 {
		t.Fatalf("%d model calls, want 8", n)
	}
	checkCappedGoal(t, lc, 8, 11+13+17+19*5, "paused: Qwen Code stopped after 7 continuations in a row: its stopHookBlockingCap (8)")
}
