package tests

// Real Codex with agentd's hooks (docs/hooks.md), offline, after `agentd
// setup codex`: `codex exec` on a scripted Responses API. Skipped unless
// AGENTD_AGENTS is set (tests/agents/ci.sh).

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// responsesModel is an OpenAI Responses API on 127.0.0.1 that answers
// each call with the next reply of its script (a text, or a function call
// of reply.tool with reply.input as its arguments), with its output
// tokens, and keeps each request's body.
type responsesModel struct {
	url string
	modelScript[reply]

	// held, when set, gets each request before its answer, which then
	// waits for release to close.
	held, release chan struct{}
}

func newResponsesModel(t *testing.T, script []reply) *responsesModel {
	m := &responsesModel{modelScript: modelScript[reply]{script: script, past: pastTheScript}}
	m.url = serveModel(t, m.serve)
	return m
}

func (m *responsesModel) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	n, rp := m.next(body)
	awaitFile(r.Context(), rp.waitFor)
	if m.held != nil {
		m.held <- struct{}{}
		select {
		case <-m.release:
		case <-r.Context().Done():
			return
		}
	}
	writeResponses(w, n, rp)
}

// writeResponses answers Responses API call n with rp as server-sent
// events: a message with its text, or a function call of rp.tool with
// rp.input as its arguments.
func writeResponses(w http.ResponseWriter, n int, rp reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	ev := &sseWriter{w: bufio.NewWriter(w)}
	id, msgID := fmt.Sprintf("resp_%d", n), fmt.Sprintf("msg_%d", n)
	ev.send("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
	item := map[string]any{"type": "message", "id": msgID, "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": rp.text, "annotations": []any{}}}}
	if rp.tool != "" {
		args, _ := json.Marshal(rp.input)
		item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", n), "call_id": fmt.Sprintf("call_%d", n),
			"name": rp.tool, "arguments": string(args), "status": "completed"}
		if ns, name, ok := strings.Cut(rp.tool, "/"); ok { // an MCP server's tool: "mcp__agentd/TodoList"
			item["namespace"], item["name"] = ns, name
		}
	}
	ev.send("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	ev.send("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	ev.send("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{"id": id, "usage": map[string]any{
		"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": rp.tokens, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 10 + rp.tokens}}})
	ev.w.Flush()
}

// codexRun sets Codex up in a with agentd (setup; a user config that
// names the scripted model and trusts the folder), an editor's client on
// the folder first, and returns the client and a func that runs `codex
// exec` (its hooks trusted for the run, as the one-time "Trust all" does).
func codexRun(t *testing.T, a *agentEnv, model *responsesModel) (*client, func(prompt string) string) {
	codex := agentBin(t, "codex")
	lc := a.editorFirst()
	a.setup("codex")
	env := a.environ(a.codexConfig(model.url)...)
	return lc, func(prompt string) string {
		return a.run(env, codex, "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust", prompt)
	}
}

// TestRealCodexSameWords: as TestRealClaudeCodeSameWords in Codex, whose
// Stop events of a prompt and its continuations share one turn_id and,
// when the model repeats itself, their bytes: exactly 3 model calls under
// a 3-turn budget, the goal blocked, and Codex stops.
func TestRealCodexSameWords(t *testing.T) {
	a := newAgentEnv(t)
	model := newResponsesModel(t, sameWords())
	lc, codex := codexRun(t, a, model)
	userGoal(t, a)
	if out := codex("Work on the goal."); !strings.Contains(out, "Done.") {
		t.Errorf("codex exec output: %q", out)
	}
	if n := len(model.calls()); n != 3 {
		t.Fatalf("%d model calls, want 3", n)
	}
	checkBudgetOutcome(t, a, lc, 11+13+17)
}

// markGraceRefusal opens the refusal of a tool called in a grace step
// (goal.GraceStepRefusal).
const markGraceRefusal = "Not run: the goal's budget is spent and the goal is blocked."

// TestRealCodexGraceStepRefusal: a 100-token budget crossed mid-turn by a
// response with a tool call (150 output tokens) grants one grace step
// whose tool call is refused unexecuted (docs/runtime.md §2.4): Codex
// writes the response's token_count a tool call late, so agentd counts its
// token_usage_record (issue 26). The refused call's file never exists,
// the model gets the refusal, and the goal is blocked by its token budget.
func TestRealCodexGraceStepRefusal(t *testing.T) {
	a := newAgentEnv(t)
	codexGraceStep(t, a, reply{tool: "exec_command", input: map[string]any{"cmd": "touch first"}, tokens: 150})
	if _, err := os.Stat(filepath.Join(a.ws, "first")); err != nil {
		t.Errorf("the first step's tool did not run: %v", err)
	}
}

// TestRealCodexGraceStepAfterAgentdTool: as TestRealCodexGraceStepRefusal
// with agentd's own TodoList (an MCP tool, whose PostToolUse ends the step
// too) as the tool of the response that crosses the budget.
func TestRealCodexGraceStepAfterAgentdTool(t *testing.T) {
	a := newAgentEnv(t)
	codexGraceStep(t, a, reply{tool: "mcp__agentd/TodoList", input: scriptTodos, tokens: 150})
	if out, _, _ := a.cli("state", "--workspace", a.ws); !strings.Contains(out, "read the code") {
		t.Errorf("the first step's TodoList did not run:\n%s", out)
	}
}

// codexGraceStep runs Codex under a 100-token budget on first (150
// tokens, a tool call), a call of exec_command that would create the file
// forbidden, and a closing text; the second call must be refused.
func codexGraceStep(t *testing.T, a *agentEnv, first reply) {
	model := newResponsesModel(t, []reply{
		first,
		{tool: "exec_command", input: map[string]any{"cmd": "touch forbidden"}, tokens: 7},
		{text: "Stopping: the budget is spent.", tokens: 5},
	})
	lc, codex := codexRun(t, a, model)
	for _, args := range [][]string{{"goal", "create", "Ship the parser"}, {"goal", "budget", "100", "tokens"}} {
		if out, errOut, code := a.cli(append(args, "--workspace", a.ws)...); code != 0 {
			t.Fatalf("agentd %v: %s%s", args, out, errOut)
		}
	}
	out := codex("Work on the goal.")
	if _, err := os.Stat(filepath.Join(a.ws, "forbidden")); err == nil {
		t.Errorf("the grace step's tool call ran: %s exists\n%s", filepath.Join(a.ws, "forbidden"), out)
	}
	bodies := model.calls()
	if len(bodies) != 3 {
		t.Fatalf("%d model calls, want 3\n%s", len(bodies), out)
	}
	if !strings.Contains(bodies[2], markGraceRefusal) {
		t.Errorf("the model's third call lacks the grace step's refusal:\n%s", bodies[2])
	}
	var st struct {
		Goal *goalCounts `json:"goal"`
	}
	lc.MustExec("agentd.state", map[string]any{}, &st)
	want := &goalCounts{Status: "blocked", TurnsUsed: 1, TokensUsed: 150 + 7 + 5, TerminalReason: "budget reached: token budget of 100 tokens"}
	if st.Goal == nil || *st.Goal != *want {
		t.Errorf("goal after the agent: %+v, want %+v", st.Goal, want)
	}
}

// TestRealCodexOneGoalSystem: after `agentd setup codex` the project's
// config turns Codex's own goals feature off, so the model's tools hold
// none of Codex's goal tools (create_goal, get_goal, update_goal): agentd's
// are its one goal system.
func TestRealCodexOneGoalSystem(t *testing.T) {
	a := newAgentEnv(t)
	model := newResponsesModel(t, []reply{{text: "Hello.", tokens: 3}})
	_, codex := codexRun(t, a, model)
	codex("Say hello.")
	bodies := model.calls()
	if len(bodies) == 0 {
		t.Fatal("no model call")
	}
	var req struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(bodies[0]), &req); err != nil || len(req.Tools) == 0 {
		t.Fatalf("the request's tools (%v): %.300s", err, bodies[0])
	}
	var names []string
	for _, tl := range req.Tools {
		names = append(names, tl.Name)
		if strings.HasSuffix(tl.Name, "_goal") {
			t.Errorf("the model got Codex's own goal tool %s", tl.Name)
		}
	}
	if !slices.Contains(names, "exec_command") {
		t.Errorf("the model's tools %q lack exec_command: the request was not read right", names)
	}
}

// TestRealCodexInterruptPausesTheGoal: the user interrupting `codex exec`
// (SIGINT, as Ctrl-C) while the model is answering fires Codex's
// Interrupt hook, which setup installs: the open turn ends cancelled and
// the goal pauses, as when the user interrupts any agent.
func TestRealCodexInterruptPausesTheGoal(t *testing.T) {
	a := newAgentEnv(t)
	model := newResponsesModel(t, []reply{{text: "Hello.", tokens: 3}})
	model.held, model.release = make(chan struct{}, 1), make(chan struct{})
	defer close(model.release)
	lc, _ := codexRun(t, a, model)
	userGoal(t, a)
	cmd := exec.Command(agentBin(t, "codex"), "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust", "Work on the goal.")
	var out strings.Builder
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = a.ws, a.environ("CODEX_HOME="+filepath.Join(a.home, ".codex"), "SCRIPTED_API_KEY=dummy"), &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-model.held: // the turn is under way: the model was called
	case err := <-done:
		t.Fatalf("codex exec ended before calling the model: %v\n%s", err, &out)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(agentLimit):
		cmd.Process.Kill()
		t.Fatalf("codex exec did not end after SIGINT\n%s", &out)
	}
	if gc := lc.awaitGoal("pause"); gc.Change.Actor != "user" || gc.Change.Reason != "paused after the user interrupted the turn" || gc.Goal == nil || gc.Goal.TurnsUsed != 1 {
		t.Errorf("the editor's pause notice: %+v\n%s", gc, &out)
	}
}
