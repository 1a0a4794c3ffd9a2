package tests

// Real coding agents, offline: Claude Code and Gemini CLI (installed by
// tests/agents/ci.sh) run their whole agent loop on scripted model output,
// with agentd wired in by `agentd setup`. Skipped unless AGENTD_AGENTS names
// the folder that holds their node_modules.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// agentLimit bounds one agent run.
const agentLimit = 3 * time.Minute

// agentsDir is AGENTD_AGENTS, or the test is skipped.
func agentsDir(t testing.TB) string {
	dir := os.Getenv("AGENTD_AGENTS")
	if dir == "" {
		t.Skip("AGENTD_AGENTS is not set: tests/agents/ci.sh installs the agents and runs these tests")
	}
	return dir
}

// agentEnv is a test env for an agent: a git repository as the workspace,
// a private home, agentd on the PATH, and the state directory where the
// agent's `agentd mcp` (started with no flags) looks for it, so that it
// shares the daemon of the env's LSP clients.
type agentEnv struct {
	*env
	home string
}

func newAgentEnv(t testing.TB) *agentEnv {
	e := newEnv(t)
	base := filepath.Dir(e.stateDir)
	e.stateDir = filepath.Join(base, "xdg-state", "agentd") // $XDG_STATE_HOME/agentd of agentEnviron
	a := &agentEnv{env: e, home: filepath.Join(base, "home")}
	for _, d := range []string{filepath.Join(e.ws, ".git"), a.home} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

// environ is the agents' environment: later entries win over e.environ's.
func (a *agentEnv) environ(extra ...string) []string {
	return append(append(a.env.environ(), []string{
		"HOME=" + a.home,
		"XDG_STATE_HOME=" + filepath.Dir(a.stateDir),
		"XDG_CONFIG_HOME=" + filepath.Join(a.home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(a.home, ".cache"),
		"PATH=" + filepath.Dir(agentdBin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"NO_COLOR=1",
		"CI=1",
	}...), extra...)
}

// run runs an agent's command line in the workspace and returns its output.
func (a *agentEnv) run(env []string, name string, args ...string) string {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), agentLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = a.ws, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		a.t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (a *agentEnv) setup(agent string) {
	a.t.Helper()
	cmd := a.command("setup", agent)
	cmd.Dir, cmd.Env = a.ws, a.environ()
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "added") {
		a.t.Fatalf("agentd setup %s: %v %s", agent, err, out)
	}
	// The agent's hooks run agentd-hook, which sits beside agentd (docs/hooks.md).
	if hooks := map[string]string{"claude": ".claude/settings.json", "gemini": ".gemini/settings.json"}[agent]; hooks != "" {
		if b, err := os.ReadFile(filepath.Join(a.ws, hooks)); err != nil || !strings.Contains(string(b), `"agentd-hook `+agent+`"`) {
			a.t.Fatalf("%s after agentd setup %s: %v\n%s\nwant its hooks to run agentd-hook %s", hooks, agent, err, b, agent)
		}
	}
}

// checkOutcome checks what the scripted model did through agentd: the
// editor's client got the model's todo list and goal as they were written,
// and the state holds them.
func (a *agentEnv) checkOutcome(lc *client) {
	a.t.Helper()
	if n := lc.awaitTodo(a.ws, "read the code"); n.Actor != "model" || len(n.Items) != 2 {
		a.t.Errorf("editor's todoChanged = %+v, want the model's two items", n)
	}
	if gc := lc.awaitGoal("create"); gc.Change.Actor != "model" || gc.Goal == nil || gc.Goal.Objective != "ship the parser" {
		a.t.Errorf("editor's goalChanged = %+v, want the model's goal", gc)
	}
	out, stderr, code := a.cli("state", "--json", "--workspace", a.ws)
	var st state
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || len(st.Todos.Items) != 2 || !strings.Contains(string(st.Goal), `"ship the parser"`) {
		a.t.Errorf("agentd state after the agent: %s %s", out, stderr)
	}
}

// The scripted model's two tool calls. Both items are done: the goal the model creates
// requires them before it completes (docs/runtime.md §2.12).
var (
	scriptTodos = map[string]any{"todos": []item{{"read the code", "done"}, {"write the parser", "done"}}}
	scriptGoal  = map[string]any{"objective": "ship the parser", "completionCriterion": "go test ./parser passes"}
)

// TestRealClaudeCode: after `agentd setup claude`, `claude mcp list` shows
// agentd connected, and `claude -p` on a scripted Messages API calls
// TodoList and CreateGoal through agentd mcp; an editor's LSP client sees
// both live.
func TestRealClaudeCode(t *testing.T) {
	claude := filepath.Join(agentsDir(t), "node_modules", "@anthropic-ai", "claude-code-linux-x64", "claude")
	a := newAgentEnv(t)
	// TodoList, CreateGoal, a closing text; then the hooks continue the
	// agent toward the goal it created (docs/hooks.md), and the model
	// completes it, so the agent stops.
	api := newScriptedModel(t, []reply{
		{tool: "mcp__agentd__TodoList", input: scriptTodos, tokens: 20},
		{tool: "mcp__agentd__CreateGoal", input: scriptGoal, tokens: 20},
		{text: "All set: the plan is in the todo list and the goal is recorded.", tokens: 12},
		{tool: "mcp__agentd__UpdateGoal", input: map[string]any{"status": "complete"}, tokens: 9},
		{text: "All set: the goal is complete.", tokens: 12},
	})
	a.setup("claude")
	// Accept the folder's trust dialog and the project's .mcp.json server,
	// as a user does once at the first interactive start.
	claudeJSON, _ := json.Marshal(map[string]any{"projects": map[string]any{a.ws: map[string]any{
		"hasTrustDialogAccepted": true, "enabledMcpjsonServers": []string{"agentd"}}}})
	if err := os.WriteFile(filepath.Join(a.home, ".claude.json"), claudeJSON, 0o600); err != nil {
		t.Fatal(err)
	}
	_, lc := a.forwarder()
	lc.Initialize(nil, a.ws)
	// ENABLE_TOOL_SEARCH=false offers MCP tools to the model directly
	// instead of behind Claude Code's ToolSearch tool, so the script needs
	// no search step.
	env := a.environ(claudeEnv(api.url)...)

	if out := a.run(env, claude, "mcp", "list"); !strings.Contains(out, "agentd") || !strings.Contains(out, "Connected") {
		t.Fatalf("claude mcp list:\n%s", out)
	}
	out := a.run(env, claude, "-p", "Plan the parser work and set the goal.", "--allowedTools", "mcp__agentd")
	if !strings.Contains(out, "All set") {
		t.Errorf("claude -p output:\n%s", out)
	}
	a.checkOutcome(lc)
	// The model got both tool outputs: the call after CreateGoal carries them.
	if calls := api.calls(); len(calls) < 3 || !strings.Contains(calls[2], "[done] read the code") || !strings.Contains(calls[2], "ship the parser") {
		t.Errorf("the model's third call does not carry the outputs of TodoList and CreateGoal (%d calls)", len(calls))
	}
}

type anthropicRequest struct {
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

type sseWriter struct{ w *bufio.Writer }

func (e *sseWriter) send(event string, data any) {
	b, _ := json.Marshal(data)
	fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", event, b)
}

// TestRealGeminiCLI: after `agentd setup gemini` (in a trusted folder),
// `gemini -p` with scripted model output (--fake-responses) calls TodoList
// and CreateGoal through agentd mcp; an editor's LSP client sees both live.
func TestRealGeminiCLI(t *testing.T) {
	gemini := filepath.Join(agentsDir(t), "node_modules", ".bin", "gemini")
	a := newAgentEnv(t)
	a.setup("gemini")
	trusted, _ := json.Marshal(map[string]string{a.ws: "TRUST_FOLDER"})
	if err := os.MkdirAll(filepath.Join(a.home, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(a.home, ".gemini", "trustedFolders.json"), trusted, 0o600); err != nil {
		t.Fatal(err)
	}
	call := func(name string, args any) map[string]any {
		return map[string]any{"functionCall": map[string]any{"name": "mcp_agentd_" + name, "args": args}}
	}
	text := map[string]any{"text": "All set: the plan is in the todo list and the goal is recorded."}
	var lines []string
	// The hooks continue the agent toward the goal it created
	// (docs/hooks.md): in that turn the model completes it.
	for _, part := range []map[string]any{call("TodoList", scriptTodos), call("CreateGoal", scriptGoal), text, call("UpdateGoal", map[string]any{"status": "complete"}), text} {
		line, _ := json.Marshal(map[string]any{"method": "generateContentStream", "response": []any{map[string]any{
			"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP"}},
			"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		}}})
		lines = append(lines, string(line))
	}
	fake := filepath.Join(a.home, "fake-responses.jsonl")
	if err := os.WriteFile(fake, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, lc := a.forwarder()
	lc.Initialize(nil, a.ws)
	env := a.environ("GEMINI_API_KEY=dummy")
	out := a.run(env, gemini, "-m", "gemini-2.5-flash", "-p", "Plan the parser work and set the goal.", "--fake-responses", fake, "--yolo")
	if !strings.Contains(out, "All set") {
		t.Errorf("gemini -p output:\n%s", out)
	}
	a.checkOutcome(lc)
}
