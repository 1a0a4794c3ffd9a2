package tests

import (
	"encoding/json"
	"strings"
	"testing"
)

// End-to-end tests of the restart rule (docs/runtime.md §2.3.2): a goal is
// paused when a serving process opens its folder only if a turn an agent
// was driving it with was live when the previous agentd process ended.

// restartReason is the terminal reason the restart rule gives.
const restartReason = "paused because the agentd process that ran the agent's turn ended before the turn did"

// historyKinds returns the kinds of the session's newest events, newest first.
func (c *client) historyKinds() []string {
	c.T.Helper()
	var h struct{ Events []struct{ Kind string } }
	c.MustExec("agentd.history", map[string]any{"limit": 50}, &h)
	var kinds []string
	for _, ev := range h.Events {
		kinds = append(kinds, ev.Kind)
	}
	return kinds
}

func count(kinds []string, kind string) int {
	n := 0
	for _, k := range kinds {
		if k == kind {
			n++
		}
	}
	return n
}

// shellGoal is `agentd goal status --json` run from a shell.
func (e *env) shellGoal() goalSnap {
	e.t.Helper()
	out, errOut, code := e.cli("goal", "status", "--json", "--workspace", e.ws)
	var g goalSnap
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		e.t.Fatalf("goal status --json: exit %d, %q %q: %v", code, out, errOut, err)
	}
	return g
}

// TestShellGoalThenEditorDaemon: a goal created from a shell while no agentd
// runs stays active when an editor then starts `agentd --remote=auto`: the
// new daemon finds no turn that was live, so nothing is paused, and the
// shell reads the same goal through the daemon afterwards.
func TestShellGoalThenEditorDaemon(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, errOut, code := e.cli("goal", "create", "write the docs", "--workspace", e.ws); code != 0 {
		t.Fatalf("goal create: %d %s", code, errOut)
	}
	if _, errOut, code := e.cli("goal", "budget", "2", "hours", "--workspace", e.ws); code != 0 {
		t.Fatalf("goal budget: %d %s", code, errOut)
	}
	_, c := e.forwarder()
	c.Initialize(nil, e.ws)
	if g := c.goal(); g == nil || g.Status != "active" || g.TerminalReason != "" || g.LastActor != "user" {
		t.Fatalf("goal in the editor: %+v, want active as the shell left it", g)
	}
	if _, _, code := e.cli("goal", "status", "--exit-code", "--workspace", e.ws); code != 2 {
		t.Fatalf("goal status through the daemon: exit %d, want 2 (active)", code)
	}
	if kinds := c.historyKinds(); count(kinds, "goal.pause") != 0 {
		t.Fatalf("history %v has a pause", kinds)
	}
	if n := c.NotesOf("agentd/goalChanged"); len(n) != 0 {
		t.Fatalf("goal notifications at open: %s", n)
	}
}

// TestRestartRuleKilledMidTurn: a stdio server killed (SIGKILL) in the
// middle of a goal-driven turn leaves the turn live in the store. One-shot
// shell commands, reads and writes, never apply the restart rule: the goal
// stays active. The next serving process, a stdio server or the shared
// daemon, pauses it when it opens the folder, with a reason that says what
// happened, and the client whose initialize opened the folder gets the
// agentd/goalChanged after initialized.
func TestRestartRuleKilledMidTurn(t *testing.T) {
	t.Parallel()
	for _, next := range []string{"stdio", "daemon"} {
		t.Run(next, func(t *testing.T) {
			e := newEnv(t)
			p := e.start()
			a := p.connect()
			a.Initialize(nil, e.ws)
			a.MustExec("agentd.goal.create", map[string]any{"objective": "interrupted work"}, nil)
			h := newHost(a)
			turn, driven := h.beginTurn("user")
			if !driven {
				t.Fatal("turn is not goal-driven")
			}
			h.beginStep(turn)
			h.endStep(turn, 100, "tool_calls")
			h.beginStep(turn)
			p.Cmd.Process.Kill()
			p.waitExit()

			for _, args := range [][]string{{"goal", "status"}, {"state"}, {"tool", "GetGoal"}, {"goal", "budget", "5000", "tokens"}} {
				if _, errOut, code := e.cli(append(args, "--workspace", e.ws)...); code != 0 {
					t.Fatalf("agentd %v: exit %d %s", args, code, errOut)
				}
			}
			if g := e.shellGoal(); g.Status != "active" || g.TurnsUsed != 1 || g.TokensUsed != 100 {
				t.Fatalf("after one-shot commands: %+v, want still active with its usage", g)
			}

			var c *client
			if next == "daemon" {
				_, c = e.forwarder()
			} else {
				c = e.start().connect()
			}
			c.Initialize(nil, e.ws)
			gc := c.awaitGoal("pause")
			if gc.Change.Reason != restartReason || gc.Change.Actor != "runtime" || gc.Change.Status != "paused" || gc.Goal == nil || gc.Goal.TerminalReason != restartReason {
				t.Fatalf("pause notification = %+v", gc)
			}
			g := c.goal()
			if g.Status != "paused" || g.TerminalReason != restartReason || g.LastActor != "runtime" || g.TurnsUsed != 1 || g.TokensUsed != 100 {
				t.Fatalf("goal after the restart: %+v", g)
			}
			if kinds := c.historyKinds(); kinds[0] != "goal.pause" || count(kinds, "goal.pause") != 1 {
				t.Fatalf("history %v, want one pause, the newest event", kinds)
			}
			// The dead process's turn is over: a late end is refused as a
			// call on a turn agentd ended (docs/runtime.md §2.4.6) and
			// changes nothing; a new turn of the resumed goal is driven.
			h.reconnect(c) // the same host, its turn numbering goes on
			h.endEndedTurn(turn)
			c.MustExec("agentd.goal.resume", nil, nil)
			if _, driven := h.beginTurn("user"); !driven {
				t.Fatal("turn after resume is not goal-driven")
			}
		})
	}
}

// TestRestartLeavesDetachedTurnLive: a turn begun with detached (what
// agentd hook does) belongs to the agent, not to an agentd process: killed
// in the middle of it, the next agentd leaves the goal active and the turn
// live, and the agent's next step and turn end count on it.
func TestRestartLeavesDetachedTurnLive(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.start()
	a := p.connect()
	a.Initialize(nil, e.ws)
	a.MustExec("agentd.goal.create", map[string]any{"objective": "hook-driven work"}, nil)
	var begun struct{ GoalDriven bool }
	a.MustExec("agentd.turn.begin", map[string]any{"turnId": "hooked", "origin": "user", "detached": true}, &begun)
	if !begun.GoalDriven {
		t.Fatal("turn is not goal-driven")
	}
	h := newHost(a)
	h.beginStep("hooked")
	h.endStep("hooked", 100, "tool_calls")
	p.Cmd.Process.Kill()
	p.waitExit()

	c := e.start().connect()
	c.Initialize(nil, e.ws)
	if g := c.goal(); g.Status != "active" || g.TurnsUsed != 1 || g.TokensUsed != 100 {
		t.Fatalf("goal after the restart: %+v, want active with its usage", g)
	}
	h = newHost(c)
	h.beginStep("hooked")
	h.endStep("hooked", 20, "stop")
	h.endTurn("hooked", "completed")
	if g := c.goal(); g.Status != "active" || g.TurnsUsed != 1 || g.TokensUsed != 120 {
		t.Fatalf("goal after the turn ended: %+v, want 1 turn and 120 tokens", g)
	}
	if kinds := c.historyKinds(); count(kinds, "goal.pause") != 0 {
		t.Fatalf("history %v has a pause", kinds)
	}
}

// TestRestartAfterDisconnectMidTurn: a stdio server whose client closes its
// pipe in the middle of a goal-driven turn pauses the goal itself, as on any
// disconnect; the turn is ended then, so the next process finds no live
// turn and leaves the goal and its reason as they are.
func TestRestartAfterDisconnectMidTurn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.start()
	a := p.connect()
	a.Initialize(nil, e.ws)
	a.MustExec("agentd.goal.create", map[string]any{"objective": "interrupted"}, nil)
	h := newHost(a)
	turn, _ := h.beginTurn("user")
	h.beginStep(turn)
	p.Stdin.Close()
	p.waitExit()

	c := e.start().connect()
	c.Initialize(nil, e.ws)
	g := c.goal()
	if g.Status != "paused" || !strings.Contains(g.TerminalReason, "connection") {
		t.Fatalf("after a disconnect mid-turn: %+v, want paused because the connection closed", g)
	}
	if kinds := c.historyKinds(); count(kinds, "goal.pause") != 1 {
		t.Fatalf("history %v, want the disconnect's pause only", kinds)
	}
	if n := c.NotesOf("agentd/goalChanged"); len(n) != 0 {
		t.Fatalf("goal notifications at open: %s", n)
	}
}

// TestRestartCarriesWallClockBudget: an active goal carried over to the
// next serving process keeps its wall-clock budget running there: the new
// process arms the budget's timer when it opens the folder, and blocks the
// goal when the budget is spent, telling the client.
func TestRestartCarriesWallClockBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "quick"}, nil)
	c.MustExec("agentd.goal.setBudget", map[string]any{"wallClockMs": 1500}, nil)
	c.shutdown()

	c2 := e.start().connect()
	c2.Initialize(nil, e.ws)
	if g := c2.goal(); g.Status != "active" {
		t.Fatalf("after the restart: %+v, want active", g)
	}
	gc := c2.awaitGoal("block")
	if gc.Goal == nil || gc.Goal.Status != "blocked" || !strings.Contains(gc.Change.Reason, "wall-clock budget") {
		t.Fatalf("block notification = %+v", gc)
	}
}

// TestRestartShellGoalAfterKill: a stdio server killed in the middle of a
// turn leaves that turn live, and a goal then created (or resumed) from a
// shell has no turn driving it: the turn's process is gone, so it is no
// starter of the new goal. The next serving process ends the dead turn and
// leaves the goal active as the shell made it.
func TestRestartShellGoalAfterKill(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		shell     [][]string
		objective string
		pauses    int // pauses in the history: the shell's own
	}{
		{"replace", [][]string{{"goal", "create", "G2", "--replace"}}, "G2", 0},
		{"cancel and create", [][]string{{"goal", "cancel"}, {"goal", "create", "G2"}}, "G2", 0},
		{"pause and resume", [][]string{{"goal", "pause"}, {"goal", "resume"}}, "G1", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			p := e.start()
			a := p.connect()
			a.Initialize(nil, e.ws)
			a.MustExec("agentd.goal.create", map[string]any{"objective": "G1"}, nil)
			a.MustExec("agentd.turn.begin", map[string]any{"turnId": "t1", "origin": "user"}, nil)
			p.Cmd.Process.Kill()
			p.waitExit()

			for _, args := range tc.shell {
				if _, errOut, code := e.cli(append(args, "--workspace", e.ws)...); code != 0 {
					t.Fatalf("agentd %v: exit %d %s", args, code, errOut)
				}
			}
			c := e.start().connect()
			c.Initialize(nil, e.ws)
			if g := c.goal(); g == nil || g.Status != "active" || g.Objective != tc.objective || g.TerminalReason != "" {
				t.Fatalf("goal after the restart: %+v, want %s active as the shell left it", g, tc.objective)
			}
			if kinds := c.historyKinds(); count(kinds, "goal.pause") != tc.pauses {
				t.Fatalf("history %v, want %d pauses", kinds, tc.pauses)
			}
			// The dead turn is over: a new turn is the one the goal counts.
			h := newHost(c)
			if _, driven := h.beginTurn("user"); !driven {
				t.Fatal("a new turn is not goal-driven")
			}
		})
	}
}

// TestRestartDaemonReopenEndsLeftTurn: the shared daemon applies the
// restart rule at every open of a folder, not only the first: a private
// stdio server that used the folder while the daemon had released it and
// was killed mid-turn leaves a turn the daemon ends when a forwarder opens
// the folder again, pausing the goal that turn drove. A clean daemon stop
// between turns later pauses nothing.
func TestRestartDaemonReopenEndsLeftTurn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, a := e.forwarder()
	a.Initialize(nil, e.ws)
	a.MustExec("agentd.goal.create", map[string]any{"objective": "shared work"}, nil)
	pid := e.oneDaemon()
	a.shutdown()

	p := e.start()
	b := p.connect()
	b.Initialize(nil, e.ws)
	var begun struct{ GoalDriven bool }
	waitFor(t, "the daemon to release the folder", func() bool {
		return b.Exec("agentd.turn.begin", map[string]any{"turnId": "dead", "origin": "user"}, &begun) == nil
	})
	if !begun.GoalDriven {
		t.Fatal("turn is not goal-driven")
	}
	p.Cmd.Process.Kill()
	p.waitExit()

	_, c := e.forwarder()
	c.Initialize(nil, e.ws)
	if got := e.oneDaemon(); got != pid {
		t.Fatalf("daemon %d serves the reopen, want the first one, %d", got, pid)
	}
	if g := c.goal(); g.Status != "paused" || g.TerminalReason != restartReason || g.LastActor != "runtime" {
		t.Fatalf("goal after the daemon reopened the folder: %+v, want paused by the restart rule", g)
	}
	if gc := c.awaitGoal("pause"); gc.Change.Reason != restartReason {
		t.Fatalf("pause notification = %+v", gc)
	}

	// Resumed, then a turn ends and the daemon stops cleanly between turns:
	// its next start finds no live turn and leaves the goal active.
	c.MustExec("agentd.goal.resume", nil, nil)
	h := newHost(c)
	turn, _ := h.beginTurn("user")
	h.endTurn(turn, "completed")
	c.shutdown()
	e.stopDaemons()
	_, d := e.forwarder()
	d.Initialize(nil, e.ws)
	if g := d.goal(); g.Status != "active" || g.TerminalReason != "" {
		t.Fatalf("goal after a clean daemon restart: %+v, want active", g)
	}
	if kinds := d.historyKinds(); count(kinds, "goal.pause") != 1 {
		t.Fatalf("history %v, want the one pause of the reopen", kinds)
	}
}
