package tests

// A command run from inside a coding agent's shell tool acts as the model
// (docs/runtime.md, "Who is calling: a person or an agent's shell"): the
// person's commands are refused with caller.agent_shell, through the
// shared daemon (which looks at its peer's processes) and on the state
// opened directly (the command looks at its own).

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// agentShellRun runs agentd ARGS as the model would through Claude Code's
// Bash tool: with CLAUDECODE=1 in its environment, or (parent) under a
// shell that has it while the command itself removes it (`env -u`).
func (e *env) agentShellRun(parent bool, args ...string) (string, int) {
	e.t.Helper()
	cmd := e.command(args...)
	if parent {
		cmd = exec.Command("/bin/sh", append([]string{"-c", `env -u CLAUDECODE "$0" "$@"; exit $?`}, cmd.Args...)...)
		cmd.Env = e.environ()
	}
	cmd.Env = append(cmd.Env, "CLAUDECODE=1")
	cmd.Dir = e.ws
	out, err := cmd.CombinedOutput()
	code := 0
	if x, ok := err.(*exec.ExitError); ok {
		code = x.ExitCode()
	} else if err != nil {
		e.t.Fatalf("%v: %v", cmd.Args, err)
	}
	return string(out), code
}

// goalCheck is the check of the default session's goal in the env's
// workspace ("" for none), read as the person.
func (e *env) goalCheck() string {
	e.t.Helper()
	out, errOut, code := e.cli("goal", "status", "--json", "--workspace", e.ws)
	if code != 0 && code != 2 {
		e.t.Fatalf("goal status: %d %s", code, errOut)
	}
	var g struct {
		Check *struct {
			Command string `json:"command"`
		} `json:"check"`
	}
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		e.t.Fatalf("goal status --json: %v\n%s", err, out)
	}
	if g.Check == nil {
		return ""
	}
	return g.Check.Command
}

// TestAgentShellCannotSetACheck: `agentd goal set-check` and `agentd goal
// create --check`, from Claude Code's shell (the marker in the command, or
// only in the shell above it), are refused against the shared daemon and
// on the state opened directly, and change nothing; the same commands from
// the person's terminal work.
func TestAgentShellCannotSetACheck(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"daemon", "direct"} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t)
			if mode == "daemon" {
				_, lc := e.forwarder()
				lc.Initialize(nil, e.ws)
				e.oneDaemon()
			}
			ws := []string{"--workspace", e.ws}
			if _, errOut, code := e.cli(append([]string{"goal", "create", "ship it"}, ws...)...); code != 0 {
				t.Fatalf("goal create as the person: %d %s", code, errOut)
			}
			pwned := filepath.Join(e.ws, "pwned")
			for _, parent := range []bool{false, true} {
				for _, args := range [][]string{
					{"goal", "set-check", "touch " + pwned},
					{"goal", "create", "another", "--check", "touch " + pwned, "--session", "other"},
				} {
					out, code := e.agentShellRun(parent, append(args, ws...)...)
					if code != 1 || !strings.Contains(out, "came from Claude Code's shell (CLAUDECODE=1 in pid") ||
						!strings.Contains(out, "ask them to run it in their own terminal") {
						t.Errorf("%v from Claude Code's shell (marker only in the parent shell: %v) = exit %d %q; want the refusal naming Claude Code", args, parent, code, out)
					}
				}
			}
			if c := e.goalCheck(); c != "" {
				t.Errorf("the goal's check is %q after the refusals, want none", c)
			}
			out, _, _ := e.cli("goal", "status", "--json", "--session", "other", "--workspace", e.ws)
			if strings.Contains(out, "another") {
				t.Errorf("session other has a goal after the refused create: %s", out)
			}
			if _, err := os.Stat(pwned); err == nil {
				t.Errorf("the refused check ran")
			}
			if _, errOut, code := e.cli(append([]string{"goal", "set-check", "test -d ."}, ws...)...); code != 0 || e.goalCheck() != "test -d ." {
				t.Errorf("goal set-check from the person's terminal: %d %s, check %q", code, errOut, e.goalCheck())
			}
		})
	}
}

// TestAgentShellEditorConnections: an editor's connection is the person's
// (the forwarder's pipes the daemon adopts, and a stdio server); the same
// connections started from an agent's shell act as the model.
func TestAgentShellEditorConnections(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		args  []string
		agent bool
	}{
		{"forwarder", []string{"--remote=auto"}, false},
		{"forwarder from an agent's shell", []string{"--remote=auto"}, true},
		{"stdio", nil, false},
		{"stdio from an agent's shell", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if tc.args != nil {
				e.stopDaemonsAtEnd()
			}
			cmd := e.command(tc.args...)
			if tc.agent {
				cmd.Env = append(cmd.Env, "GEMINI_CLI=1")
			}
			lc := e.run(cmd).connect()
			lc.Initialize(nil, e.ws)
			lc.MustExec("agentd.goal.create", map[string]any{"objective": "ship it"}, nil)
			err := lc.Exec("agentd.goal.setCheck", map[string]any{"command": "true"}, nil)
			switch {
			case tc.agent && (err == nil || !strings.Contains(err.Error(), "Gemini CLI's shell (GEMINI_CLI=1 in pid")):
				t.Errorf("setCheck from Gemini CLI's shell = %v, want the refusal naming Gemini CLI", err)
			case !tc.agent && err != nil:
				t.Errorf("setCheck from the editor: %v", err)
			}
		})
	}
}

// TestAgentShellMCPUnaffected: `agentd mcp`, which an agent starts (Claude
// Code gives it CLAUDECODE=1), is the agent's, and what it calls stays
// open to it: the tools, and the goal prompt, which creates a goal without
// a check. The shared daemon and, with --remote=off, the process itself
// decide.
func TestAgentShellMCPUnaffected(t *testing.T) {
	t.Setenv("CLAUDECODE", "1")
	for _, remote := range []string{"auto", "off"} {
		t.Run(remote, func(t *testing.T) {
			e := newEnv(t)
			c := e.mcp("", "", "--workspace", e.ws, "--remote="+remote)
			if got := c.good("TodoList", map[string]any{"todos": []item{{"write the tests", "in_progress"}}}); !strings.Contains(got, "write the tests") {
				t.Errorf("TodoList from an agent's agentd mcp = %q", got)
			}
			ctx, cancel := c.ctx()
			defer cancel()
			if _, err := c.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "goal", Arguments: map[string]string{"objective": "make CI green"}}); err != nil {
				t.Fatalf("the goal prompt from an agent's agentd mcp: %v", err)
			}
			if got := c.good("GetGoal", map[string]any{}); !strings.Contains(got, "make CI green") {
				t.Errorf("GetGoal after the goal prompt = %q", got)
			}
		})
	}
}

// TestAgentShellCannotConsent: what only this machine's person may consent
// to is refused from Claude Code's shell: approving a check (`agentd goal
// check --approve`), accepting a repository's team file (`agentd team
// accept`) and making a team folder (`agentd team init`, which accepts the
// file it writes). Nothing is approved or accepted; the person's own
// terminal can.
func TestAgentShellCannotConsent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws := []string{"--workspace", e.ws}
	if err := os.MkdirAll(filepath.Join(e.ws, ".agentd"), 0o755); err != nil {
		t.Fatal(err)
	}
	team := `{"id": "6f1c1a52-3c38-4b8e-9a53-0d2c5a1e7b10", "etcd": ["https://127.0.0.1:1"]}`
	if err := os.WriteFile(filepath.Join(e.ws, ".agentd", "team.json"), []byte(team), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"team", "accept"},
		{"team", "init", "--etcd", "https://127.0.0.1:1"},
	} {
		out, code := e.agentShellRun(true, append(args, ws...)...)
		if code != 1 || !strings.Contains(out, "came from Claude Code's shell (CLAUDECODE=1 in pid") {
			t.Errorf("%v from Claude Code's shell = exit %d %q; want the refusal naming Claude Code", args, code, out)
		}
	}
	if out, errOut, code := e.cli(append([]string{"state"}, ws...)...); code != 0 || !strings.Contains(out+errOut, "is not accepted on this machine: agentd team accept") {
		t.Errorf("agentd state after the refused accept: exit %d %q %q; want the team file still waiting for acceptance", code, out, errOut)
	}
	if err := os.Remove(filepath.Join(e.ws, ".agentd", "team.json")); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := e.cli(append([]string{"goal", "create", "ship it", "--check", "test -d ."}, ws...)...); code != 0 {
		t.Fatalf("goal create as the person: %d %s", code, errOut)
	}
	e.forgetApprovals()
	out, code := e.agentShellRun(true, append([]string{"goal", "check", "--approve", "test -d ."}, ws...)...)
	if code != 1 || !strings.Contains(out, "came from Claude Code's shell (CLAUDECODE=1 in pid") {
		t.Errorf("goal check --approve from Claude Code's shell = exit %d %q; want the refusal naming Claude Code", code, out)
	}
	if out, _, _ := e.cli(append([]string{"goal", "status"}, ws...)...); !strings.Contains(out, "waiting for approval") {
		t.Errorf("goal status after the refused approval:\n%s\nwant the check still waiting for approval", out)
	}
	if _, errOut, code := e.cli(append([]string{"goal", "check", "--approve", "test -d ."}, ws...)...); code != 0 {
		t.Errorf("goal check --approve from the person's terminal: %d %s", code, errOut)
	}
}

// forgetApprovals empties the env's one file of approved checks, so that
// the goal's check waits for approval as one a teammate set would
// (docs/runtime.md §2.10.4).
func (e *env) forgetApprovals() {
	e.t.Helper()
	var approvals []string
	err := filepath.WalkDir(e.stateDir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "approved-checks.json" {
			approvals = append(approvals, path)
		}
		return err
	})
	if err != nil || len(approvals) != 1 {
		e.t.Fatalf("approvals files %v, %v; want one", approvals, err)
	}
	if err := os.WriteFile(approvals[0], []byte(`{"checks": []}`), 0o600); err != nil {
		e.t.Fatal(err)
	}
}
