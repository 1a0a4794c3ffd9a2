package tests

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/caller"
)

// tmux is one tmux server of a test, on a socket of its own, with no
// configuration: the panes run agentd as a terminal would.
type tmux struct {
	t    *testing.T
	sock string
	env  []string
}

// newTmux starts nothing yet: the server starts with the first session.
// It skips the test when tmux is not installed.
func newTmux(t *testing.T, e *env) *tmux {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (tests/run.sh installs it): the terminal panel's test needs it")
	}
	// The person's terminal: no agent's marker in the environment the
	// server and its panes start with (docs/runtime.md §7), whatever ran
	// the tests.
	env := slices.DeleteFunc(e.environ(), func(kv string) bool {
		return slices.ContainsFunc(caller.Markers, func(m caller.Marker) bool { return strings.HasPrefix(kv, m.Variable+"=") })
	})
	x := &tmux{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock"), env: append(env, "TERM=xterm-256color", "LANG=C.UTF-8")}
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := x.cmd("list-panes", "-a", "-F", "#{session_name}: dead #{pane_dead} status #{pane_dead_status}").CombinedOutput()
			t.Logf("tmux panes:\n%s", out)
		}
		x.cmd("kill-server").Run()
	})
	return x
}

func (x *tmux) cmd(args ...string) *exec.Cmd {
	cmd := exec.Command("tmux", append([]string{"-u", "-f", "/dev/null", "-S", x.sock}, args...)...)
	cmd.Env = x.env
	return cmd
}

// run runs a tmux command and returns its output.
func (x *tmux) run(args ...string) string {
	x.t.Helper()
	out, err := x.cmd(args...).CombinedOutput()
	if err != nil {
		x.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// open starts a session named name, w×h, running argv; its pane stays when
// argv ends, so that its end can be read.
func (x *tmux) open(name string, w, h int, argv ...string) {
	x.t.Helper()
	args := append([]string{"new-session", "-d", "-s", name, "-x", itoa(w), "-y", itoa(h)}, argv...)
	x.run(append(args, ";", "set-option", "-g", "remain-on-exit", "on")...)
}

func itoa(n int) string { return strconv.Itoa(n) }

// screen is what the pane of session name shows now.
func (x *tmux) screen(name string) string { return x.run("capture-pane", "-p", "-t", name) }

// await polls the pane until cond holds of its screen, and returns it;
// the test fails after limit, showing the screen.
func (x *tmux) await(name, what string, limit time.Duration, cond func(string) bool) string {
	x.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		s := x.screen(name)
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("timed out waiting for %s; the pane %s shows:\n%s", what, name, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// shows waits until the pane shows every one of texts.
func (x *tmux) shows(name string, texts ...string) string {
	x.t.Helper()
	return x.await(name, strings.Join(texts, ", "), waitLimit, func(s string) bool {
		return !slices.ContainsFunc(texts, func(t string) bool { return !strings.Contains(s, t) })
	})
}

// TestWatchInTmux drives `agentd watch` in a real terminal (tmux) against
// a real daemon: the panel shows the goal and its budget; a todo list the
// model writes on another connection appears; p pauses the goal, and an
// editor's connection is told; a panel run from an agent's shell is
// refused the resume, says so, and the goal stays paused; a narrow, short
// terminal gets the compact view within its width; the daemon killed, the
// panel says it is lost, and when a daemon serves the socket again it
// reconnects and shows changes made there; q quits with status 0.
func TestWatchInTmux(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	x := newTmux(t, e)
	sock := filepath.Join(e.runDir, "d.sock")
	d := e.serveAt(sock)
	remote := "--remote=unix:" + sock
	for _, args := range [][]string{{"goal", "create", "Ship the parser"}, {"goal", "budget", "20", "turns"}} {
		if _, stderr, code := e.cli(append(args, "--workspace", e.ws, remote)...); code != 0 {
			t.Fatalf("agentd %v: exit %d: %s", args, code, stderr)
		}
	}
	watch := []string{e.bin, "watch", "--workspace", e.ws, "--state-dir", e.stateDir, remote}
	// The shell above it says how it ended: tmux records a pane's exit
	// status only once it has reaped the process, which a loaded machine
	// may delay past the pane's end.
	x.open("person", 100, 30, append([]string{"sh", "-c", `"$@"; echo "agentd watch exited $?"`, "sh"}, watch...)...)
	x.shows("person", "Goal  active", "Ship the parser", "Turns      0/20 (20 left)", "p pause")

	editor := connectSocket(t, sock)
	editor.Initialize(nil, e.ws)
	model := connectSocket(t, sock)
	model.Initialize(nil, e.ws)
	model.writeIn(e.ws, "parse comments")
	x.shows("person", "[ ] parse comments", "model   todo.write")

	x.run("send-keys", "-t", "person", "p")
	x.shows("person", "Goal  paused", "Paused", "user    goal.pause")
	editor.Await("agentd/goalChanged", func(raw json.RawMessage) bool {
		var n struct{ Goal *struct{ Status string } }
		return json.Unmarshal(raw, &n) == nil && n.Goal != nil && n.Goal.Status == "paused"
	})

	x.open("agent", 100, 30, append([]string{"env", "CLAUDECODE=1"}, watch...)...)
	x.shows("agent", "Goal  paused")
	x.run("send-keys", "-t", "agent", "r")
	x.shows("agent", "agentd.goal.resume was refused: it came from Claude Code's shell")
	if out, _, _ := e.cli("state", "--workspace", e.ws, remote); !strings.Contains(out, "Goal (paused)") {
		t.Errorf("after the agent's shell pressed r, the goal is not paused:\n%s", out)
	}

	x.run("resize-window", "-t", "person", "-x", "40", "-y", "14")
	small := x.shows("person", "Goal  paused  Ship the parser", "0/20 turns")
	if lines := strings.Split(strings.TrimRight(small, "\n"), "\n"); len(lines) > 14 || slices.ContainsFunc(lines, func(l string) bool { return len([]rune(l)) > 40 }) {
		t.Errorf("the panel does not fit 40×14:\n%s", small)
	}
	x.run("resize-window", "-t", "person", "-x", "100", "-y", "30")
	x.shows("person", "Objective  Ship the parser")

	d.Cmd.Process.Kill()
	d.waitExit()
	x.shows("person", "Lost the agentd daemon", "Goal  paused")
	e.serveAt(sock)
	again := connectSocket(t, sock)
	again.Initialize(nil, e.ws)
	var res toolResult // the goal requires its items: the list keeps the open one
	again.MustExec("agentd.callTool", map[string]any{"name": "TodoList", "workspace": e.ws,
		"input": map[string]any{"todos": []item{{"parse comments", "pending"}, {"after the restart", "pending"}}}}, &res)
	if res.IsError {
		t.Fatalf("TodoList on the new daemon: %+v", res)
	}
	x.await("person", "the panel back on the new daemon", 2*waitLimit, func(s string) bool {
		return strings.Contains(s, "[ ] after the restart") && !strings.Contains(s, "Lost")
	})

	x.run("send-keys", "-t", "person", "q")
	x.shows("person", "agentd watch exited 0")
}

// TestWatchNeedsATerminal: without a terminal on stdout, agentd watch
// refuses (exit 2, saying what to use instead); --once prints the panel
// once, plain, and exits 0.
func TestWatchNeedsATerminal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.stopDaemonsAtEnd()
	if _, stderr, code := e.cli("goal", "create", "Ship the parser", "--workspace", e.ws); code != 0 {
		t.Fatalf("goal create: exit %d: %s", code, stderr)
	}
	out, stderr, code := e.cli("watch", "--workspace", e.ws)
	if code != 2 || out != "" || !strings.Contains(stderr, "stdout is not a terminal") || !strings.Contains(stderr, "--once") {
		t.Errorf("agentd watch on a pipe: exit %d, stdout %q, stderr %q; want exit 2 and the refusal", code, out, stderr)
	}
	out, stderr, code = e.cli("watch", "--once", "--workspace", e.ws)
	if code != 0 || !strings.Contains(out, "Goal  active") || !strings.Contains(out, "Objective  Ship the parser") || strings.Contains(out, "\x1b") {
		t.Errorf("agentd watch --once: exit %d, stderr %q, stdout:\n%s", code, stderr, out)
	}
}
