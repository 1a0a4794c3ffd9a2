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

// agentLimit bounds one agent run: only a hang reaches it. On a loaded
// machine (2 cores, many builds) opencode alone took more than 3 minutes
// to start and reach its first model call.
const agentLimit = 8 * time.Minute

// agentsDir is AGENTD_AGENTS, or the test is skipped.
func agentsDir(t testing.TB) string {
	dir := os.Getenv("AGENTD_AGENTS")
	if dir == "" {
		t.Skip("AGENTD_AGENTS is not set: tests/agents/ci.sh installs the agents and runs these tests")
	}
	return dir
}

// agentPrograms are the agents' programs under AGENTD_AGENTS's
// node_modules, by the names `agentd setup` gives the agents.
var agentPrograms = map[string]string{
	"claude":   "@anthropic-ai/claude-code-linux-x64/claude",
	"gemini":   ".bin/gemini",
	"qwen":     ".bin/qwen",
	"codex":    "@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
	"copilot":  "@github/copilot-linux-x64/copilot",
	"opencode": "opencode-linux-x64/bin/opencode",
}

// agentBin is agent's program, or the test is skipped.
func agentBin(tb testing.TB, agent string) string {
	return filepath.Join(agentsDir(tb), "node_modules", filepath.FromSlash(agentPrograms[agent]))
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

// editorFirst opens an editor's LSP client on the folder before any
// agent runs: the daemon is up, and the client sees the agent's changes
// live.
func (a *agentEnv) editorFirst() *client {
	_, lc := a.forwarder()
	lc.Initialize(nil, a.ws)
	return lc
}

// writeFile writes b to path, its folders made first.
func writeFile(tb testing.TB, path string, b []byte) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		tb.Fatal(err)
	}
}

// trustClaude accepts the folder's trust dialog and the project's
// .mcp.json server in Claude Code's user file, as a user does once at the
// first interactive start.
func (a *agentEnv) trustClaude() {
	claudeJSON, _ := json.Marshal(map[string]any{"projects": map[string]any{a.ws: map[string]any{
		"hasTrustDialogAccepted": true, "enabledMcpjsonServers": []string{"agentd"}}}})
	writeFile(a.t, filepath.Join(a.home, ".claude.json"), claudeJSON)
}

// trustFolder marks the folder trusted in the user folder dir (".gemini"
// of Gemini CLI, ".qwen" of Qwen Code).
func (a *agentEnv) trustFolder(dir string) {
	trusted, _ := json.Marshal(map[string]string{a.ws: "TRUST_FOLDER"})
	writeFile(a.t, filepath.Join(a.home, dir, "trustedFolders.json"), trusted)
}

// codexConfig writes a Codex user config that names the scripted model at
// url (a Responses API, no retries) and trusts the folder, and returns the
// environment that points Codex at it.
func (a *agentEnv) codexConfig(url string) []string {
	home := filepath.Join(a.home, ".codex")
	writeFile(a.t, filepath.Join(home, "config.toml"), []byte(fmt.Sprintf(`model = "gpt-5.5"
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
`, url, tomlString(a.ws))))
	return []string{"CODEX_HOME=" + home, "SCRIPTED_API_KEY=dummy"}
}

// tomlString is s as a TOML basic string.
func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
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
	lc, claude := claudeRun(t, a, api, nil)
	if out := a.run(a.environ(claudeEnv(api.url)...), agentBin(t, "claude"), "mcp", "list"); !strings.Contains(out, "agentd") || !strings.Contains(out, "Connected") {
		t.Fatalf("claude mcp list:\n%s", out)
	}
	if out := claude("Plan the parser work and set the goal."); !strings.Contains(out, "All set") {
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
	a := newAgentEnv(t)
	// The hooks continue the agent toward the goal it created
	// (docs/hooks.md): in that turn the model completes it.
	text := reply{text: "All set: the plan is in the todo list and the goal is recorded.", tokens: 5}
	lc, gemini := geminiRun(t, a, []reply{
		{tool: "mcp_agentd_TodoList", input: scriptTodos, tokens: 5},
		{tool: "mcp_agentd_CreateGoal", input: scriptGoal, tokens: 5},
		text,
		{tool: "mcp_agentd_UpdateGoal", input: map[string]any{"status": "complete"}, tokens: 5},
		text,
	})
	if out, _ := gemini("Plan the parser work and set the goal."); !strings.Contains(out, "All set") {
		t.Errorf("gemini -p output:\n%s", out)
	}
	a.checkOutcome(lc)
}
