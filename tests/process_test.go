package tests

// End-to-end tests of agentd as an operating-system process
// (docs/reliability.md, "Signals and descriptors"): closed pipes are
// disconnects, not deaths by SIGPIPE; SIGTERM and SIGHUP end it in order;
// inherited descriptors are left as they were found; the auto-started
// daemon holds none of its caller's descriptors; a client processId that
// agentd cannot see is not taken for a dead client.

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
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

// TestInheritedDescriptorsLeftAsFound: agentd (a stdio server, a
// forwarder) given a pipe or a socket as stdin, which the test shares,
// leaves it in blocking mode when it exits: the next reader of the same
// pipe gets no EAGAIN. A pipe stays blocking while agentd runs, too.
func TestInheritedDescriptorsLeftAsFound(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		socket bool
	}{
		{"stdio pipe", nil, false},
		{"forwarder pipe", []string{"--remote=auto"}, false},
		{"stdio socket", nil, true},
		{"forwarder socket", []string{"--remote=auto"}, true}, // the daemon serves it (docs/shared-daemon.md, "Handoff")
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if len(tc.args) > 0 {
				t.Cleanup(e.stopDaemons)
			}
			var fds [2]int // close-on-exec: agentd gets fds[0] as its stdin only
			var err error
			if tc.socket {
				fds, err = syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
			} else {
				err = syscall.Pipe2(fds[:], syscall.O_CLOEXEC)
			}
			if err != nil {
				t.Fatal(err)
			}
			ours := os.NewFile(uintptr(fds[0]), "stdin") // agentd's stdin, shared with the test
			in := os.NewFile(uintptr(fds[1]), "to agentd")
			t.Cleanup(func() { ours.Close(); in.Close() })
			cmd := e.command(tc.args...)
			cmd.Stdin = ours
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr lsptest.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`
			fmt.Fprintf(in, "Content-Length: %d\r\n\r\n%s", len(body), body)
			if _, err := lsptest.ReadFrame(bufio.NewReader(stdout)); err != nil { // agentd reads its stdin now
				t.Fatalf("no answer to initialize: %v; stderr:\n%s", err, stderr.String())
			}
			if !tc.socket && nonblocking(t, fds[0]) {
				t.Errorf("the shared pipe is non-blocking while agentd runs")
			}
			in.Close()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(waitLimit):
				cmd.Process.Kill()
				t.Fatalf("agentd did not exit at the end of its input; stderr:\n%s", stderr.String())
			}
			if nonblocking(t, fds[0]) {
				t.Fatalf("agentd left its stdin (shared with the test) non-blocking; stderr:\n%s", stderr.String())
			}
		})
	}
}

// nonblocking reports whether O_NONBLOCK is set on fd's open file description.
func nonblocking(t *testing.T, fd int) bool {
	t.Helper()
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
	if errno != 0 {
		t.Fatalf("fcntl: %v", errno)
	}
	return flags&syscall.O_NONBLOCK != 0
}

// TestAutoStartedDaemonHoldsNoCallerDescriptor: a forwarder whose stdout,
// stderr and one more descriptor are a pipe its caller reads to the end
// (like `x=$(… | agentd --remote=auto 3>&1)`) starts the daemon without
// passing any of them on: the pipe ends when the forwarder exits, and the
// daemon, in a session of its own, holds /dev/null, daemon.log and its own
// files only.
func TestAutoStartedDaemonHoldsNoCallerDescriptor(t *testing.T) {
	e := newEnv(t)
	t.Cleanup(e.stopDaemons)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(r.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	cmd := e.command("--remote=auto")
	cmd.Stdin = strings.NewReader("")
	cmd.Stdout, cmd.Stderr, cmd.ExtraFiles = w, w, []*os.File{w}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	output := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(r) // until every holder of the write end is gone
		output <- string(b)
	}()
	select {
	case out := <-output:
		if err := cmd.Wait(); err != nil {
			t.Fatalf("forwarder: %v; output %q", err, out)
		}
	case <-time.After(waitLimit):
		t.Fatalf("the caller's pipe did not end within %v of the forwarder's start: the daemon holds it (daemons %v)", waitLimit, e.daemonPids())
	}
	pid := e.oneDaemon()
	pipe := fmt.Sprintf("pipe:[%d]", st.Ino)
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		switch {
		case target == pipe:
			t.Errorf("the daemon holds the caller's pipe as fd %s", fd.Name())
		case fd.Name() == "0" || fd.Name() == "1":
			if target != os.DevNull {
				t.Errorf("the daemon's fd %s is %s, want %s", fd.Name(), target, os.DevNull)
			}
		case fd.Name() == "2":
			if want := filepath.Join(filepath.Dir(e.socketPath()), "daemon.log"); target != want {
				t.Errorf("the daemon's stderr is %s, want %s", target, want)
			}
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name: state, ppid, pgrp, session.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if fields[3] != strconv.Itoa(pid) {
		t.Errorf("the daemon (pid %d) is in session %s, want its own", pid, fields[3])
	}
}

// TestInvisibleProcessIDNotTakenForDead: a client whose processId is no
// process agentd can see when it initializes (another PID namespace) is
// not taken for dead: agentd logs that it does not watch it and serves on.
// The client's end still ends agentd (here: its input closes).
func TestInvisibleProcessIDNotTakenForDead(t *testing.T) {
	const beyondPidMax = 1 << 30 // pid_max is at most 2^22
	for _, tc := range []struct {
		name      string
		args      []string
		pid       int
		namespace bool
	}{
		{"stdio", nil, beyondPidMax, false},
		{"forwarder", []string{"--remote=auto"}, beyondPidMax, false},
		// agentd in a PID namespace of its own, given the test's pid:
		// alive, but not visible from there.
		{"stdio in a pid namespace", nil, os.Getpid(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if len(tc.args) > 0 {
				t.Cleanup(e.stopDaemons)
			}
			cmd := e.command(tc.args...)
			if tc.namespace {
				probe := exec.Command("true")
				probe.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
				if err := probe.Run(); err != nil {
					t.Skipf("cannot start a process in a new PID namespace here: %v", err)
				}
				cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
			}
			p := e.run(cmd)
			c := p.connect()
			if err := c.Call("initialize", map[string]any{"processId": tc.pid, "rootUri": fileURI(e.ws), "capabilities": map[string]any{}}, nil); err != nil {
				t.Fatal(err)
			}
			c.MustNotify("initialized", map[string]any{})
			// The daemon watches the processId of a forwarder's editor,
			// whose pipes it serves (docs/shared-daemon.md, "Handoff"): the
			// line is in its log.
			logged := func() string {
				if len(tc.args) > 0 {
					data, _ := os.ReadFile(filepath.Join(e.runDir, "agentd", "daemon.log"))
					return string(data)
				}
				return p.Stderr.String()
			}
			waitFor(t, "agentd to log that it does not watch the processId", func() bool {
				return strings.Contains(logged(), "not watching it") && strings.Contains(logged(), "processId="+strconv.Itoa(tc.pid))
			})
			c.tool("TodoList", map[string]any{"todos": []item{{"still served", "pending"}}})
			select {
			case <-p.Exited():
				t.Fatalf("agentd exited (%v) although its client lives; stderr:\n%s", p.Cmd.ProcessState, p.Stderr.String())
			default:
			}
			if code := c.shutdown(); code != 0 {
				t.Fatalf("exit code after shutdown and exit: %d", code)
			}
		})
	}
}
