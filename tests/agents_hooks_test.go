package tests

// Real Claude Code and Gemini CLI with agentd's hooks (docs/hooks.md),
// offline, after `agentd setup`: a goal with a 3-turn budget, the stale todo
// reminder at model call 12, and an agent that still answers when agentd is
// unreachable. Skipped unless AGENTD_AGENTS is set (tests/agents/ci.sh).

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// reply is one scripted model response: a tool call (tool set) or text,
// with its output tokens.
type reply struct {
	tool   string
	input  any
	text   string
	tokens int64
	// also are more tool calls in the same response, asked for in
	// parallel with tool (a real model's habit).
	also []reply
	// streamed: Gemini CLI gets the text word by word, a chunk each, and
	// then the tool call (geminiChunks); the other agents' models send the
	// reply whole.
	streamed bool
	// waitFor is a file the model waits for before it answers (while the
	// agent waits for the answer: awaitFile): a test's way to keep a model
	// call in flight until something the agent started has happened.
	waitFor string
	// arrived is a file the model (the Messages API) makes as the call
	// arrives, before it waits: what the agent started can wait for the
	// call to be in flight, its tools and their hooks done.
	arrived string
}

// pastTheScript is what a scripted model answers a main-loop call past
// its script: many tokens, so that a budget notices.
var pastTheScript = reply{text: "Past the script.", tokens: 1000}

// serveModel serves h on 127.0.0.1 until the test ends and returns its
// URL.
func serveModel(tb testing.TB, h http.HandlerFunc) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// modelScript is a scripted model's replies to the agent's main-loop
// calls, in order (past, past the end), and the bodies of the calls it
// answered.
type modelScript[R any] struct {
	script []R
	past   R

	mu       sync.Mutex
	requests []string
}

// next keeps body as the next main-loop call and returns the call's
// number, from 1, and its reply.
func (s *modelScript[R]) next(body []byte) (int, R) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, string(body))
	n := len(s.requests)
	if n <= len(s.script) {
		return n, s.script[n-1]
	}
	return n, s.past
}

// calls are the bodies of the main-loop calls so far, in order.
func (s *modelScript[R]) calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// scriptedModel is a Messages API on 127.0.0.1 that answers the agent's
// main-loop calls (those that offer agentd's tools) from a script, in order,
// and keeps each such request's body; other calls (titles and the like) get
// text.
type scriptedModel struct {
	url string
	modelScript[reply]
}

func newScriptedModel(t *testing.T, script []reply) *scriptedModel {
	m := &scriptedModel{modelScript: modelScript[reply]{script: script, past: pastTheScript}}
	m.url = serveModel(t, m.serve)
	return m
}

func (m *scriptedModel) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req anthropicRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	main := false
	for _, tl := range req.Tools {
		main = main || tl.Name == "mcp__agentd__TodoList"
	}
	rp := reply{text: "A title.", tokens: 3}
	if main {
		_, rp = m.next(body)
	}
	if rp.arrived != "" {
		os.WriteFile(rp.arrived, nil, 0o600)
	}
	awaitFile(r.Context(), rp.waitFor)
	writeMessages(w, fmt.Sprintf("%p_%d", m, len(m.calls())), rp)
}

// awaitFile waits until the file at path exists ("" is none) or ctx, the
// agent's model call, ends: the agent gave up on the call or was killed
// (agentLimit). Before, it gave up after 20 s and the model answered
// anyway, which a loaded machine reached (the background process that
// makes the file took longer) and the test then failed on what the early
// answer did.
func awaitFile(ctx context.Context, path string) {
	for path != "" {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// writeMessages answers a Messages API call with rp as server-sent
// events; id makes the message and tool ids.
func writeMessages(w http.ResponseWriter, id string, rp reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	ev := &sseWriter{w: bufio.NewWriter(w)}
	ev.send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_" + id, "type": "message", "role": "assistant", "model": "claude-scripted",
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}})
	stop := "end_turn"
	if rp.tool != "" {
		stop = "tool_use"
		for i, tc := range append([]reply{rp}, rp.also...) {
			in, _ := json.Marshal(tc.input)
			ev.send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%s_%d", id, i), "name": tc.tool, "input": map[string]any{}}})
			ev.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": string(in)}})
			ev.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		}
	} else {
		ev.send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		ev.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": rp.text}})
		ev.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	}
	ev.send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": rp.tokens}})
	ev.send("message_stop", map[string]any{"type": "message_stop"})
	ev.w.Flush()
}

// Marks of agentd's texts in what the model gets.
const (
	markGoal         = "You are working under an active goal."
	markContinuation = "Continue working toward the active goal."
	markStale        = "Your todo list has not been updated for a while."
	markWrapUp       = "The goal's budget is nearly spent (80 % or more used: turns: 3 used of 3"
)

// claudeEnv is what every Claude Code run here adds to the environment:
// the scripted model at url, no traffic of its own, agentd's tools offered
// directly (not behind ToolSearch: docs/mcp.md), and MCP servers connected
// before the first model call (by default `claude -p` connects them in
// the background, and on a busy machine the tools or the goal prompt may
// not be there yet).
func claudeEnv(url string) []string {
	return []string{"ANTHROPIC_BASE_URL=" + url, "ANTHROPIC_API_KEY=sk-dummy", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "ENABLE_TOOL_SEARCH=false", "MCP_CONNECTION_NONBLOCKING=false"}
}

// claudeRun sets Claude Code up in a with agentd (setup, the folder's trust
// and its project server accepted), an editor's client on the folder
// first, and returns the client and a func that runs `claude -p` with
// agentd's tools and the tools named in allowed (e.g. Write) allowed, and
// extraEnv (e.g. MCP_TOOL_TIMEOUT=3000) in its environment.
func claudeRun(t *testing.T, a *agentEnv, model *scriptedModel, allowed []string, extraEnv ...string) (*client, func(prompt string) string) {
	claude := agentBin(t, "claude")
	lc := a.editorFirst()
	a.setup("claude")
	a.trustClaude()
	env := a.environ(append(claudeEnv(model.url), extraEnv...)...)
	return lc, func(prompt string) string {
		return a.run(env, claude, "-p", prompt, "--allowedTools", strings.Join(append([]string{"mcp__agentd"}, allowed...), ","))
	}
}

// userGoal creates the user's goal with a 3-turn budget through the daemon.
func userGoal(t *testing.T, a *agentEnv) { personGoal(t, a, "3", "turns") }

// checkBudgetOutcome: the goal is blocked by its turn budget after exactly 3
// turns, with tokens the scripted output tokens, and the editor saw it.
func checkBudgetOutcome(t *testing.T, a *agentEnv, lc *client, tokens int64) {
	var st struct {
		Goal *goalCounts `json:"goal"`
	}
	lc.MustExec("agentd.state", map[string]any{}, &st)
	want := &goalCounts{Status: "blocked", TurnsUsed: 3, TokensUsed: tokens, TerminalReason: "budget reached: turn budget of 3 turns"}
	if st.Goal == nil || *st.Goal != *want {
		t.Errorf("goal after the agent: %+v, want %+v", st.Goal, want)
	}
	for turns := int64(1); turns <= 3; turns++ {
		lc.Await("agentd/goalChanged", func(p json.RawMessage) bool {
			var n struct {
				Goal *goalCounts `json:"goal"`
			}
			return json.Unmarshal(p, &n) == nil && n.Goal != nil && n.Goal.TurnsUsed == turns
		})
	}
	if gc := lc.awaitGoal("block"); gc.Change.Actor != "runtime" {
		t.Errorf("the editor's block notice: %+v", gc)
	}
}

// TestRealClaudeCodeTurnBudget: a user goal with a 3-turn budget; the first
// model call carries the goal reminder, the Stop hook continues Claude Code
// twice (each continuation with the next turn's reminder), the budget blocks
// the goal after turn 3 and Claude Code exits by itself.
func TestRealClaudeCodeTurnBudget(t *testing.T) {
	a := newAgentEnv(t)
	model := newScriptedModel(t, []reply{{text: "Turn one done.", tokens: 11}, {text: "Turn two done.", tokens: 13}, {text: "Turn three done.", tokens: 17}})
	lc, claude := claudeRun(t, a, model, nil)
	userGoal(t, a)
	out := claude("Work on the goal.")
	if !strings.Contains(out, "Turn three done.") {
		t.Errorf("claude -p output: %q, want the last turn's answer", out)
	}
	calls := model.calls()
	if len(calls) != 3 {
		t.Fatalf("%d model calls, want 3", len(calls))
	}
	for i, c := range calls {
		last := lastMessage(c)
		if !strings.Contains(last, markGoal) {
			t.Errorf("call %d: the last message lacks the goal reminder: %s", i+1, last)
		}
		if cont := strings.Contains(last, markContinuation); cont != (i > 0) {
			t.Errorf("call %d: continuation prompt present %v, want %v", i+1, cont, i > 0)
		}
		// Turn 3 of 3 reaches 80 % of the budget as it begins
		// (docs/runtime.md §2.4.4): its call gets the wrap-up note, once.
		if wrap := strings.Contains(last, markWrapUp); wrap != (i == 2) {
			t.Errorf("call %d: wrap-up note present %v, want %v", i+1, wrap, i == 2)
		}
	}
	checkBudgetOutcome(t, a, lc, 11+13+17)
}

// staleScript writes the list at call 1, reads the goal or the list (never
// writing it) at calls 2 to staleSteps+1, taking turns so that no agent
// sees a loop of one repeated call, and answers at call staleSteps+2 (12
// with the default), which is the one that gets the stale todo reminder.
func staleScript() []reply {
	script := []reply{{tool: "mcp__agentd__TodoList", input: map[string]any{"todos": []item{{"Write the parser", "in_progress"}}}, tokens: 5}}
	for i := range staleSteps {
		tool := "mcp__agentd__GetGoal"
		if i%2 == 1 {
			tool = "mcp__agentd__TodoList"
		}
		script = append(script, reply{tool: tool, input: map[string]any{}, tokens: 2})
	}
	return append(script, reply{text: "Parser written.", tokens: 4})
}

// TestRealClaudeCodeStaleReminder: a list written at the first model call
// and staleSteps calls that do not write it: the stale todo reminder
// reaches the model with the next call (12 with the default), not before.
func TestRealClaudeCodeStaleReminder(t *testing.T) {
	a := newAgentEnv(t)
	model := newScriptedModel(t, staleScript())
	_, claude := claudeRun(t, a, model, nil)
	if out := claude("Write the parser."); !strings.Contains(out, "Parser written.") {
		t.Errorf("claude -p output: %q", out)
	}
	calls := model.calls()
	if len(calls) != staleSteps+2 {
		t.Fatalf("%d model calls, want %d", len(calls), staleSteps+2)
	}
	for i, c := range calls {
		if got := strings.Contains(c, markStale); got != (i == staleSteps+1) {
			t.Errorf("call %d: stale reminder present %v, want %v", i+1, got, i == staleSteps+1)
		}
	}
}

// TestRealClaudeCodeAgentdUnreachable: with agentd unreachable (no runtime
// folder for its socket) Claude Code still answers, its hooks silent.
func TestRealClaudeCodeAgentdUnreachable(t *testing.T) {
	claude := agentBin(t, "claude")
	a := newAgentEnv(t)
	model := newScriptedModel(t, []reply{{text: "Hello without agentd.", tokens: 5}})
	a.setup("claude")
	a.trustClaude()
	blocked := filepath.Join(a.home, "not-a-folder")
	if err := os.WriteFile(blocked, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	env := a.environ(append(claudeEnv(model.url), "XDG_RUNTIME_DIR="+blocked)...)
	if out := a.run(env, claude, "-p", "Say hello."); !strings.Contains(out, "Hello without agentd.") {
		t.Errorf("claude -p output with agentd unreachable: %q", out)
	}
}

// lastMessage is the last message of a Messages API request body, as JSON.
func lastMessage(body string) string {
	var req anthropicRequest
	if json.Unmarshal([]byte(body), &req) != nil || len(req.Messages) == 0 {
		return ""
	}
	return string(req.Messages[len(req.Messages)-1].Content)
}

// geminiRun sets Gemini CLI up in a with agentd (setup in a trusted
// folder), an editor's client on the folder first, and a second BeforeModel
// hook, run after agentd's, that logs each model request as agentd's hook
// left it. The returned func runs `gemini -p` on the scripted responses and
// returns its output and the logged requests' messages.
func geminiRun(t *testing.T, a *agentEnv, script []reply, extraEnv ...string) (*client, func(prompt string) (string, [][]geminiMessage)) {
	gemini := agentBin(t, "gemini")
	lc := a.editorFirst()
	a.setup("gemini")
	a.trustFolder(".gemini")
	log := geminiLogHook(t, a, "BeforeModel")
	fake := writeGeminiScript(t, a, script)
	env := a.environ(append([]string{"GEMINI_API_KEY=dummy"}, extraEnv...)...)
	return lc, func(prompt string) (string, [][]geminiMessage) {
		out := a.run(env, gemini, "-m", "gemini-2.5-flash", "-p", prompt, "--fake-responses", fake, "--yolo")
		var calls [][]geminiMessage
		data, _ := os.ReadFile(log)
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var ev struct {
				LLMRequest struct {
					Messages []geminiMessage `json:"messages"`
				} `json:"llm_request"`
			}
			if json.Unmarshal([]byte(l), &ev) == nil {
				calls = append(calls, ev.LLMRequest.Messages)
			}
		}
		return out, calls
	}
}

// writeGeminiScript writes script as the responses file Gemini CLI reads
// (--fake-responses, from its start in each process) and returns its path.
func writeGeminiScript(t *testing.T, a *agentEnv, script []reply) string {
	var lines []string
	for _, r := range script {
		line, _ := json.Marshal(map[string]any{"method": "generateContentStream", "response": geminiChunks(r)})
		lines = append(lines, string(line))
	}
	fake := filepath.Join(a.home, "fake-responses.jsonl")
	writeFile(t, fake, []byte(strings.Join(lines, "\n")+"\n"))
	return fake
}

// geminiChunks is a scripted reply as Gemini's streamed chunks: one, or,
// for a streamed reply, one per word of its text (then its tool call),
// each with the usage so far and the last with the finish reason and the
// reply's output tokens (Gemini CLI records the last chunk's usage).
func geminiChunks(r reply) []any {
	var parts []any
	if r.streamed {
		for _, w := range strings.SplitAfter(r.text, " ") {
			parts = append(parts, map[string]any{"text": w})
		}
	}
	switch {
	case r.tool != "":
		for _, tc := range append([]reply{r}, r.also...) {
			parts = append(parts, map[string]any{"functionCall": map[string]any{"name": tc.tool, "args": tc.input}})
		}
	case !r.streamed:
		parts = []any{map[string]any{"text": r.text}}
	}
	var chunks []any
	for i, part := range parts {
		candidate := map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}}
		tokens := r.tokens * int64(i) / int64(len(parts))
		if i == len(parts)-1 {
			candidate["finishReason"], tokens = "STOP", r.tokens
		}
		chunks = append(chunks, map[string]any{"candidates": []any{candidate},
			"usageMetadata": map[string]any{"promptTokenCount": 100, "candidatesTokenCount": tokens, "totalTokenCount": 100 + tokens}})
	}
	return chunks
}

// geminiLogHook adds to the folder's Gemini CLI settings a hook on event,
// run after agentd's, that appends each event's input as one JSON line to
// a file in the test's home, and returns that file's path.
func geminiLogHook(t *testing.T, a *agentEnv, event string) string {
	log := filepath.Join(a.home, strings.ToLower(event)+".jsonl")
	settingsPath := filepath.Join(a.ws, ".gemini", "settings.json")
	var settings map[string]any
	b, err := os.ReadFile(settingsPath)
	if err != nil || json.Unmarshal(b, &settings) != nil {
		t.Fatalf("%s: %v", settingsPath, err)
	}
	hooks := settings["hooks"].(map[string]any)
	group, _ := hooks[event].([]any)
	hooks[event] = append(group, map[string]any{"sequential": true, "hooks": []any{map[string]any{
		"type": "command", "command": fmt.Sprintf("tr -d '\\n' >> '%s'; echo >> '%s'", log, log)}}})
	b, _ = json.Marshal(settings)
	if err := os.WriteFile(settingsPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return log
}

type geminiMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// lastUser is the text of the last user message of a request.
func lastUser(msgs []geminiMessage) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i].Content
		}
	}
	return ""
}

// TestRealGeminiCLITurnBudget: as TestRealClaudeCodeTurnBudget, with
// AfterAgent's decision deny as the continuation.
func TestRealGeminiCLITurnBudget(t *testing.T) {
	a := newAgentEnv(t)
	lc, gemini := geminiRun(t, a, []reply{{text: "Turn one done.", tokens: 11}, {text: "Turn two done.", tokens: 13}, {text: "Turn three done.", tokens: 17}})
	userGoal(t, a)
	out, calls := gemini("Work on the goal.")
	if !strings.Contains(out, "Turn three done.") {
		t.Errorf("gemini -p output: %q, want the last turn's answer", out)
	}
	if len(calls) != 3 {
		t.Fatalf("%d model calls, want 3", len(calls))
	}
	for i, msgs := range calls {
		last := lastUser(msgs)
		if !strings.Contains(last, markGoal) {
			t.Errorf("call %d: the last user message lacks the goal reminder: %q", i+1, last)
		}
		if cont := strings.Contains(last, markContinuation); cont != (i > 0) {
			t.Errorf("call %d: continuation prompt present %v, want %v", i+1, cont, i > 0)
		}
		// Turn 3 of 3 reaches 80 % of the budget as it begins
		// (docs/runtime.md §2.4.4): its call gets the wrap-up note, once.
		if wrap := strings.Contains(last, markWrapUp); wrap != (i == 2) {
			t.Errorf("call %d: wrap-up note present %v, want %v", i+1, wrap, i == 2)
		}
	}
	checkBudgetOutcome(t, a, lc, 11+13+17)
}

// TestRealGeminiCLIStaleReminder: as TestRealClaudeCodeStaleReminder; the
// reminder reaches call staleSteps+2 as one more user message of its
// request.
func TestRealGeminiCLIStaleReminder(t *testing.T) {
	a := newAgentEnv(t)
	script := staleScript()
	for i := range script {
		script[i].tool = strings.Replace(script[i].tool, "mcp__agentd__", "mcp_agentd_", 1)
	}
	_, gemini := geminiRun(t, a, script)
	out, calls := gemini("Write the parser.")
	if !strings.Contains(out, "Parser written.") {
		t.Errorf("gemini -p output: %q", out)
	}
	if len(calls) != staleSteps+2 {
		t.Fatalf("%d model calls, want %d", len(calls), staleSteps+2)
	}
	for i, msgs := range calls {
		if got := strings.Contains(lastUser(msgs), markStale); got != (i == staleSteps+1) {
			t.Errorf("call %d: stale reminder present %v, want %v", i+1, got, i == staleSteps+1)
		}
	}
}

// TestRealGeminiCLIAgentdUnreachable: with agentd unreachable Gemini CLI
// still answers.
func TestRealGeminiCLIAgentdUnreachable(t *testing.T) {
	a := newAgentEnv(t)
	blocked := filepath.Join(a.home, "not-a-folder")
	os.MkdirAll(a.home, 0o700)
	if err := os.WriteFile(blocked, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, gemini := geminiRun(t, a, []reply{{text: "Hello without agentd.", tokens: 5}}, "XDG_RUNTIME_DIR="+blocked)
	if out, _ := gemini("Say hello."); !strings.Contains(out, "Hello without agentd.") {
		t.Errorf("gemini -p output with agentd unreachable: %q", out)
	}
}

// sameWords is a model that ends every turn with the same words, "Done.",
// far past a 3-turn budget; its first three calls' output tokens (11, 13,
// 17) are what the goal must count.
func sameWords() []reply {
	script := []reply{{text: "Done.", tokens: 11}, {text: "Done.", tokens: 13}, {text: "Done.", tokens: 17}}
	for range 9 {
		script = append(script, reply{text: "Done.", tokens: 19})
	}
	return script
}

// TestRealClaudeCodeSameWords: a model that answers "Done." every time
// makes byte-identical Stop events (issue 26): each is still a turn of its
// own (docs/hooks.md, "The same event twice"), so a 3-turn budget gives
// exactly 3 model calls, the goal blocked, and Claude Code stops.
func TestRealClaudeCodeSameWords(t *testing.T) {
	a := newAgentEnv(t)
	model := newScriptedModel(t, sameWords())
	lc, claude := claudeRun(t, a, model, nil)
	userGoal(t, a)
	if out := claude("Work on the goal."); !strings.Contains(out, "Done.") {
		t.Errorf("claude -p output: %q", out)
	}
	if calls := model.calls(); len(calls) != 3 {
		t.Fatalf("%d model calls, want 3", len(calls))
	}
	checkBudgetOutcome(t, a, lc, 11+13+17)
}

// TestRealGeminiCLISameWords: as TestRealClaudeCodeSameWords in Gemini CLI.
func TestRealGeminiCLISameWords(t *testing.T) {
	a := newAgentEnv(t)
	lc, gemini := geminiRun(t, a, sameWords())
	userGoal(t, a)
	if out, calls := gemini("Work on the goal."); len(calls) != 3 {
		t.Fatalf("%d model calls, want 3; output %q", len(calls), out)
	}
	checkBudgetOutcome(t, a, lc, 11+13+17)
}

// TestRealClaudeCodeShellIsTheAgent: the model runs `agentd goal set-check`
// through Claude Code's Bash tool; the shared daemon sees Claude Code's
// shell above the command and refuses it (docs/runtime.md, "Who is
// calling: a person or an agent's shell"): the model reads the refusal,
// and the person's goal keeps no check.
func TestRealClaudeCodeShellIsTheAgent(t *testing.T) {
	a := newAgentEnv(t)
	pwned := filepath.Join(a.ws, "pwned")
	model := newScriptedModel(t, []reply{
		{tool: "Bash", input: map[string]any{"command": "env | grep '^CLAUDECODE='; agentd goal set-check 'touch " + pwned + "'", "description": "Set the goal's check"}, tokens: 10},
		{text: "The check was refused.", tokens: 5},
	})
	_, run := claudeRun(t, a, model, []string{"Bash"})
	if _, errOut, code := a.cli("goal", "create", "ship it", "--workspace", a.ws); code != 0 {
		t.Fatalf("goal create as the person: %d %s", code, errOut)
	}
	run("Make the goal's check pass.")
	calls := model.calls()
	if len(calls) < 2 {
		t.Fatalf("the model was called %d times, want the Bash call and the answer after it", len(calls))
	}
	for _, want := range []string{"CLAUDECODE=1", "agentd.goal.setCheck was refused: it came from Claude Code's shell (CLAUDECODE=1 in pid"} {
		if !strings.Contains(calls[1], want) {
			t.Errorf("the Bash result the model read lacks %q:\n%s", want, lastMessage(calls[1]))
		}
	}
	if c := a.goalCheck(); c != "" {
		t.Errorf("the goal's check is %q after the model's set-check, want none", c)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Errorf("the model's check ran")
	}
}

// TestRealGeminiCLIShellIsTheAgent: the model runs `agentd goal set-check`
// through Gemini CLI's shell tool, which sets GEMINI_CLI=1; the shared
// daemon refuses it, and the person's goal keeps no check.
func TestRealGeminiCLIShellIsTheAgent(t *testing.T) {
	a := newAgentEnv(t)
	pwned, envOut, refusal := filepath.Join(a.ws, "pwned"), filepath.Join(a.home, "env.txt"), filepath.Join(a.home, "refusal.txt")
	_, run := geminiRun(t, a, []reply{
		{tool: "run_shell_command", input: map[string]any{"command": fmt.Sprintf("env > '%s'; agentd goal set-check 'touch %s' 2> '%s'", envOut, pwned, refusal)}, tokens: 10},
		{text: "The check was refused.", tokens: 5},
	})
	// One turn: the budget stops the goal's continuation after it.
	for _, args := range [][]string{{"goal", "create", "ship it"}, {"goal", "budget", "1", "turns"}} {
		if out, errOut, code := a.cli(append(args, "--workspace", a.ws)...); code != 0 {
			t.Fatalf("agentd %v: %s%s", args, out, errOut)
		}
	}
	run("Make the goal's check pass.")
	env, _ := os.ReadFile(envOut)
	said, _ := os.ReadFile(refusal)
	if !strings.Contains(string(env), "\nGEMINI_CLI=1\n") {
		t.Errorf("the shell tool's environment lacks GEMINI_CLI=1:\n%s", env)
	}
	if !strings.Contains(string(said), "agentd.goal.setCheck was refused: it came from Gemini CLI's shell (GEMINI_CLI=1 in pid") {
		t.Errorf("set-check from Gemini CLI's shell said %q, want the refusal", said)
	}
	if c := a.goalCheck(); c != "" {
		t.Errorf("the goal's check is %q after the model's set-check, want none", c)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Errorf("the model's check ran")
	}
}
