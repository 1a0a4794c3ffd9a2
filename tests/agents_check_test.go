package tests

// Real Claude Code and Gemini CLI on a goal with a check and a queued goal
// (docs/runtime.md §2.9, §2.10), offline, after `agentd setup`: the model's
// first UpdateGoal complete is refused by the check, the agent's own write
// tool makes the check pass, the second complete completes the goal and the
// queue's next goal becomes active, which the hooks continue the agent
// toward; and a check that outlasts the agent's MCP tool timeout. Skipped
// unless AGENTD_AGENTS is set (tests/agents/ci.sh).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The user's goals: the first one's check fails until done.txt exists.
const (
	checkObjective = "Ship the parser"
	checkCommand   = "ls done.txt"
	nextObjective  = "Document the parser"
)

// Marks of agentd's texts in the tool results the model gets.
const (
	markCheckFailed = "Goal not complete: its check `ls done.txt` exited 2"
	markCheckTail   = "No such file or directory"
	markCheckPassed = "Check passed: `ls done.txt` exited 0"
	markAdvance     = "The next goal of the queue is now active"
)

// checkGoals creates the user's goal with its check and queues the next.
func checkGoals(t *testing.T, a *agentEnv) {
	for _, args := range [][]string{{"goal", "create", checkObjective, "--check", checkCommand}, {"goal", "queue", "add", nextObjective}} {
		if out, errOut, code := a.cli(append(args, "--workspace", a.ws)...); code != 0 {
			t.Fatalf("agentd %v: %s%s", args, out, errOut)
		}
	}
}

// checkScript is the model's part, with the agent's tool names: complete
// (refused by the check), write done.txt, complete (the check passes, the
// next goal becomes active), a closing text; then, continued toward the
// next goal, GetGoal, complete, a closing text.
func checkScript(update, get, write string, writeInput map[string]any) []reply {
	complete := map[string]any{"status": "complete"}
	return []reply{
		{tool: update, input: complete, tokens: 7},
		{tool: write, input: writeInput, tokens: 9},
		{tool: update, input: complete, tokens: 7},
		{text: "The parser is shipped.", tokens: 5},
		{tool: get, input: map[string]any{}, tokens: 3},
		{tool: update, input: complete, tokens: 7},
		{text: "The parser is documented.", tokens: 5},
	}
}

// checkModelSaw checks what the agent sent the model after each call of
// checkScript, as seen: the text of the tool result (or, after a closing
// text, the continuation) in the request that followed call i+1.
func checkModelSaw(t *testing.T, seen func(call int) string, calls int) {
	if calls != 7 {
		t.Fatalf("%d model calls, want 7", calls)
	}
	for _, w := range []struct {
		call int
		want []string
	}{
		{1, []string{markCheckFailed, "Keep working", markCheckTail}},
		{3, []string{markCheckPassed, markAdvance, nextObjective}},
		{4, []string{markContinuation, nextObjective}},
		{5, []string{nextObjective, `"status": "active"`}},
	} {
		got := seen(w.call)
		for _, s := range w.want {
			if !strings.Contains(got, s) {
				t.Errorf("what the model got after call %d lacks %q:\n%s", w.call, s, got)
			}
		}
	}
	if got := seen(3); strings.Contains(got, markCheckFailed) {
		t.Errorf("after the second complete the model got a failed check again:\n%s", got)
	}
}

// goalChanges is the payload of a goal history event: its changes, with
// their goals.
type goalChanges []struct {
	Kind string
	Goal *struct {
		Objective, Status string
		Check             *checkSnap
	}
}

// checkQueueOutcome checks the folder after the agent: the file the agent
// wrote, both goals complete in order (the state holds the second with the
// queue empty), the check's failed and passed runs in the history, the
// advance by the runtime, and the editor saw the advance live.
func checkQueueOutcome(t *testing.T, a *agentEnv, lc *client) {
	if _, err := os.Stat(filepath.Join(a.ws, "done.txt")); err != nil {
		t.Errorf("the agent's write tool left no done.txt: %v", err)
	}
	out, errOut, code := a.cli("state", "--json", "--workspace", a.ws)
	var st struct {
		Goal  *goalSnap `json:"goal"`
		Queue struct {
			Items []json.RawMessage `json:"items"`
		} `json:"queue"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Goal == nil {
		t.Fatalf("agentd state --json: %d %s %s", code, out, errOut)
	}
	if st.Goal.Objective != nextObjective || st.Goal.Status != "complete" || st.Goal.LastActor != "model" || len(st.Queue.Items) != 0 {
		t.Errorf("state after the agent: goal %+v, %d queued; want %q complete by the model, none queued", st.Goal, len(st.Queue.Items), nextObjective)
	}
	if adv := lc.awaitGoal("advance"); adv.Change.Actor != "runtime" || adv.Goal == nil || adv.Goal.Objective != nextObjective || adv.Goal.Status != "active" {
		t.Errorf("the editor's goalChanged advance = %+v", adv)
	}

	var hist struct{ Events []historyEvent }
	lc.MustExec("agentd.history", map[string]any{"limit": 50}, &hist)
	var failed, advanced, nextDone bool
	for _, ev := range hist.Events {
		var changes goalChanges
		json.Unmarshal(ev.Payload, &changes)
		for _, ch := range changes {
			g := ch.Goal
			if g == nil {
				continue
			}
			switch {
			case ev.Kind == "goal.check" && g.Objective == checkObjective && g.Check != nil && g.Check.LastRun != nil && !g.Check.Running:
				r := g.Check.LastRun
				failed = failed || r.ExitCode == 2 && strings.Contains(r.OutputTail, markCheckTail)
			case ev.Kind == "goal.advance" && ch.Kind == "complete":
				r := g.Check.LastRun
				advanced = ev.Actor == "runtime" && g.Objective == checkObjective && g.Status == "complete" &&
					g.Check.Command == checkCommand && r != nil && r.ExitCode == 0 && r.OutputTail == "done.txt\n"
			case ev.Kind == "goal.complete" && g.Objective == nextObjective:
				nextDone = ev.Actor == "model"
			}
		}
	}
	if !failed || !advanced || !nextDone {
		t.Errorf("history: failed run recorded %v, advance after the passed run %v, next goal completed by the model %v:\n%+v", failed, advanced, nextDone, hist.Events)
	}
}

// TestRealClaudeCodeGoalCheck: Claude Code's UpdateGoal complete is refused
// by the goal's check with its output; Claude Code's own Write tool creates
// done.txt; the next complete passes the check and the queued goal becomes
// active; the Stop hook continues Claude Code toward it, and the model
// completes it too.
func TestRealClaudeCodeGoalCheck(t *testing.T) {
	a := newAgentEnv(t)
	model := newScriptedModel(t, checkScript("mcp__agentd__UpdateGoal", "mcp__agentd__GetGoal", "Write",
		map[string]any{"file_path": filepath.Join(a.ws, "done.txt"), "content": "done\n"}))
	lc, claude := claudeRun(t, a, model, []string{"Write"})
	checkGoals(t, a)
	if out := claude("Work on the goal."); !strings.Contains(out, "The parser is documented.") {
		t.Errorf("claude -p output: %q, want the last turn's answer", out)
	}
	calls := model.calls()
	checkModelSaw(t, func(call int) string {
		if call >= len(calls) {
			return ""
		}
		return lastMessageText(calls[call])
	}, len(calls))
	// The refusal reached the model as an error result.
	if len(calls) > 1 && !strings.Contains(lastMessage(calls[1]), `"is_error":true`) {
		t.Errorf("the refused complete's tool_result is not an error: %s", lastMessage(calls[1]))
	}
	checkQueueOutcome(t, a, lc)
}

// lastMessageText is the text of the last message of a Messages API
// request body: its text blocks and the text of its tool results.
func lastMessageText(body string) string {
	var blocks []struct {
		Type    string          `json:"type"`
		Text    string          `json:"text"`
		Content json.RawMessage `json:"content"`
	}
	raw := lastMessage(body)
	if json.Unmarshal([]byte(raw), &blocks) != nil {
		var s string
		json.Unmarshal([]byte(raw), &s)
		return s
	}
	var b strings.Builder
	for _, bl := range blocks {
		b.WriteString(bl.Text)
		var s string
		var parts []struct{ Text string }
		if json.Unmarshal(bl.Content, &s) == nil {
			b.WriteString(s)
		} else if json.Unmarshal(bl.Content, &parts) == nil {
			for _, p := range parts {
				b.WriteString(p.Text)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestRealGeminiCLIGoalCheck: as TestRealClaudeCodeGoalCheck, with Gemini
// CLI's write_file tool and AfterAgent's continuation.
func TestRealGeminiCLIGoalCheck(t *testing.T) {
	a := newAgentEnv(t)
	lc, gemini := geminiRun(t, a, checkScript("mcp_agentd_UpdateGoal", "mcp_agentd_GetGoal", "write_file",
		map[string]any{"file_path": filepath.Join(a.ws, "done.txt"), "content": "done\n"}))
	afterTool := geminiLogHook(t, a, "AfterTool")
	checkGoals(t, a)
	out, calls := gemini("Work on the goal.")
	if !strings.Contains(out, "The parser is documented.") {
		t.Errorf("gemini -p output: %q, want the last turn's answer", out)
	}
	// BeforeModel's request holds only the conversation's text: a tool's
	// result reaches the model as the llmContent AfterTool reports.
	results := geminiToolResults(t, afterTool)
	if len(results) != 5 || !results[0].refused || results[2].refused {
		t.Errorf("tool results %+v: want 5, the first refused, the third not", results)
	}
	checkModelSaw(t, func(call int) string {
		var b strings.Builder
		if call < len(calls) && len(calls[call-1]) <= len(calls[call]) {
			for _, m := range calls[call][len(calls[call-1]):] {
				b.WriteString(m.Role + ": " + m.Content + "\n")
			}
		}
		// Calls 1, 2, 3, 5 and 6 of checkScript are tool calls.
		if i, ok := map[int]int{1: 0, 2: 1, 3: 2, 5: 3, 6: 4}[call]; ok && i < len(results) {
			b.WriteString(results[i].content)
		}
		return b.String()
	}, len(calls))
	checkQueueOutcome(t, a, lc)
}

type geminiToolResult struct {
	content string
	refused bool
}

// geminiToolResults reads the AfterTool log of geminiLogHook: each tool's
// llmContent (a string, or text parts) and whether it was an error.
func geminiToolResults(t *testing.T, log string) []geminiToolResult {
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var out []geminiToolResult
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ev struct {
			ToolResponse struct {
				LLMContent json.RawMessage `json:"llmContent"`
				Error      json.RawMessage `json:"error"`
			} `json:"tool_response"`
		}
		if json.Unmarshal([]byte(l), &ev) != nil {
			continue
		}
		r := geminiToolResult{refused: len(ev.ToolResponse.Error) > 0 && string(ev.ToolResponse.Error) != "null"}
		var parts []struct{ Text string }
		if json.Unmarshal(ev.ToolResponse.LLMContent, &r.content) != nil && json.Unmarshal(ev.ToolResponse.LLMContent, &parts) == nil {
			for _, p := range parts {
				r.content += p.Text
			}
		}
		out = append(out, r)
	}
	return out
}

// The agent's MCP tool timeout in the time-out tests, shorter than the
// check they run.
const agentToolTimeoutMs = 3000

// timeoutScript: UpdateGoal complete, which outlasts the agent's tool
// timeout, then a closing text in each of the goal's two turns.
func timeoutScript(update string) []reply {
	return []reply{
		{tool: update, input: map[string]any{"status": "complete"}, tokens: 7},
		{text: "The check did not answer in time.", tokens: 5},
		{text: "Turn two done.", tokens: 5},
	}
}

// timeoutGoal creates the user's goal with a 2-turn budget and a check
// that outlasts the agent's tool timeout: its shell and a child write
// their pids to the returned folder and sleep.
func timeoutGoal(t *testing.T, a *agentEnv) string {
	dir := t.TempDir()
	for _, args := range [][]string{{"goal", "create", checkObjective, "--check", sleeperCheck(dir)}, {"goal", "budget", "2", "turns"}} {
		if out, errOut, code := a.cli(append(args, "--workspace", a.ws)...); code != 0 {
			t.Fatalf("agentd %v: %s%s", args, out, errOut)
		}
	}
	return dir
}

// checkTimeoutOutcome: when the agent gave up on UpdateGoal complete, its
// MCP cancel killed the check with its whole process group; the run is
// recorded (exit -1, the cancelled request) and the editor told; the goal
// was never completed: it ran its two turns and its budget blocked it.
func checkTimeoutOutcome(t *testing.T, a *agentEnv, lc *client, dir string) {
	awaitGone(t, "after the agent's tool timeout", readPid(t, filepath.Join(dir, "shell.pid")), readPid(t, filepath.Join(dir, "child.pid")))
	chk := lc.awaitCheck(false)
	if chk.LastRun == nil || chk.LastRun.ExitCode != -1 || !strings.HasSuffix(chk.LastRun.OutputTail, "sleeping\nagentd: the check was killed: the request that ran it was cancelled\n") {
		t.Errorf("the editor's check after the run = %+v", chk)
	}
	if g := lc.goal(); g.Status != "blocked" || g.TurnsUsed != 2 || g.TerminalReason != "budget reached: turn budget of 2 turns" {
		t.Errorf("goal after the agent: %+v, want blocked by its budget after 2 turns", g)
	}
}

// TestRealClaudeCodeCheckOutlastsToolTimeout: with MCP_TOOL_TIMEOUT at
// 3 s, Claude Code gives up on an UpdateGoal complete whose check sleeps:
// the model gets a time-out error, agentd kills the check (no process
// left), records the run and leaves the goal active for its next turn.
func TestRealClaudeCodeCheckOutlastsToolTimeout(t *testing.T) {
	a := newAgentEnv(t)
	model := newScriptedModel(t, timeoutScript("mcp__agentd__UpdateGoal"))
	lc, claude := claudeRun(t, a, model, nil, fmt.Sprintf("MCP_TOOL_TIMEOUT=%d", agentToolTimeoutMs))
	dir := timeoutGoal(t, a)
	if out := claude("Work on the goal."); !strings.Contains(out, "Turn two done.") {
		t.Errorf("claude -p output: %q, want the last turn's answer", out)
	}
	calls := model.calls()
	if len(calls) != 3 {
		t.Fatalf("%d model calls, want 3", len(calls))
	}
	if got := lastMessage(calls[1]); !strings.Contains(got, `"is_error":true`) || !strings.Contains(got, "timed out") {
		t.Errorf("what the model got for the complete that timed out: %s", got)
	}
	checkTimeoutOutcome(t, a, lc, dir)
}

// TestRealGeminiCLICheckOutlastsToolTimeout: as
// TestRealClaudeCodeCheckOutlastsToolTimeout, with the `timeout` of
// agentd's entry in Gemini CLI's settings at 3 s.
func TestRealGeminiCLICheckOutlastsToolTimeout(t *testing.T) {
	a := newAgentEnv(t)
	lc, gemini := geminiRun(t, a, timeoutScript("mcp_agentd_UpdateGoal"))
	settingsPath := filepath.Join(a.ws, ".gemini", "settings.json")
	var settings struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	var all map[string]any
	b, err := os.ReadFile(settingsPath)
	if err != nil || json.Unmarshal(b, &all) != nil || json.Unmarshal(b, &settings) != nil || settings.MCPServers["agentd"] == nil {
		t.Fatalf("%s: %v %s", settingsPath, err, b)
	}
	settings.MCPServers["agentd"]["timeout"] = agentToolTimeoutMs
	all["mcpServers"] = settings.MCPServers
	b, _ = json.Marshal(all)
	if err := os.WriteFile(settingsPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	afterTool := geminiLogHook(t, a, "AfterTool")
	dir := timeoutGoal(t, a)
	if out, calls := gemini("Work on the goal."); !strings.Contains(out, "Turn two done.") || len(calls) != 3 {
		t.Errorf("gemini -p: %d model calls, output %q; want 3 and the last turn's answer", len(calls), out)
	}
	if res := geminiToolResults(t, afterTool); len(res) != 1 || !res[0].refused || !strings.Contains(res[0].content, "timed out") {
		t.Errorf("what the model got for the complete that timed out: %+v", res)
	}
	checkTimeoutOutcome(t, a, lc, dir)
}
