package tests

// Real Claude Code and Gemini CLI, offline, run past their own loop limits
// (docs/hooks.md, "The agents' own limits") by a scripted model that
// behaves like a real one: it calls tools in parallel, writes the todo list
// once and then ignores it, and ends every turn with the same words. A goal
// turn is counted only when the model was called, and the goal pauses with
// a reason that names the limit. Skipped unless AGENTD_AGENTS is set
// (tests/agents/ci.sh).

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pastTheCaps is a model that asks for two tools at once at its first
// call (the list and the goal), never writes the list again, and then
// answers "Done." to everything, far past any agent's cap.
func pastTheCaps(prefix string) []reply {
	script := []reply{{tool: prefix + "TodoList", input: map[string]any{"todos": []item{{"Write the parser", "in_progress"}}}, tokens: 6,
		also: []reply{{tool: prefix + "GetGoal", input: map[string]any{}}}}}
	for range 40 {
		script = append(script, reply{text: "Done.", tokens: 7})
	}
	return script
}

// bigGoal is the person's goal with a budget far above the agents' caps:
// the cap, not the budget, ends the run.
func bigGoal(t *testing.T, a *agentEnv) { personGoal(t, a, "200", "turns") }

// goalNow is the goal's counts as the daemon has them.
func goalNow(t *testing.T, lc *client) goalCounts {
	var st struct {
		Goal *goalCounts `json:"goal"`
	}
	lc.MustExec("agentd.state", map[string]any{}, &st)
	if st.Goal == nil {
		t.Fatal("no goal after the agent")
	}
	return *st.Goal
}

// TestRealClaudeCodeBlockCap: Claude Code obeys a Stop hook's block at
// most CLAUDE_CODE_STOP_HOOK_BLOCK_CAP times in a row and then ends the
// run itself. `agentd setup claude` raises the cap to 100 in the
// settings' env; the person sets 3 there, and agentd continues Claude Code
// 3 times and no more (the hook reads the cap Claude Code passes it): the
// goal's turns are the turns the model was called in (4, for 5 calls: the
// first turn made two, the tools and its answer), and the goal pauses
// with a reason naming the cap, not "the user interrupted the turn".
func TestRealClaudeCodeBlockCap(t *testing.T) {
	a := newAgentEnv(t)
	model := newScriptedModel(t, pastTheCaps("mcp__agentd__"))
	lc, claude := claudeRun(t, a, model, nil)
	settings := filepath.Join(a.ws, ".claude", "settings.json")
	b, err := os.ReadFile(settings)
	if err != nil || !strings.Contains(string(b), `"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "100"`) {
		t.Fatalf("%s after agentd setup claude: %v\n%s\nwant the cap raised to 100", settings, err, b)
	}
	if err := os.WriteFile(settings, []byte(strings.Replace(string(b), `"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "100"`, `"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "3"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	bigGoal(t, a)
	claude("Work on the goal.")
	calls := model.calls()
	g := goalNow(t, lc)
	if len(calls) != 2+3 {
		t.Fatalf("%d model calls, want 5: the first turn's two and 3 continuations", len(calls))
	}
	if n := strings.Count(calls[1], `"tool_result"`); n != 2 {
		t.Errorf("the second call carries %d tool results, want the two parallel calls'", n)
	}
	if g.TurnsUsed != int64(len(calls)-1) || g.TokensUsed != 6+7*int64(len(calls)-1) {
		t.Errorf("goal at %d turns and %d tokens for %d model calls, want %d turns", g.TurnsUsed, g.TokensUsed, len(calls), len(calls)-1)
	}
	if want := "paused: Claude Code stopped after 3 continuations in a row without a tool call: its CLAUDE_CODE_STOP_HOOK_BLOCK_CAP (3)"; g.Status != "paused" || !strings.HasPrefix(g.TerminalReason, want) {
		t.Errorf("goal %+v, want paused with a reason %q…", g, want)
	}
	if gc := lc.awaitGoal("pause"); gc.Change.Actor != "runtime" {
		t.Errorf("the editor's pause notice: %+v", gc)
	}
}

// TestRealGeminiCLIStopsCallingTheModel: Gemini CLI's loop detection finds
// the model repeating "Done.", warns it once (one more model call in the
// same turn), and at the second finding calls the model no more for that
// prompt, while it still runs its hooks for each continuation (issue 26:
// 909 turns counted for 28 model calls). agentd notices the first turn
// with no model call: it counts it not, continues no more, and pauses the
// goal with a reason naming the loop detection.
func TestRealGeminiCLIStopsCallingTheModel(t *testing.T) {
	a := newAgentEnv(t)
	lc, gemini := geminiRun(t, a, pastTheCaps("mcp_agentd_"))
	bigGoal(t, a)
	out, calls := gemini("Work on the goal.")
	g := goalNow(t, lc)
	warned := 0
	for _, msgs := range calls {
		if strings.HasPrefix(lastUser(msgs), "System: Potential loop detected.") {
			warned++
		}
	}
	if warned != 1 || len(calls) < 10 {
		t.Fatalf("%d model calls, %d with Gemini CLI's loop warning; want one warning", len(calls), warned)
	}
	// Two turns made two calls each: the first (the tools, then its
	// answer) and the one Gemini CLI's loop warning came in. The two
	// answers its loop detection flagged are not in its transcript, so
	// their 7 tokens each are not counted (docs/hooks.md, "Limits").
	if g.TurnsUsed != int64(len(calls)-2) || g.TokensUsed != 6+7*int64(len(calls)-1-2) {
		t.Errorf("goal at %d turns and %d tokens for %d model calls, want %d turns", g.TurnsUsed, g.TokensUsed, len(calls), len(calls)-2)
	}
	if g.Status != "paused" || !strings.Contains(g.TerminalReason, "Gemini CLI stopped calling the model: its loop detection") {
		t.Errorf("goal %+v, want paused with a reason naming Gemini CLI's loop detection", g)
	}
	if n := lc.awaitTodo(a.ws, "Write the parser"); n.Actor != "model" {
		t.Errorf("the list the model wrote in its parallel call: %+v", n)
	}
	// The model ignored its list: agentd's stale reminder reached it.
	stale := 0
	for _, msgs := range calls {
		if strings.Contains(lastUser(msgs), markStale) {
			stale++
		}
	}
	if stale == 0 {
		t.Errorf("no call of %d got the stale todo reminder", len(calls))
	}
	if !strings.Contains(out, "agentd paused the goal: Gemini CLI stopped calling the model") {
		t.Errorf("gemini -p output lacks agentd's stop line:\n%s", out)
	}
}
