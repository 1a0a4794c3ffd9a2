package tests

// What people and models see in real agents (issue 26, item 6): the goal
// prompt's words in Claude Code, agentd's context as each agent wraps it,
// continuations not printed whole, and a short line when a budget stops
// the agent. Skipped unless AGENTD_AGENTS is set (tests/agents/ci.sh).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
	out := claude("/mcp__agentd__goal Ship the docs -- make docs passes")
	if g := lc.goal(); g == nil {
		t.Fatalf("no goal after the goal prompt; claude -p said %q, and the model got %d calls", out, len(model.calls()))
	}
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
	t.Parallel()
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

// markQuoted is how the goal reminder and the continuation show the
// objective of userGoal to the model in every agent (docs/hooks.md,
// "What the model reads, what the user sees").
const markQuoted = "is user data:\n| Ship the parser\n"

// modelTexts is every string in a model request body (JSON), decoded and
// joined with newlines: what the model reads, whatever the API's shape.
func modelTexts(body string) string {
	var v any
	if json.Unmarshal([]byte(body), &v) != nil {
		return ""
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return strings.Join(out, "\n")
}

// checkClean: no text the model read holds an escaped tag, and every call
// after the first carries the objective quoted; the reminder reached all.
func checkClean(t *testing.T, agent string, texts []string) {
	t.Helper()
	if len(texts) != 3 {
		t.Fatalf("%s: %d model calls, want 3", agent, len(texts))
	}
	for i, s := range texts {
		for _, bad := range []string{"&lt;", "&gt;", "<untrusted_", "\\u003cuntrusted_"} {
			if strings.Contains(s, bad) {
				at := strings.Index(s, bad)
				t.Errorf("%s call %d: the model reads %q: …%s…", agent, i+1, bad, s[max(0, at-200):min(len(s), at+100)])
			}
		}
		if !strings.Contains(s, markGoal) || !strings.Contains(s, markQuoted) {
			t.Errorf("%s call %d: the goal reminder with the quoted objective is missing", agent, i+1)
		}
	}
}

// TestRealClaudeCodeWhatIsSeen: in `claude -p` under a 3-turn goal, the
// model reads agentd's reminder and continuations with no escaped tag
// (Claude Code wraps hook output in its own <system-reminder> and escapes
// that tag inside), the objective quoted; the Stop that ends turn 3 stops
// Claude Code with agentd's reason, which Claude Code records for the
// user (`claude -p` prints no hook message: docs/hooks.md).
func TestRealClaudeCodeWhatIsSeen(t *testing.T) {
	a := newAgentEnv(t)
	model := newScriptedModel(t, []reply{{text: "Turn one done.", tokens: 11}, {text: "Turn two done.", tokens: 13}, {text: "Turn three done.", tokens: 17}})
	lc, claude := claudeRun(t, a, model, nil)
	userGoal(t, a)
	claude("Work on the goal.")
	var texts []string
	for _, c := range model.calls() {
		texts = append(texts, modelTexts(c))
	}
	checkClean(t, "Claude Code", texts)
	checkBudgetOutcome(t, a, lc, 11+13+17)
	transcripts, _ := filepath.Glob(filepath.Join(a.home, ".claude", "projects", "*", "*.jsonl"))
	found := false
	for _, f := range transcripts {
		b, _ := os.ReadFile(f)
		found = found || strings.Contains(string(b), "agentd stopped the agent: budget reached: turn budget of 3 turns")
	}
	if !found {
		t.Errorf("no transcript of %v records agentd's stop reason", transcripts)
	}
}

// TestRealGeminiCLIWhatIsSeen: as TestRealClaudeCodeWhatIsSeen in `gemini
// -p` (which wraps BeforeAgent's context in <hook_context> and escapes
// every tag inside); the user sees one line per continuation, not its
// prompt, and a last line saying that the budget stopped the agent.
func TestRealGeminiCLIWhatIsSeen(t *testing.T) {
	a := newAgentEnv(t)
	lc, gemini := geminiRun(t, a, []reply{{text: "Turn one done.", tokens: 11}, {text: "Turn two done.", tokens: 13}, {text: "Turn three done.", tokens: 17}})
	userGoal(t, a)
	out, calls := gemini("Work on the goal.")
	var texts []string
	for _, msgs := range calls {
		b, _ := json.Marshal(msgs)
		texts = append(texts, modelTexts(string(b)))
	}
	checkClean(t, "Gemini CLI", texts)
	checkBudgetOutcome(t, a, lc, 11+13+17)
	if strings.Contains(out, markContinuation) || strings.Count(out, "agentd continues the goal in a new turn") < 2 {
		t.Errorf("gemini -p shows the user the continuation prompt, or not one line per continuation:\n%s", out)
	}
	if !strings.Contains(out, "agentd stopped the agent: budget reached: turn budget of 3 turns") {
		t.Errorf("gemini -p does not say why it stopped:\n%s", out)
	}
}

// TestRealCodexWhatIsSeen: as TestRealClaudeCodeWhatIsSeen in `codex
// exec` (which gives additionalContext as it is and wraps a Stop's reason
// in <hook_prompt>, escaping every tag inside); the Stop after turn 3
// stops it.
func TestRealCodexWhatIsSeen(t *testing.T) {
	a := newAgentEnv(t)
	model := newResponsesModel(t, []reply{{text: "Turn one done.", tokens: 11}, {text: "Turn two done.", tokens: 13}, {text: "Turn three done.", tokens: 17}})
	lc, codex := codexRun(t, a, model)
	userGoal(t, a)
	out := codex("Work on the goal.")
	var texts []string
	for _, b := range model.calls() {
		texts = append(texts, modelTexts(b))
	}
	checkClean(t, "Codex", texts)
	checkBudgetOutcome(t, a, lc, 11+13+17)
	// codex exec prints neither stopReason nor systemMessage, only that
	// the Stop hook stopped it (docs/hooks.md, "What the model reads,
	// what the user sees").
	if !strings.Contains(out, "hook: Stop Stopped") {
		t.Errorf("codex exec does not say that the hook stopped it:\n%s", out)
	}
}

// TestHookBudgetStopToldOnce: the Stop of a goal turn whose end blocks
// the goal at its budget stops the agent with the reason; a later turn,
// begun with the goal already blocked, is not told again.
func TestHookBudgetStopToldOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, args := range [][]string{{"goal", "create", "Ship the parser"}, {"goal", "budget", "1", "turns"}} {
		if out, errOut, code := e.cli(append(args, "--workspace", e.ws)...); code != 0 {
			t.Fatalf("agentd %v: %s%s", args, out, errOut)
		}
	}
	ev := func(name, extra string) string {
		out, _ := e.hook("gemini", `{"session_id":"s1","cwd":"`+jsonText(e.ws)+`","hook_event_name":"`+name+`"`+extra+`}`, "--workspace", e.ws)
		return strings.TrimSpace(out)
	}
	ev("BeforeAgent", `,"timestamp":"2026-12-01T09:00:00.000Z","prompt":"go"`)
	ev("BeforeModel", `,"timestamp":"2026-12-01T09:00:01.000Z","llm_request":{"messages":[{"role":"user","content":"go"}]}`)
	want := `{"continue":false,"stopReason":"agentd stopped the agent: budget reached: turn budget of 1 turn"}`
	if out := ev("AfterAgent", `,"timestamp":"2026-12-01T09:00:02.000Z"`); out != want {
		t.Errorf("the Stop that blocks the goal: %s, want %s", out, want)
	}
	ev("BeforeAgent", `,"timestamp":"2026-12-01T09:01:00.000Z","prompt":"what now?"`)
	ev("BeforeModel", `,"timestamp":"2026-12-01T09:01:01.000Z","llm_request":{"messages":[{"role":"user","content":"what now?"}]}`)
	if out := ev("AfterAgent", `,"timestamp":"2026-12-01T09:01:02.000Z"`); out != "" {
		t.Errorf("the Stop of a turn begun with the goal blocked: %s, want nothing", out)
	}
}

// TestRealGeminiCLIGoalPromptWords: the same goal prompt as
// TestRealClaudeCodeGoalPromptWords as Gemini CLI's `/goal` in `gemini
// -p`, which passes all the words as the one required argument.
func TestRealGeminiCLIGoalPromptWords(t *testing.T) {
	a := newAgentEnv(t)
	lc, gemini := geminiRun(t, a, []reply{{tool: "mcp_agentd_UpdateGoal", input: map[string]any{"status": "complete"}, tokens: 5}, {text: "The docs are shipped.", tokens: 3}})
	out, calls := gemini("/goal Ship the docs -- make docs passes")
	if g := lc.goal(); g == nil || g.Objective != "Ship the docs" || g.CompletionCriterion != "make docs passes" || g.LastActor != "model" {
		t.Errorf("the goal after /goal: %+v, want \"Ship the docs\" with criterion \"make docs passes\", completed by the model; gemini -p said %q", g, out)
	}
	if len(calls) == 0 {
		t.Fatal("no model call")
	}
	if b, _ := json.Marshal(calls[0]); !strings.Contains(modelTexts(string(b)), "I have set a goal for this workspace: Ship the docs") || !strings.Contains(modelTexts(string(b)), "It is done when: make docs passes") {
		t.Errorf("the model's first call lacks the whole goal: %s", b)
	}
}
