package tests

// Real opencode with agentd, offline, after `agentd setup opencode`: its
// MCP tools, and agentd's plugin (docs/hooks.md, "opencode") driving a goal's
// turns. opencode talks to a scripted Chat Completions API on 127.0.0.1
// through its bundled @ai-sdk/openai-compatible provider. Skipped unless
// AGENTD_AGENTS is set (tests/agents/ci.sh).

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// opencodeModel is a Chat Completions API on 127.0.0.1 that answers the
// agent's main-loop calls (those that offer agentd's tools) from a script,
// in order, streaming each reply with its output tokens, and keeps each
// such request's body; other calls (the session's title) get text.
type opencodeModel struct {
	url string
	modelScript[reply]
}

func newOpencodeModel(t *testing.T, script []reply) *opencodeModel {
	m := &opencodeModel{modelScript: modelScript[reply]{script: script, past: pastTheScript}}
	m.url = serveModel(t, m.serve)
	return m
}

func (m *opencodeModel) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	main := false
	for _, tl := range req.Tools {
		main = main || tl.Function.Name == "agentd_TodoList"
	}
	rp, n := reply{text: "A title.", tokens: 3}, 0
	if main {
		n, rp = m.next(body)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	bw := bufio.NewWriter(w)
	chunk := func(choices []any, usage any) {
		c := map[string]any{"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion.chunk", "created": 1, "model": "m1", "choices": choices}
		if usage != nil {
			c["usage"] = usage
		}
		b, _ := json.Marshal(c)
		fmt.Fprintf(bw, "data: %s\n\n", b)
	}
	delta, finish := map[string]any{"role": "assistant", "content": rp.text}, "stop"
	if rp.tool != "" {
		in, _ := json.Marshal(rp.input)
		delta = map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"index": 0, "id": fmt.Sprintf("call_%d", n), "type": "function",
			"function": map[string]any{"name": rp.tool, "arguments": string(in)}}}}
		finish = "tool_calls"
	}
	chunk([]any{map[string]any{"index": 0, "delta": delta, "finish_reason": nil}}, nil)
	chunk([]any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish}}, nil)
	chunk([]any{}, map[string]any{"prompt_tokens": 10, "completion_tokens": rp.tokens, "total_tokens": 10 + rp.tokens})
	fmt.Fprint(bw, "data: [DONE]\n\n")
	bw.Flush()
}

// lastUserText is the text of the last user message of a Chat Completions
// request body.
func lastUserText(body string) string {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	json.Unmarshal([]byte(body), &req)
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role != "user" {
			continue
		}
		var s string
		if json.Unmarshal(req.Messages[i].Content, &s) == nil {
			return s
		}
		var parts []struct {
			Text string `json:"text"`
		}
		json.Unmarshal(req.Messages[i].Content, &parts)
		var texts []string
		for _, p := range parts {
			texts = append(texts, p.Text)
		}
		return strings.Join(texts, "\n")
	}
	return ""
}

// opencodeSetup sets opencode up in a with agentd: a project opencode.json
// naming the scripted model, which `agentd setup opencode` then merges its
// entry into, and the npm folders opencode fills on its first start (its
// plugin package) marked as installed, so that it reaches no registry; an
// editor's client on the folder first. It returns the client, opencode's
// path and its environment.
func opencodeSetup(t *testing.T, a *agentEnv, model *opencodeModel) (*client, string, []string) {
	opencode := agentBin(t, "opencode")
	lc := a.editorFirst()
	config, _ := json.Marshal(map[string]any{
		"provider": map[string]any{"scripted": map[string]any{"npm": "@ai-sdk/openai-compatible",
			"options": map[string]any{"baseURL": model.url + "/v1", "apiKey": "dummy"}, "models": map[string]any{"m1": map[string]any{}}}},
		"model": "scripted/m1", "autoupdate": false, "share": "disabled"})
	writeFile(t, filepath.Join(a.ws, "opencode.json"), config)
	a.setup("opencode")
	for _, dir := range []string{filepath.Join(a.ws, ".opencode"), filepath.Join(a.home, ".config", "opencode")} {
		deps := `{"dependencies": {"@opencode-ai/plugin": "1.18.33"}}`
		files := map[string]string{"package.json": deps, "package-lock.json": `{"packages": {"": ` + deps + `}}`}
		if err := os.MkdirAll(filepath.Join(dir, "node_modules"), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(a.home, ".local", "share", "opencode", "log", "*.log"))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				t.Logf("opencode log %s, its end:\n%s", l, b[max(0, len(b)-16<<10):])
			}
		}
		for _, dir := range []string{filepath.Join(a.ws, ".opencode"), filepath.Join(a.home, ".config", "opencode")} {
			if _, err := os.Stat(filepath.Join(dir, "node_modules", "@opencode-ai")); err == nil {
				t.Errorf("opencode installed packages into %s: it reached a registry", dir)
			}
		}
	})
	// opencode takes its folder from $PWD, which exec does not set.
	env := a.environ("PWD="+a.ws, "XDG_DATA_HOME="+filepath.Join(a.home, ".local", "share"), "OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_DEFAULT_PLUGINS=1", "OPENCODE_DISABLE_SHARE=1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD=1", "npm_config_registry=http://127.0.0.1:9/", "npm_config_offline=true")
	return lc, opencode, env
}

// TestRealOpencode: after `agentd setup opencode`, `opencode mcp list`
// shows agentd connected, and `opencode run` on a
// scripted Chat Completions API calls TodoList and CreateGoal through
// agentd mcp; an editor's LSP client sees both live, and the plugin counts
// the goal's turn and the tokens of the calls after its creation. The
// model's goal is active when the run ends, and `opencode run` ends there:
// the model is called exactly three times.
func TestRealOpencode(t *testing.T) {
	a := newAgentEnv(t)
	model := newOpencodeModel(t, []reply{
		{tool: "agentd_TodoList", input: scriptTodos, tokens: 5},
		{tool: "agentd_CreateGoal", input: scriptGoal, tokens: 7},
		{text: "Both are set.", tokens: 9},
	})
	lc, opencode, env := opencodeSetup(t, a, model)
	if out := a.run(env, opencode, "mcp", "list"); !strings.Contains(out, "agentd") || !strings.Contains(out, "connected") {
		t.Errorf("opencode mcp list: %q, want agentd connected", out)
	}
	if out := a.run(env, opencode, "run", "Plan the parser."); !strings.Contains(out, "Both are set.") {
		t.Errorf("opencode run output: %q", out)
	}
	a.checkOutcome(lc)
	if calls := model.calls(); len(calls) != 3 {
		t.Errorf("%d model calls, want 3", len(calls))
	}
	var st struct {
		Goal *goalCounts `json:"goal"`
	}
	lc.MustExec("agentd.state", map[string]any{}, &st)
	// The goal counts the turn it was created in and the tokens of the
	// calls after its creation: CreateGoal's call (7) and the answer (9).
	if want := (goalCounts{Status: "active", TurnsUsed: 1, TokensUsed: 7 + 9}); st.Goal == nil || *st.Goal != want {
		t.Errorf("goal after the run: %+v, want %+v", st.Goal, want)
	}
}

// opencodeServe starts `opencode serve` in a's folder, as the TUI runs its
// server: a session there goes on after it first goes idle, which lets
// agentd's plugin continue it. It returns the server's URL.
func opencodeServe(t *testing.T, a *agentEnv, opencode string, env []string) string {
	ctx, cancel := context.WithTimeout(context.Background(), agentLimit)
	cmd := exec.CommandContext(ctx, opencode, "serve", "--hostname", "127.0.0.1", "--port", "0")
	cmd.Dir, cmd.Env = a.ws, env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if i := strings.Index(sc.Text(), "http://127.0.0.1:"); i >= 0 {
			go io.Copy(io.Discard, out)
			return strings.Fields(sc.Text()[i:])[0]
		}
	}
	t.Fatalf("opencode serve printed no URL: %v", sc.Err())
	return ""
}

// TestRealOpencodeSameWords: a user goal with a 3-turn budget and a model
// that answers "Done." every time, in opencode's server (as its TUI runs
// it): the first model call carries the goal reminder, agentd's plugin
// continues the session twice with the continuation prompt, and the budget
// blocks the goal after exactly 3 turns and 3 model calls, with the
// output tokens of each call counted.
func TestRealOpencodeSameWords(t *testing.T) {
	a := newAgentEnv(t)
	model := newOpencodeModel(t, sameWords())
	lc, opencode, env := opencodeSetup(t, a, model)
	userGoal(t, a)
	url := opencodeServe(t, a, opencode, env)
	a.run(env, opencode, "run", "--attach", url, "Work on the goal.")
	lc.Limit = agentLimit
	lc.awaitGoal("block")
	calls := model.calls()
	if len(calls) != 3 {
		t.Fatalf("%d model calls, want 3", len(calls))
	}
	for i, c := range calls {
		last := lastUserText(c)
		if !strings.Contains(last, markGoal) {
			t.Errorf("call %d: the last user message lacks the goal reminder: %s", i+1, last)
		}
		if cont := strings.Contains(last, markContinuation); cont != (i > 0) {
			t.Errorf("call %d: continuation prompt present %v, want %v", i+1, cont, i > 0)
		}
	}
	checkBudgetOutcome(t, a, lc, 11+13+17)
}

// TestRealOpencodeBudgetMidTurn: a goal with a 20-token budget, crossed
// by the turn's first model call, which calls a tool: agentd's plugin
// gives the model its one grace step, with the budget-stop notice in
// that call's request, refuses the tool the model calls
// there (the file it would write is not written), and stops the session
// before a third model call, printing why; every call's tokens are counted.
func TestRealOpencodeBudgetMidTurn(t *testing.T) {
	a := newAgentEnv(t)
	pwned := filepath.Join(a.ws, "pwned.txt")
	model := newOpencodeModel(t, []reply{
		{tool: "agentd_TodoList", input: scriptTodos, tokens: 30},
		{tool: "write", input: map[string]any{"filePath": pwned, "content": "written in the grace step"}, tokens: 40},
		{text: "Past the grace step.", tokens: 50},
	})
	lc, opencode, env := opencodeSetup(t, a, model)
	for _, args := range [][]string{{"goal", "create", "Ship the parser"}, {"goal", "budget", "20", "tokens"}} {
		if out, errOut, code := a.cli(append(args, "--workspace", a.ws)...); code != 0 {
			t.Fatalf("agentd %v: %s%s", args, out, errOut)
		}
	}
	out := a.run(env, opencode, "run", "--auto", "Work on the goal.")
	if !strings.Contains(out, "agentd stopped the agent") {
		t.Errorf("opencode run output: %q, want agentd's stop line", out)
	}
	calls := model.calls()
	if len(calls) != 2 {
		t.Fatalf("%d model calls, want 2", len(calls))
	}
	if last := lastUserText(calls[1]); !strings.Contains(last, "The goal's budget is spent") {
		t.Errorf("the grace step's call lacks the budget-stop notice: %s", last)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Errorf("the grace step's tool call ran: %s exists", pwned)
	}
	var st struct {
		Goal *goalCounts `json:"goal"`
	}
	lc.MustExec("agentd.state", map[string]any{}, &st)
	if st.Goal == nil || st.Goal.Status != "blocked" || st.Goal.TurnsUsed != 1 || st.Goal.TokensUsed != 30+40 {
		t.Errorf("goal after the agent: %+v, want blocked after 1 turn and 70 tokens", st.Goal)
	}
}
