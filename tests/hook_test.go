package tests

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/reminder"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var updateHooks = flag.Bool("update-hooks", false, "rewrite the wanted outputs of testdata/hooks/*.json")

// hookScenario is one fixture of testdata/hooks: events in an agent's
// documented input shapes, each with the exact output agentd must print
// (null: nothing), then the goal and list they must leave.
type hookScenario struct {
	Doc   string      `json:"doc"`
	Host  string      `json:"host"`
	Setup [][]string  `json:"setup"` // agentd commands run first (through the daemon)
	Steps []hookStep  `json:"steps"`
	Goal  *goalCounts `json:"goal"`
	Todos []item      `json:"todos,omitempty"`
}

type hookStep struct {
	Note string   `json:"note,omitempty"`
	CLI  []string `json:"cli,omitempty"` // an agentd command the user runs first
	// Transcript lines the agent writes before the event ($TRANSCRIPT).
	Transcript []json.RawMessage `json:"transcript,omitempty"`
	Event      json.RawMessage   `json:"event"`
	// Times > 1 sends the event that many times at once (parallel tool
	// calls, retries): every copy must print Want.
	Times int             `json:"times,omitempty"`
	Want  json.RawMessage `json:"want"`
}

type goalCounts struct {
	Status         string `json:"status"`
	TurnsUsed      int64  `json:"turnsUsed"`
	TokensUsed     int64  `json:"tokensUsed"`
	TerminalReason string `json:"terminalReason,omitempty"`
}

// hook runs `agentd-hook HOST` (what agentd setup installs), or `agentd
// hook HOST` when e.hookViaAgentd, on one event in e's workspace and
// returns its stdout and stderr; it must exit 0, whatever happens.
func (e *env) hook(host, event string, args ...string) (string, string) {
	e.t.Helper()
	cmd := e.hookCommand(append([]string{host}, args...)...)
	if e.hookViaAgentd {
		cmd = e.command(append([]string{"hook", host}, args...)...)
	}
	cmd.Stdin = strings.NewReader(event)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		e.t.Fatalf("agentd-hook %s: %v (it must exit 0); stderr:\n%s", host, err, errb.String())
	}
	return out.String(), errb.String()
}

// hookCommand is an agentd-hook command line in this env (state dir set):
// hookBin, whose sibling agentd is agentdBin.
func (e *env) hookCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(hookBin, append(args, "--state-dir", e.stateDir)...)
	cmd.Env = e.environ()
	return cmd
}

// elapsed matches the elapsed times of goal texts (goal.FormatElapsed),
// which the fixtures cannot fix.
var elapsed = regexp.MustCompile(`\b(\d+h\d{2}m|\d+m\d{2}s|\d+s)\b`)

// normalized is a hook's stdout as compact JSON with elapsed times
// replaced, or "null" for nothing.
func normalized(t testing.TB, out string) json.RawMessage {
	t.Helper()
	out = strings.TrimSpace(out)
	if out == "" {
		return json.RawMessage("null")
	}
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("hook output is not one JSON value: %v\n%s", err, out)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return json.RawMessage(elapsed.ReplaceAll(b, []byte("<elapsed>")))
}

// TestHookFixtures plays every scenario of testdata/hooks against the
// binary and the shared daemon, with an LSP client watching the folder.
// Run with -update-hooks to rewrite the wanted outputs (then review them).
func TestHookFixtures(t *testing.T) {
	t.Setenv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "") // claude-block-cap.json: Claude Code's default
	files, err := filepath.Glob("testdata/hooks/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures in testdata/hooks (%v)", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".json"), func(t *testing.T) {
			t.Parallel() // each scenario has its own env and daemon
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var sc hookScenario
			if err := json.Unmarshal(raw, &sc); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			// What setup installs, and `agentd hook`, which must answer
			// alike (one code, cli.Hook); the second checks the first's
			// wanted outputs, never rewrites them.
			t.Run("agentd-hook", func(t *testing.T) { playHookScenario(t, &sc, false) })
			t.Run("agentd hook", func(t *testing.T) {
				again := sc
				again.Steps = slices.Clone(sc.Steps)
				playHookScenario(t, &again, true)
			})
			if *updateHooks {
				var b bytes.Buffer
				enc := json.NewEncoder(&b)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				if err := enc.Encode(sc); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// playHookScenario plays sc through agentd-hook, or through `agentd hook`
// with viaAgentd.
func playHookScenario(t *testing.T, sc *hookScenario, viaAgentd bool) {
	e := newEnv(t)
	e.hookViaAgentd = viaAgentd
	_, editor := e.forwarder() // the daemon is up with the folder open before any goal is made
	editor.Initialize(nil, e.ws)
	transcript := filepath.Join(e.runDir, "transcript.jsonl")
	expand := func(b []byte) string {
		s := strings.ReplaceAll(string(b), "$CWD", jsonText(e.ws))
		return strings.ReplaceAll(s, "$TRANSCRIPT", jsonText(transcript))
	}
	for _, args := range sc.Setup {
		if out, errOut, code := e.cli(append(args, "--workspace", e.ws)...); code != 0 {
			t.Fatalf("agentd %v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
	for i, st := range sc.Steps {
		if len(st.CLI) > 0 {
			if out, errOut, code := e.cli(append(st.CLI, "--workspace", e.ws)...); code != 0 {
				t.Fatalf("step %d: agentd %v: exit %d\n%s%s", i, st.CLI, code, out, errOut)
			}
		}
		for _, line := range st.Transcript {
			appendLine(t, transcript, []byte(expand(line)))
		}
		n := max(st.Times, 1)
		outs := make([]string, n)
		var wg sync.WaitGroup
		for k := range n {
			wg.Go(func() { outs[k], _ = e.hook(sc.Host, expand(st.Event), "--workspace", e.ws) })
		}
		wg.Wait()
		for k, out := range outs {
			got := normalized(t, out)
			if *updateHooks {
				st.Want = got
				sc.Steps[i] = st
				continue
			}
			if diff := cmp.Diff(compact(t, st.Want), string(got)); diff != "" {
				t.Errorf("step %d (%s) copy %d: output differs (-want +got):\n%s", i, st.Note, k, diff)
			}
		}
	}
	var st struct {
		Goal  *goalCounts `json:"goal"`
		Todos struct {
			Items []item `json:"items"`
		} `json:"todos"`
	}
	editor.MustExec("agentd.state", map[string]any{}, &st)
	if *updateHooks {
		sc.Goal, sc.Todos = st.Goal, st.Todos.Items
	}
	if diff := cmp.Diff(sc.Goal, st.Goal); diff != "" {
		t.Errorf("goal after the scenario (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(sc.Todos, st.Todos.Items, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("todo list after the scenario (-want +got):\n%s", diff)
	}
	if sc.Goal != nil {
		// The editor saw the goal reach its last state live.
		editor.Await("agentd/goalChanged", func(p json.RawMessage) bool {
			var n struct {
				Goal *goalCounts `json:"goal"`
			}
			return json.Unmarshal(p, &n) == nil && n.Goal != nil && *n.Goal == *sc.Goal
		})
	}
}

// compact is a wanted output as compact JSON.
func compact(t testing.TB, raw json.RawMessage) string {
	t.Helper()
	if len(raw) == 0 {
		return "null"
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// jsonText is s as it appears inside a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

func appendLine(t testing.TB, path string, line []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b bytes.Buffer
	if err := json.Compact(&b, line); err != nil {
		t.Fatalf("transcript line: %v", err)
	}
	if _, err := f.Write(append(b.Bytes(), '\n')); err != nil {
		t.Fatal(err)
	}
}

// hookOutputKeys are the output keys each agent documents, per event
// ("" for any event), nested objects by their key: Codex refuses any other
// (its hook output schemas say additionalProperties false), and none of the
// agents acts on one.
var hookOutputKeys = map[string]map[string][]string{
	"claude": {
		"":                   {"continue", "stopReason", "decision", "reason", "hookSpecificOutput"},
		"hookSpecificOutput": {"hookEventName", "additionalContext", "permissionDecision", "permissionDecisionReason"},
	},
	"gemini": {
		"":                   {"continue", "stopReason", "decision", "reason", "systemMessage", "hookSpecificOutput"},
		"hookSpecificOutput": {"hookEventName", "additionalContext", "llm_request"},
		"llm_request":        {"messages"},
	},
	"codex": {
		"":                   {"continue", "stopReason", "decision", "reason", "hookSpecificOutput"},
		"hookSpecificOutput": {"hookEventName", "additionalContext", "permissionDecision", "permissionDecisionReason"},
	},
	"qwen": { // Claude Code's, and systemMessage for a stop
		"":                   {"continue", "stopReason", "decision", "reason", "hookSpecificOutput", "systemMessage"},
		"hookSpecificOutput": {"hookEventName", "additionalContext", "permissionDecision", "permissionDecisionReason"},
	},
	"opencode": {"": {"context", "prompt", "stop", "deny"}}, // what agentd's plugin reads
}

// TestHookOutputKeys: every output of the fixtures uses only the keys its
// agent documents, and names the event it answers.
func TestHookOutputKeys(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/hooks/*.json")
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var sc hookScenario
		if err := json.Unmarshal(raw, &sc); err != nil {
			t.Fatal(err)
		}
		keys := hookOutputKeys[sc.Host]
		for i, st := range sc.Steps {
			if compact(t, st.Want) == "null" {
				continue
			}
			var out map[string]any
			if err := json.Unmarshal(st.Want, &out); err != nil {
				t.Fatalf("%s step %d: %v", file, i, err)
			}
			var ev struct {
				Name string `json:"hook_event_name"`
			}
			json.Unmarshal(st.Event, &ev)
			checkKeys(t, fmt.Sprintf("%s step %d", file, i), out, "", keys)
			if hso, ok := out["hookSpecificOutput"].(map[string]any); ok && hso["hookEventName"] != ev.Name {
				t.Errorf("%s step %d: hookEventName %v, want %s", file, i, hso["hookEventName"], ev.Name)
			}
		}
	}
}

func checkKeys(t *testing.T, where string, obj map[string]any, at string, keys map[string][]string) {
	allowed, ok := keys[at]
	if !ok {
		return
	}
	for k, v := range obj {
		if !contains(allowed, k) {
			t.Errorf("%s: key %q under %q is not in the agent's documented output", where, k, at)
		}
		if sub, ok := v.(map[string]any); ok {
			checkKeys(t, where, sub, k, keys)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestHookNeverBreaksTheAgent: bad input, an unreachable agentd and an
// agentd that never answers all end in exit 0 with nothing on stdout, and
// the reason in the log.
func TestHookNeverBreaksTheAgent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	prompt := `{"session_id":"s1","transcript_path":"","cwd":"` + jsonText(e.ws) + `","hook_event_name":"UserPromptSubmit","prompt":"hi"}`
	for _, tc := range []struct {
		name, host, event, log string
		args                   []string
	}{
		{"not JSON", "claude", "hello", "bad claude hook input", nil},
		{"empty", "gemini", "", "stdin is empty", nil},
		{"no event name", "codex", `{"session_id":"s1"}`, "field hook_event_name is missing", nil},
		{"no session", "claude", `{"hook_event_name":"Stop"}`, "no session_id", nil},
		{"wrong type", "gemini", `{"hook_event_name":"AfterTool","session_id":"s","tool_name":"write_todos","tool_input":{"todos":"many"}}`, "bad gemini hook input", nil},
		{"unreachable daemon", "claude", prompt, "cannot reach the shared daemon", []string{"--remote=unix:" + filepath.Join(e.runDir, "none.sock")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut := e.hook(tc.host, tc.event, append(tc.args, "--workspace", e.ws)...)
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if !strings.Contains(errOut, tc.log) {
				t.Errorf("log %q, want it to say %q", errOut, tc.log)
			}
		})
	}
	t.Run("daemon never answers", func(t *testing.T) {
		sock := filepath.Join(e.runDir, "mute.sock")
		l, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			var held []net.Conn // read nothing, answer nothing
			for {
				c, err := l.Accept()
				if err != nil {
					for _, c := range held {
						c.Close()
					}
					return
				}
				held = append(held, c)
			}
		}()
		start := time.Now()
		out, errOut := e.hook("claude", prompt, "--workspace", e.ws, "--remote=unix:"+sock)
		if out != "" || !strings.Contains(errOut, "not handled in time") {
			t.Errorf("stdout %q, log %q: want nothing and a timeout in the log", out, errOut)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("the hook took %v; it must give up after about 2 s", d)
		}
	})
	t.Run("usage", func(t *testing.T) {
		cmd := e.command("hook", "cursor")
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err := cmd.Run()
		if err == nil || cmd.ProcessState.ExitCode() != 1 || !strings.Contains(errb.String(), "usage: agentd hook claude|gemini|codex|copilot|qwen") {
			t.Errorf("agentd hook cursor: %v, %q; want exit 1 (never 2, which blocks) and the usage", err, errb.String())
		}
	})
}

// staleSteps is the stale todo reminder's threshold the hook tests expect:
// an agent hook's connection carries no settings (docs/hooks.md), so they
// run with the default, read from its one declaration, not retyped here.
var staleSteps = reminder.DefaultSettings().TodoReminderSteps

// TestHookStaleReminderCountsEachStepOnce: a list written at the first
// model call, then staleSteps+1 calls that do not write it, each boundary
// event arriving twice (Claude Code) or once per parallel tool at once
// (Codex): the stale todo reminder comes with call staleSteps+2, not
// before, so no step was counted twice.
func TestHookStaleReminderCountsEachStepOnce(t *testing.T) {
	t.Parallel()
	for _, host := range []string{"claude", "codex"} {
		t.Run(host, func(t *testing.T) {
			e := newEnv(t)
			_, editor := e.forwarder()
			editor.Initialize(nil, e.ws)
			transcript := filepath.Join(e.runDir, "transcript.jsonl")
			base := `"session_id":"s-1","turn_id":"1","model":"m","permission_mode":"default","transcript_path":"` + jsonText(transcript) + `","cwd":"` + jsonText(e.ws) + `"`
			// send sends copies of an event at once; %[1]d in it is the
			// copy's number, so no two copies are the same bytes.
			send := func(copies int, event string) []string {
				outs := make([]string, copies)
				var wg sync.WaitGroup
				for k := range copies {
					wg.Go(func() {
						outs[k], _ = e.hook(host, "{"+base+","+strings.ReplaceAll(event, "%[1]d", fmt.Sprint(k))+"}", "--workspace", e.ws)
					})
				}
				wg.Wait()
				return outs
			}
			send(1, `"hook_event_name":"UserPromptSubmit","prompt":"go"`)
			if out, errOut, code := e.cli("tool", "TodoList", `{"todos":[{"title":"Write the parser","status":"in_progress"}]}`, "--workspace", e.ws); code != 0 {
				t.Fatalf("writing the list at call 1: %s%s", out, errOut)
			}
			due := staleSteps + 2 // the call whose step.begin has staleSteps steps ended since the write
			for call := 1; call < due; call++ {
				var outs []string
				if host == "claude" {
					appendLine(t, transcript, fmt.Appendf(nil, `{"type":"assistant","message":{"id":"msg_%d","content":[{"type":"tool_use","id":"toolu_%d","name":"Read","input":{}}],"usage":{"output_tokens":2}}}`, call, call))
					outs = send(2, fmt.Sprintf(`"hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":"Read","tool_input":{},"tool_use_id":"toolu_%d","tool_response":"copy %%[1]d"}]`, call))
				} else {
					appendLine(t, transcript, fmt.Appendf(nil, `{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"output_tokens":%d},"last_token_usage":{"output_tokens":2}}}}`, 2*call))
					outs = send(3, fmt.Sprintf(`"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":"x","tool_use_id":"call_%d_%%[1]d"`, call))
				}
				reminded := 0
				for _, out := range outs {
					if strings.Contains(out, "todo list has not been updated") {
						reminded++
					}
				}
				// The boundary after call `call` is the step.begin of call+1.
				switch {
				case call+1 < due && reminded > 0:
					t.Fatalf("the stale reminder came before call %d: %q", call+1, outs)
				case call+1 == due && reminded == 0:
					t.Fatalf("call %d got no stale reminder: %q", due, outs)
				}
			}
		})
	}
}

// TestHookOpenTurnRulesForUntaggedCalls: a tool call that names no turn
// (an MCP client's) belongs to the turn the hook opened: in its grace step
// it is refused unexecuted.
func TestHookOpenTurnRulesForUntaggedCalls(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, editor := e.forwarder()
	editor.Initialize(nil, e.ws)
	for _, args := range [][]string{{"goal", "create", "Ship it"}, {"goal", "budget", "5", "tokens"}} {
		if out, errOut, code := e.cli(append(args, "--workspace", e.ws)...); code != 0 {
			t.Fatalf("agentd %v: %s%s", args, out, errOut)
		}
	}
	transcript := filepath.Join(e.runDir, "transcript.jsonl")
	base := `"session_id":"s-2","transcript_path":"` + jsonText(transcript) + `","cwd":"` + jsonText(e.ws) + `"`
	e.hook("claude", "{"+base+`,"hook_event_name":"UserPromptSubmit","prompt":"go"}`, "--workspace", e.ws)
	if out, _, code := e.cli("tool", "TodoList", "--workspace", e.ws); code != 0 {
		t.Fatalf("a call in a normal step must run: %s", out)
	}
	appendLine(t, transcript, []byte(`{"type":"assistant","message":{"id":"msg_1","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{}}],"usage":{"output_tokens":9}}}`))
	out, _ := e.hook("claude", "{"+base+`,"hook_event_name":"PostToolBatch","tool_calls":[{"tool_name":"Read","tool_input":{},"tool_use_id":"toolu_1","tool_response":"x"}]}`, "--workspace", e.ws)
	if !strings.Contains(out, "budget is spent") {
		t.Fatalf("PostToolBatch over the budget: %q, want the grace step's notice", out)
	}
	out, _, code := e.cli("tool", "TodoList", `{"todos":[{"title":"x","status":"pending"}]}`, "--workspace", e.ws)
	if code != 1 || !strings.Contains(out, "Not run") {
		t.Errorf("an untagged call in the grace step: exit %d, %q; want the grace refusal", code, out)
	}
	var st struct {
		Todos struct {
			Items []item `json:"items"`
		} `json:"todos"`
	}
	editor.MustExec("agentd.state", map[string]any{}, &st)
	if len(st.Todos.Items) != 0 {
		t.Errorf("the refused call changed the list: %v", st.Todos.Items)
	}
}

// TestHookProgramCommandLine: agentd-hook takes the command lines `agentd
// hook` takes, with the same exit codes (0 for help, 1 for no agent, never
// 2 for a run, 2 for a bad flag) and the same usage, named for itself.
func TestHookProgramCommandLine(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	run := func(cmd *exec.Cmd) (string, string, int) {
		var out, errb bytes.Buffer
		cmd.Stdin = strings.NewReader("")
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var exitErr *exec.ExitError
		if err != nil && !errors.As(err, &exitErr) {
			t.Fatalf("%v: %v", cmd.Args, err)
		}
		return out.String(), errb.String(), cmd.ProcessState.ExitCode()
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string // for exit 1: the line before the usage, naming the problem
	}{
		{"help", []string{"--help"}, 0, ""},
		{"help after the agent", []string{"claude", "-h"}, 0, ""},
		{"no agent", nil, 1, "agentd-hook: name the agent: one of claude, gemini, codex, copilot, qwen, opencode\n"},
		{"unknown agent", []string{"cursor"}, 1, "agentd-hook: unknown agent \"cursor\": use one of claude, gemini, codex, copilot, qwen, opencode\n"},
		{"two agents", []string{"claude", "gemini"}, 1, "agentd-hook: unexpected argument \"gemini\": name one agent\n"},
		{"remote off", []string{"claude", "--remote=off"}, 1, "agentd-hook: --remote=off is not for hooks: a hook works through the shared daemon (--remote=auto or --remote=unix:PATH)\n"},
		{"a flag of another subcommand", []string{"claude", "--json"}, 2, ""},
		{"no such flag", []string{"claude", "--colour"}, 2, ""},
		{"a flag without its value", []string{"claude", "--session"}, 2, ""},
		{"bad log level", []string{"claude", "--log-level=loud"}, 2, ""},
		{"an empty event", []string{"gemini", "--workspace", e.ws}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lout, lerr, lcode := run(e.hookCommand(tc.args...))
			aout, aerr, acode := run(e.command(append([]string{"hook"}, tc.args...)...))
			if lcode != tc.code || acode != tc.code {
				t.Errorf("agentd-hook %q exits %d, agentd hook %d; want %d\nagentd-hook: %s\nagentd hook: %s", tc.args, lcode, acode, tc.code, lerr, aerr)
			}
			if lout != strings.ReplaceAll(aout, "agentd hook", "agentd-hook") {
				t.Errorf("stdout: agentd-hook %q, agentd hook %q", lout, aout)
			}
			if tc.code == 1 && (!strings.HasPrefix(lerr, tc.msg+"usage: agentd-hook claude|gemini|codex|copilot|qwen") || lerr != strings.ReplaceAll(aerr, "agentd hook", "agentd-hook")) {
				t.Errorf("stderr: agentd-hook %q, agentd hook %q; want the same %q and then the usage", lerr, aerr, tc.msg)
			}
		})
	}
}

// TestHookSetupFailureLetsTheAgentGoOn: a hook whose state directory
// cannot be found (no HOME, no XDG_STATE_HOME, no --state-dir) or whose
// --log-file cannot be opened is an event not handled, in both programs:
// exit 0 (2 would block the agent), nothing on stdout, the reason on
// stderr (docs/hooks.md, "Never breaking the agent").
func TestHookSetupFailureLetsTheAgentGoOn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	event := `{"session_id":"s1","transcript_path":"","cwd":"` + jsonText(e.ws) + `","hook_event_name":"UserPromptSubmit","prompt":"go"}`
	var noHome []string
	for _, kv := range e.environ() {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_STATE_HOME=") {
			noHome = append(noHome, kv)
		}
	}
	missingLog := filepath.Join(t.TempDir(), "no-such-dir", "hook.log")
	for _, tc := range []struct {
		name string
		cmd  *exec.Cmd
		log  string
	}{
		{"agentd-hook, no HOME", exec.Command(hookBin, "claude", "--workspace", e.ws), "no state directory"},
		{"agentd hook, no HOME", exec.Command(e.bin, "hook", "claude", "--workspace", e.ws), "no state directory"},
		{"agentd-hook, log file in a missing folder", e.hookCommand("claude", "--workspace", e.ws, "--log-file", missingLog), "--log-file"},
		{"agentd hook, log file in a missing folder", e.command("hook", "claude", "--workspace", e.ws, "--log-file", missingLog), "--log-file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cmd.Env == nil {
				tc.cmd.Env = noHome
			}
			tc.cmd.Stdin = strings.NewReader(event)
			var out, errb bytes.Buffer
			tc.cmd.Stdout, tc.cmd.Stderr = &out, &errb
			err := tc.cmd.Run()
			if err != nil || out.Len() != 0 || !strings.Contains(errb.String(), "not handled") || !strings.Contains(errb.String(), tc.log) {
				t.Errorf("%v: %v, stdout %q, stderr %q; want exit 0, nothing on stdout, and the event not handled because of %q", tc.cmd.Args, err, out.String(), errb.String(), tc.log)
			}
		})
	}
}

// TestHookProgramStartsAgentdBeside: with no daemon running, agentd-hook
// starts `agentd serve` with the agentd beside it (it never serves), and
// answers the event through it.
func TestHookProgramStartsAgentdBeside(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.stopDaemonsAtEnd()
	if out, errOut, code := e.cli("goal", "create", "Ship it", "--workspace", e.ws); code != 0 {
		t.Fatalf("agentd goal create: %s%s", out, errOut)
	}
	if pids := e.daemonPids(); len(pids) != 0 {
		t.Fatalf("daemons before the hook: %v", pids)
	}
	event := `{"session_id":"s1","transcript_path":"","cwd":"` + jsonText(e.ws) + `","hook_event_name":"UserPromptSubmit","prompt":"go"}`
	out, errOut := e.hook("claude", event)
	if !strings.Contains(out, "Ship it") {
		t.Errorf("the prompt's answer %q carries no goal reminder; log:\n%s", out, errOut)
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", e.oneDaemon()))
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := filepath.EvalSymlinks(agentdBin); exe != want {
		t.Errorf("the daemon agentd-hook started runs %s, want the agentd beside it, %s", exe, want)
	}
}

// TestHookProgramWithoutAgentd: an agentd-hook with no agentd beside it
// starts no daemon; the agent goes on (exit 0, nothing on stdout) and the
// log names the missing program, or says it is not executable.
func TestHookProgramWithoutAgentd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.stopDaemonsAtEnd()
	alone := filepath.Join(t.TempDir(), "agentd-hook")
	b, err := os.ReadFile(hookBin)
	if err != nil {
		t.Fatal(err)
	}
	writeExecutable(t, alone, b)
	cmd := exec.Command(alone, "claude", "--state-dir", e.stateDir, "--workspace", e.ws)
	cmd.Env = e.environ()
	cmd.Stdin = strings.NewReader(`{"session_id":"s1","transcript_path":"","cwd":"` + jsonText(e.ws) + `","hook_event_name":"UserPromptSubmit","prompt":"go"}`)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("agentd-hook alone: %v (it must exit 0); stderr:\n%s", err, errb.String())
	}
	missing := filepath.Join(filepath.Dir(alone), "agentd")
	if out.Len() != 0 || !strings.Contains(errb.String(), "there is no agentd program at "+missing) {
		t.Errorf("stdout %q, log %q: want nothing, and the log naming %s", out.String(), errb.String(), missing)
	}
	// An agentd there that is not executable is named as such.
	if err := os.WriteFile(missing, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(alone, "claude", "--state-dir", e.stateDir, "--workspace", e.ws)
	cmd.Env = e.environ()
	cmd.Stdin = strings.NewReader(`{"session_id":"s1","transcript_path":"","cwd":"` + jsonText(e.ws) + `","hook_event_name":"UserPromptSubmit","prompt":"go"}`)
	out.Reset()
	errb.Reset()
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil || out.Len() != 0 || !strings.Contains(errb.String(), missing+" is not executable") {
		t.Errorf("with a non-executable agentd beside it: %v, stdout %q, log %q; want exit 0, nothing, and the log saying %s is not executable", err, out.String(), errb.String(), missing)
	}
	if pids := e.daemonPids(); len(pids) != 0 {
		t.Errorf("daemons after agentd-hook alone: %v, want none", pids)
	}
}

// TestHookProgramStartHangs: an agentd beside agentd-hook that hangs
// instead of serving. The first event waits a bounded time (within the
// event's 2 s), lets the agent go on and says on stderr which program hangs
// and how to fix it, and remembers the failure in the state directory; the
// next events do not start it again but fail at once, naming it and the
// file to delete to retry, for a minute. Another install (another agentd)
// is not held back. A file that cannot be written (a folder in its place)
// is said so, not claimed to hold the next events back; a file whose time
// is ahead of the clock (the clock was set back) holds nothing back. A
// working agentd put in the place of the one that hung is started at once,
// and once the minute has passed so is the same program; a daemon reached
// removes the file (docs/hooks.md, "A daemon that does not start").
func TestHookProgramStartHangs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.stopDaemonsAtEnd()
	if out, errOut, code := e.cli("goal", "create", "Ship it", "--workspace", e.ws); code != 0 {
		t.Fatalf("agentd goal create: %s%s", out, errOut)
	}
	dir := t.TempDir()
	hook := filepath.Join(dir, "agentd-hook")
	b, err := os.ReadFile(hookBin)
	if err != nil {
		t.Fatal(err)
	}
	writeExecutable(t, hook, b)
	agentd, pids := filepath.Join(dir, "agentd"), filepath.Join(dir, "pids")
	writeExecutable(t, agentd, []byte("#!/bin/sh\necho $$ >> '"+pids+"'\nexec sleep 600\n"))
	started := func() []int {
		b, _ := os.ReadFile(pids)
		var out []int
		for _, f := range strings.Fields(string(b)) {
			var pid int
			fmt.Sscan(f, &pid)
			out = append(out, pid)
		}
		return out
	}
	t.Cleanup(func() {
		for _, pid := range started() {
			kill(pid, syscall.SIGKILL)
		}
	})
	events := 0
	runHook := func(hook string) (string, string) {
		t.Helper()
		events++ // each a prompt of its own: a repeated event is answered from the cursor, reaching no daemon
		event := fmt.Sprintf(`{"session_id":"s1","transcript_path":"","cwd":"%s","hook_event_name":"UserPromptSubmit","prompt":"go %d"}`, jsonText(e.ws), events)
		cmd := exec.Command(hook, "claude", "--state-dir", e.stateDir, "--workspace", e.ws)
		cmd.Env = e.environ()
		cmd.Stdin = strings.NewReader(event)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("agentd-hook: %v (it must exit 0); stderr:\n%s", err, errb.String())
		}
		return out.String(), errb.String()
	}
	run := func() (string, string) { t.Helper(); return runHook(hook) }
	marker := filepath.Join(e.stateDir, "hooks", "daemon-start.failed")
	out, errOut := run()
	if out != "" || !strings.Contains(errOut, agentd+" did not start the shared daemon within 1.5s (it hangs?)") || !strings.Contains(errOut, marker) {
		t.Errorf("first event: stdout %q, stderr %q; want nothing, and the line naming %s, which hangs, and %s", out, errOut, agentd, marker)
	}
	if n := strings.Count(errOut, "\n"); n != 1 {
		t.Errorf("first event: %d lines on stderr, want 1:\n%s", n, errOut)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the start that hung is not remembered: %v", err)
	}
	for range 3 {
		out, errOut = run()
		if out != "" || !strings.Contains(errOut, "not starting "+agentd+" again before") || !strings.Contains(errOut, "delete "+marker+" to try again now") {
			t.Errorf("later event: stdout %q, stderr %q; want nothing, and the line saying %s is not started again and how to retry", out, errOut, agentd)
		}
	}
	if got := started(); len(got) != 1 {
		t.Errorf("the hanging agentd was started %d times (%v), want once", len(got), got)
	}
	// Another install, whose agentd is not the one that hung, starts its
	// own at once; the daemon reached removes the file.
	other := t.TempDir()
	writeExecutable(t, filepath.Join(other, "agentd-hook"), b)
	if err := os.Symlink(agentdBin, filepath.Join(other, "agentd")); err != nil {
		t.Fatal(err)
	}
	if out, errOut = runHook(filepath.Join(other, "agentd-hook")); !strings.Contains(out, "Ship it") {
		t.Errorf("another install: stdout %q, stderr %q; want the event answered", out, errOut)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after another install reached a daemon: %s: %v, want it gone", marker, err)
	}
	e.stopDaemons()
	// A folder where the file goes: the start that hangs is said not
	// remembered, and the next event would start it again.
	if err := os.Mkdir(marker, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, errOut = run(); out != "" || !strings.Contains(errOut, agentd+" did not start the shared daemon within 1.5s (it hangs?), and the next event starts it again: "+marker+" cannot be written") {
		t.Errorf("with a folder in the file's place: stdout %q, stderr %q; want the line saying the start that hung cannot be remembered", out, errOut)
	}
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	// The file of the program that hangs, of a time an hour ahead (the
	// clock was set back since): the program is started again.
	writeMarker := func(at time.Time) {
		t.Helper()
		fi, err := os.Stat(agentd)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(map[string]any{"at": at, "program": agentd, "size": fi.Size(), "modTime": fi.ModTime()})
		if err := os.WriteFile(marker, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeMarker(time.Now().Add(time.Hour))
	if out, errOut = run(); out != "" || !strings.Contains(errOut, agentd+" did not start the shared daemon within 1.5s (it hangs?): hooks do not start it again for 1m0s") {
		t.Errorf("with the file's time ahead of the clock: stdout %q, stderr %q; want the program started again, and the start that hung remembered", out, errOut)
	}
	if got := started(); len(got) != 3 {
		t.Errorf("the hanging agentd was started %d times (%v), want 3 (the first event, with a folder in the file's place, with the file ahead of the clock)", len(got), got)
	}
	// Fixed within the minute: a working agentd in its place is started
	// at once, and the daemon reached removes the file.
	if err := os.Remove(agentd); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(agentdBin, agentd); err != nil {
		t.Fatal(err)
	}
	if out, errOut = run(); !strings.Contains(out, "Ship it") {
		t.Errorf("fixed, within the minute: stdout %q, stderr %q; want the event answered with the goal's reminder", out, errOut)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after the fix: %s: %v, want it gone", marker, err)
	}
	// The same program is held back for a minute, and no longer.
	e.stopDaemons()
	writeMarker(time.Now())
	if out, errOut = run(); out != "" || !strings.Contains(errOut, "not starting "+agentd+" again before") {
		t.Errorf("within the minute: stdout %q, stderr %q; want the program held back", out, errOut)
	}
	writeMarker(time.Now().Add(-2 * time.Minute))
	if out, errOut = run(); !strings.Contains(out, "Ship it") {
		t.Errorf("after the minute: stdout %q, stderr %q; want the event answered with the goal's reminder", out, errOut)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after the minute: %s: %v, want it gone", marker, err)
	}
}
