package tests

// Real Codex with agentd's hooks (docs/hooks.md), offline, after `agentd
// setup codex`: `codex exec` on a scripted Responses API. Skipped unless
// AGENTD_AGENTS is set (tests/agents/ci.sh).

import (
	"bufio"
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
)

// responsesModel is an OpenAI Responses API on 127.0.0.1 that answers
// each call with the text of the next reply of its script, with its
// output tokens, and counts the calls.
type responsesModel struct {
	url    string
	script []reply

	mu    sync.Mutex
	calls int
}

func newResponsesModel(t *testing.T, script []reply) *responsesModel {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &responsesModel{url: "http://" + ln.Addr().String(), script: script}
	srv := &http.Server{Handler: http.HandlerFunc(m.serve)}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return m
}

func (m *responsesModel) called() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls
}

func (m *responsesModel) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		http.NotFound(w, r)
		return
	}
	io.Copy(io.Discard, r.Body)
	m.mu.Lock()
	m.calls++
	n := m.calls
	rp := reply{text: "Past the script.", tokens: 1000}
	if n <= len(m.script) {
		rp = m.script[n-1]
	}
	m.mu.Unlock()
	writeResponses(w, n, rp)
}

// writeResponses answers Responses API call n with rp as server-sent
// events: a message with its text, or a function call of rp.tool with
// rp.input as its arguments.
func writeResponses(w http.ResponseWriter, n int, rp reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	ev := &sseWriter{w: bufio.NewWriter(w)}
	id, msgID := fmt.Sprintf("resp_%d", n), fmt.Sprintf("msg_%d", n)
	item := map[string]any{"type": "message", "id": msgID, "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": rp.text, "annotations": []any{}}}}
	if rp.tool != "" {
		args, _ := json.Marshal(rp.input)
		item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", n), "call_id": fmt.Sprintf("call_%d", n),
			"name": rp.tool, "arguments": string(args), "status": "completed"}
	}
	ev.send("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id}})
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
	codex := filepath.Join(agentsDir(t), "node_modules", "@openai", "codex-linux-x64", "vendor", "x86_64-unknown-linux-musl", "bin", "codex")
	_, lc := a.forwarder()
	lc.Initialize(nil, a.ws)
	a.setup("codex")
	home := filepath.Join(a.home, ".codex")
	config := fmt.Sprintf(`model = "gpt-5.5"
model_provider = "scripted"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.scripted]
name = "scripted"
base_url = "%s/v1"
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[projects.%s]
trust_level = "trusted"
`, model.url, tomlString(a.ws))
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	env := a.environ("CODEX_HOME="+home, "SCRIPTED_API_KEY=dummy")
	return lc, func(prompt string) string {
		return a.run(env, codex, "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust", prompt)
	}
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
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
	if n := model.called(); n != 3 {
		t.Fatalf("%d model calls, want 3", n)
	}
	checkBudgetOutcome(t, a, lc, 11+13+17)
}
