//go:build unix

package tests

import (
	"os/exec"
	"strings"
	"testing"
)

// TestAgentShellDetachedOrElsewhere: the model's shell tries the person's
// commands on a goal the person paused with a budget (resume it, raise the
// budget, wait with the wall clock stopped, cancel it) from a process that
// left the agent's tree (a double fork: its parent is gone, so nothing
// above it is the agent's, but it keeps the environment the agent gave
// it), and from another working directory naming the folder. Each is
// refused as the agent's shell (docs/runtime.md §7), through the shared
// daemon and on the state opened directly, and the goal stays as the
// person left it. What is not defended is a process that also clears the
// marker (docs/security.md, "What is not defended").
func TestAgentShellDetachedOrElsewhere(t *testing.T) {
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
			for _, args := range [][]string{{"goal", "create", "ship it"}, {"goal", "budget", "3 turns"}, {"goal", "pause", "--reason", "lunch"}} {
				if _, errOut, code := e.cli(append(args, ws...)...); code != 0 {
					t.Fatalf("%v as the person: %d %s", args, code, errOut)
				}
			}
			elsewhere := t.TempDir()
			for _, args := range [][]string{
				{"goal", "resume"},
				{"goal", "budget", "100 turns"},
				{"goal", "wait", "--for", "1h", "--wall-clock", "stops"},
				{"goal", "cancel"},
			} {
				for _, how := range []string{"detached", "elsewhere"} {
					cmd := e.command(append(args, ws...)...)
					if how == "detached" {
						// The subshell outlives the shell that started it, so
						// its parent is gone; its output pipe is this test's
						// until it ends.
						cmd = exec.Command("/bin/sh", append([]string{"-c", `( "$0" "$@"; echo "exit $?" ) & exit 0`}, cmd.Args...)...)
						cmd.Env = e.environ()
					}
					cmd.Env = append(cmd.Env, "CLAUDECODE=1")
					cmd.Dir = e.ws
					if how == "elsewhere" {
						cmd.Dir = elsewhere
					}
					out, _ := cmd.CombinedOutput()
					if !strings.Contains(string(out), "came from Claude Code's shell (CLAUDECODE=1 in pid") ||
						(how == "detached" && !strings.Contains(string(out), "exit 1")) {
						t.Errorf("%v from the agent's shell, %s: %q; want the refusal naming Claude Code", args, how, out)
					}
				}
			}
			out, _, code := e.cli(append([]string{"goal", "status"}, ws...)...)
			if code != 0 || !strings.Contains(out, "Goal (paused): ship it") || !strings.Contains(out, "/3 turns") {
				t.Errorf("the goal after the shell's attempts: exit %d %q; want it paused with its budget of 3 turns", code, out)
			}
		})
	}
}
