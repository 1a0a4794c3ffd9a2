package tests

// `agentd run` whose daemon goes away (docs/commands.md, "Running a goal
// unattended"): the run connects again (the shared daemon started anew on
// demand), reads the goal again and goes on, while the agent runs and while
// the goal is paused; a daemon that cannot be reached again ends the run
// after a bounded number of tries. TestRealClaudeCodeRunDaemonLost is
// skipped unless AGENTD_AGENTS is set (tests/agents/ci.sh); the others
// need no agent.

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// killDaemon kills the env's one daemon (SIGKILL, as a crash) and waits
// until it is gone; it returns its pid.
func killDaemon(t *testing.T, a *agentEnv) int {
	t.Helper()
	pid := a.oneDaemon()
	if err := kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !waitGone(pid, waitLimit) {
		t.Fatalf("daemon %d did not die", pid)
	}
	return pid
}

// awaitReconnect waits for the run's lines saying it lost its daemon and
// reached one again, and fails the test unless a new daemon serves the
// folder.
func awaitReconnect(t *testing.T, a *agentEnv, p *runProc, killed int) {
	t.Helper()
	p.awaitLine("the agentd daemon went away: connecting again")
	p.awaitLine("connected to the agentd daemon again: reading the goal again")
	if pid := a.oneDaemon(); pid == killed {
		t.Fatalf("the killed daemon %d still serves", pid)
	}
}

// personSays runs the person's `agentd goal ARGS` in the folder.
func personSays(t *testing.T, a *agentEnv, args ...string) {
	t.Helper()
	if out, errOut, code := a.cli(append(append([]string{"goal"}, args...), "--workspace", a.ws)...); code != 0 {
		t.Fatalf("agentd goal %v: %s%s", args, out, errOut)
	}
}

// TestRunReconnectsWhilePaused: the daemon of a run that waits on a
// paused goal is killed; the run starts a new one, reads the goal again
// and waits on; the person's cancel through the new daemon ends the run
// as a cancel does (exit 1), with no agent started.
func TestRunReconnectsWhilePaused(t *testing.T) {
	a := newAgentEnv(t)
	a.stopDaemonsAtEnd()
	personGoal(t, a)
	personSays(t, a, "pause", "--reason", "lunch")
	p := startRun(t, a, a.environ())
	p.awaitLine("waiting: the goal is paused (lunch)")
	awaitReconnect(t, a, p, killDaemon(t, a))
	personSays(t, a, "cancel")
	if code, last := p.wait(); code != 1 || last != "cancelled: the goal was cancelled" {
		t.Fatalf("agentd run exited %d with %q, want 1 and the cancel:\n%s\n%s", code, last, p.output(), p.stderr.String())
	}
	if strings.Contains(p.output(), "starting claude") {
		t.Errorf("agentd run started the agent on a paused goal:\n%s", p.output())
	}
}

// TestRunGivesUpOnLostDaemon: a run on a daemon named with
// --remote=unix:PATH (which no command starts) whose daemon is killed
// tries to connect again 5 times and then ends with a line saying so,
// exit 4.
func TestRunGivesUpOnLostDaemon(t *testing.T) {
	a := newAgentEnv(t)
	personGoal(t, a)
	personSays(t, a, "pause", "--reason", "lunch")
	sock := filepath.Join(a.runDir, "named.sock")
	d := a.serveAt(sock)
	remote := "--remote=unix:" + sock
	p := startRunArgs(t, a, a.environ(), "claude", "--workspace", a.ws, "--state-dir", a.stateDir, remote)
	p.awaitLine("waiting: the goal is paused (lunch)")
	if err := kill(d.Cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.awaitLine("the agentd daemon went away: connecting again")
	code, last := p.wait()
	if code != 4 || !strings.HasPrefix(last, "stopped: the agentd daemon is gone: 5 tries to connect again failed, the last: ") {
		t.Fatalf("agentd run exited %d with %q, want 4 and the tries:\n%s\n%s", code, last, p.output(), p.stderr.String())
	}
}

// TestRealClaudeCodeRunDaemonLost: the daemon is killed while Claude Code
// waits on the model, in the middle of a turn: the run connects again and
// watches the same process (no second one starts); the person's pause ends
// that process after its turn, and the daemon is killed again while the
// run waits on the paused goal; the run connects again, the person's
// resume starts the next process on the same session, and the goal
// completes: exit 0, one process started and one resumed, every model
// call answered once.
func TestRealClaudeCodeRunDaemonLost(t *testing.T) {
	a := newAgentEnv(t)
	model, release := halfwayModel(t)
	_, env := claudeForRun(t, a, model)
	personGoal(t, a)
	p := startRun(t, a, env)
	started := p.awaitLine("starting claude (session ")
	p.awaitLine("now: write the parser")
	awaitReconnect(t, a, p, killDaemon(t, a))
	personSays(t, a, "pause", "--reason", "lunch")
	release()
	p.awaitLine("waiting: the goal is paused (lunch)")
	if n := len(model.calls()); n != 2 {
		t.Fatalf("%d model calls when the run waits, want 2", n)
	}
	awaitReconnect(t, a, p, killDaemon(t, a))
	personSays(t, a, "resume")
	resumed := p.awaitLine("resuming claude (session ")
	p.waitComplete()
	sameSession(t, "claude", started, resumed)
	if n := p.count("starting claude ("); n != 1 {
		t.Errorf("%d processes started, want 1:\n%s", n, p.output())
	}
	if n := len(model.calls()); n != 5 {
		t.Errorf("%d model calls, want 5", n)
	}
	goalComplete(t, a.editorFirst())
}
