package tests

// End-to-end tests of agentd as an operating-system process
// (docs/reliability.md, "Signals and descriptors"): closed pipes are
// disconnects, not deaths by SIGPIPE; SIGTERM and SIGHUP end it in order;
// inherited descriptors are left as they were found; the auto-started
// daemon holds none of its caller's descriptors; a client processId that
// agentd cannot see is not taken for a dead client.

import (
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/tests/lsptest"
)

// liveGoalTurn creates a goal and leaves a goal-driven turn open in the
// middle of a step.
func liveGoalTurn(t *testing.T, x *client) {
	t.Helper()
	x.MustExec("agentd.goal.create", map[string]any{"objective": "interrupted"}, nil)
	var begun struct{ GoalDriven bool }
	x.MustExec("agentd.turn.begin", map[string]any{"turnId": "t1", "origin": "user"}, &begun)
	if !begun.GoalDriven {
		t.Fatal("the turn is not goal-driven")
	}
	x.MustExec("agentd.step.begin", map[string]any{"turnId": "t1"}, nil)
}

// wantPausedByDisconnect opens the env's workspace with a new client (a
// stdio server or a forwarder, as the env starts them) and checks that the
// goal was paused as on a disconnect.
func wantPausedByDisconnect(t *testing.T, e *env) {
	t.Helper()
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	if g := c.goal(); g == nil || g.Status != "paused" || !strings.Contains(g.TerminalReason, "connection") {
		t.Fatalf("goal after the end mid-turn: %+v, want paused because the connection closed", g)
	}
}

// wantExit waits for p and checks that it exited with code, not by a signal.
func wantExit(t *testing.T, p *proc, code int) {
	t.Helper()
	if got := p.waitExit(); got != code {
		t.Fatalf("agentd ended with %v, want exit status %d; stderr:\n%s", p.Cmd.ProcessState, code, p.Stderr.String())
	}
}

// TestClosedStdoutIsDisconnect: a client that closes agentd's stdout in the
// middle of a goal-driven turn, then sends a request, makes agentd (a stdio
// server, a forwarder) end as on a disconnect: exit status 1, not a death
// by SIGPIPE, and the goal paused for the disconnect.
func TestClosedStdoutIsDisconnect(t *testing.T) {
	t.Parallel()
	for _, remote := range []bool{false, true} {
		t.Run(map[bool]string{false: "stdio", true: "forwarder"}[remote], func(t *testing.T) {
			e := newEnv(t)
			if remote {
				e.useDaemon()
			}
			p := e.start()
			c := p.connect()
			c.InitializeRoot(e.ws, nil)
			liveGoalTurn(t, c)
			p.Stdout.Close()
			c.SendBody(`{"jsonrpc":"2.0","id":"unread","method":"workspace/executeCommand","params":{"command":"agentd.state"}}`)
			wantExit(t, p, 1)
			wantPausedByDisconnect(t, e)
		})
	}
}

// TestLogPipeClosedOrFullUnderDaemon: the shared daemon's stderr is a pipe
// whose reader is gone (writes fail with EPIPE) or that nobody reads (writes
// would block once it is full): the daemon logs on (at debug level, a line
// per connection and more) and serves every client, and SIGTERM still ends
// it in order.
func TestLogPipeClosedOrFullUnderDaemon(t *testing.T) {
	t.Parallel()
	for _, full := range []bool{false, true} {
		t.Run(map[bool]string{false: "closed", true: "full"}[full], func(t *testing.T) {
			e := newEnv(t)
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			if full {
				t.Cleanup(func() { r.Close() })
			} else {
				r.Close()
			}
			cmd := e.command("serve", "--listen=unix:"+e.socketPath(), "--listen.timeout=0", "--log-level", "debug")
			cmd.Stderr = w
			d := e.run(cmd)
			w.Close()
			waitFor(t, "the daemon to answer", func() bool {
				c, err := net.Dial("unix", e.socketPath())
				if err == nil {
					c.Close()
				}
				return err == nil
			})
			a := dialSocket(t, e.socketPath(), lsptest.Options{Name: "a"})
			a.InitializeRoot(e.ws, nil)
			served := make(chan error, 1)
			go func() { // a stalled daemon would block these writes too
				if full {
					// Responses with unknown 100 KB ids: each is logged
					// with its id, well beyond what a pipe holds (64 KiB).
					id := strconv.Quote(strings.Repeat("x", 100<<10))
					for range 4 {
						a.SendBody(`{"jsonrpc":"2.0","id":` + id + `,"result":null}`)
					}
				}
				served <- a.Exec("agentd.callTool", map[string]any{"name": "TodoList", "input": map[string]any{"todos": []item{{"logged on", "pending"}}}}, nil)
			}()
			select {
			case err := <-served:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(waitLimit):
				t.Fatalf("the daemon stopped serving within %v: its log pipe stalls it", waitLimit)
			}
			b := dialSocket(t, e.socketPath(), lsptest.Options{Name: "b"})
			b.InitializeRoot(e.ws, nil)
			if st := b.stateIn(""); len(st.Todos.Items) != 1 || st.Todos.Items[0].Title != "logged on" {
				t.Fatalf("second client reads %+v", st.Todos)
			}
			d.Cmd.Process.Signal(syscall.SIGTERM)
			wantExit(t, d, 0)
		})
	}
}

// TestSignalsEndInOrder: SIGTERM and SIGHUP in the middle of a goal-driven
// turn end a stdio server (exit 1, no shutdown came), a forwarder (exit 1;
// the daemon serves on) and the shared daemon (exit 0; its forwarders exit
// 1 saying they lost it) in order: the goal is paused as on a disconnect,
// not left to the restart rule.
func TestSignalsEndInOrder(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String()+"/stdio", func(t *testing.T) {
			e := newEnv(t)
			p := e.start()
			c := p.connect()
			c.Initialize(nil, e.ws)
			liveGoalTurn(t, c)
			p.Cmd.Process.Signal(sig)
			wantExit(t, p, 1)
			wantPausedByDisconnect(t, e)
		})
		t.Run(sig.String()+"/forwarder", func(t *testing.T) {
			e := newEnv(t)
			e.useDaemon()
			p := e.start()
			c := p.connect()
			c.Initialize(nil, e.ws)
			liveGoalTurn(t, c)
			daemon := e.oneDaemon()
			p.Cmd.Process.Signal(sig)
			wantExit(t, p, 1)
			wantPausedByDisconnect(t, e)
			if pid := e.oneDaemon(); pid != daemon {
				t.Fatalf("the daemon changed from pid %d to %d: a forwarder's signal must end the forwarder only", daemon, pid)
			}
		})
		t.Run(sig.String()+"/daemon", func(t *testing.T) {
			e := newEnv(t)
			e.useDaemon()
			d := e.start("serve", "--listen=unix:"+e.socketPath(), "--listen.timeout=0")
			waitFor(t, "the daemon to answer", func() bool { return len(e.daemonPids()) == 1 && answersAt(e.socketPath()) })
			p := e.start()
			c := p.connect()
			c.Initialize(nil, e.ws)
			liveGoalTurn(t, c)
			d.Cmd.Process.Signal(sig)
			wantExit(t, d, 0)
			wantExit(t, p, 1)
			if !strings.Contains(p.Stderr.String(), "lost the shared daemon") {
				t.Errorf("forwarder stderr %q does not say it lost the daemon", p.Stderr.String())
			}
			wantPausedByDisconnect(t, e)
		})
	}
}

// answersAt reports whether something accepts connections on socket.
func answersAt(socket string) bool {
	c, err := net.Dial("unix", socket)
	if err == nil {
		c.Close()
	}
	return err == nil
}
