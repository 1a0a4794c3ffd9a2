package tests

// End-to-end tests of the handoff (docs/shared-daemon.md, "Handoff"): a
// forwarder whose stdin and stdout are pipes hands them to the shared
// daemon, which serves the editor on them itself; on a regular file it
// relays as before. The endings (exit codes, signals, a closed stdout, the
// processId, a killed daemon, the upgrade handover) are those of the
// forwarder tests, which run through the handoff since lsptest starts
// agentd on pipes: TestForwarded, TestClosedStdoutIsDisconnect,
// TestSignalsEndInOrder, TestDaemonKilled, TestDaemonUpgrade.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentd/agentd/tests/lsptest"
)

// fdTarget is what descriptor fd of process pid names ("pipe:[123]").
func fdTarget(t testing.TB, pid, fd int) string {
	t.Helper()
	target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, fd))
	if err != nil {
		t.Fatal(err)
	}
	return target
}

// holds reports whether process pid has a descriptor on target.
func holds(pid int, target string) bool {
	entries, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, e := range entries {
		if got, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name())); err == nil && got == target {
			return true
		}
	}
	return false
}

// TestHandoffServesEditorPipes: the daemon holds the editor's own pipes
// (the forwarder's stdin and stdout) and serves the session on them:
// answers, and the notification of a change made from the shell. At the
// end of the editor's input the forwarder exits 0 and the daemon holds
// neither pipe any more.
func TestHandoffServesEditorPipes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p, a := e.forwarder()
	a.Initialize(nil, e.ws)
	daemon := e.oneDaemon()
	fwd := p.Cmd.Process.Pid
	stdin, stdout := fdTarget(t, fwd, 0), fdTarget(t, fwd, 1)
	if !strings.HasPrefix(stdin, "pipe:") || !strings.HasPrefix(stdout, "pipe:") {
		t.Fatalf("the forwarder's stdin and stdout are %s and %s, want pipes", stdin, stdout)
	}
	if !holds(daemon, stdin) || !holds(daemon, stdout) {
		t.Fatalf("the daemon (pid %d) holds no descriptor on the forwarder's stdin %s or stdout %s: it does not serve them", daemon, stdin, stdout)
	}
	if _, errOut, code := e.cli("tool", "TodoList", `{"todos":[{"title":"from the shell","status":"in_progress"}]}`, "--workspace", e.ws); code != 0 {
		t.Fatalf("agentd tool: exit %d: %s", code, errOut)
	}
	a.awaitTodo(e.ws, "from the shell")
	p.Stdin.Close()
	wantExit(t, p, 0)
	waitFor(t, "the daemon to close the editor's pipes", func() bool { return !holds(daemon, stdin) && !holds(daemon, stdout) })
	if pid := e.oneDaemon(); pid != daemon {
		t.Fatalf("the daemon changed from pid %d to %d", daemon, pid)
	}
}

// TestHandoffRelaysToRegularFile: a forwarder whose stdout is a regular
// file relays as before: the daemon never holds its stdin, the answers
// are in the file, and it exits 0 after shutdown and exit.
func TestHandoffRelaysToRegularFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.stopDaemonsAtEnd()
	outPath := filepath.Join(t.TempDir(), "out")
	out, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := e.command("--remote=auto")
	cmd.Stdout = out
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lsptest.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	send := func(body string) { fmt.Fprintf(in, "Content-Length: %d\r\n\r\n%s", len(body), body) }
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`)
	answered := func(id string) bool {
		data, _ := os.ReadFile(outPath)
		return strings.Contains(string(data), `"id":`+id+`,"result"`)
	}
	waitFor(t, "the answer to initialize in the file", func() bool { return answered("1") })
	stdin := fdTarget(t, cmd.Process.Pid, 0)
	if daemon := e.oneDaemon(); holds(daemon, stdin) {
		t.Fatalf("the daemon holds the forwarder's stdin %s although its stdout is a regular file", stdin)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`)
	waitFor(t, "the answer to shutdown in the file", func() bool { return answered("2") })
	send(`{"jsonrpc":"2.0","method":"exit"}`)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("forwarder: %v, want exit 0; stderr:\n%s", err, stderr.String())
	}
	data, _ := os.ReadFile(outPath)
	if n := strings.Count(string(data), "Content-Length:"); n != 2 {
		t.Fatalf("the file holds %d messages, want the 2 answers:\n%s", n, data)
	}
}

// explicitDaemon starts `agentd serve` on a socket of the env's and waits
// until it answers.
func explicitDaemon(t *testing.T, e *env) (*proc, string) {
	t.Helper()
	e.stopDaemonsAtEnd()
	sock := e.socketPath()
	d := e.start("serve", "--listen=unix:"+sock, "--listen.timeout=0")
	t.Cleanup(func() { d.Cmd.Process.Signal(syscall.SIGTERM) }) // before Stop's wait on its stdin
	waitFor(t, "the daemon to answer", func() bool { return len(e.daemonPids()) == 1 && answersAt(sock) })
	return d, sock
}

// TestHandoffExplicitSocket: editor-like clients through `agentd
// --remote=unix:SOCK` on pipes, served by the daemon on their own pipes:
// a change made through one reaches the other, and each forwarder ends
// with the code a stdio server would (0 after shutdown and exit, 1 after
// exit alone, 0 at the end of input).
func TestHandoffExplicitSocket(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, sock := explicitDaemon(t, e)
	daemon := e.oneDaemon()
	for _, tc := range []struct {
		name string
		end  func(p *proc, c *client)
		want int
	}{
		{"shutdown and exit", func(p *proc, c *client) { c.Shutdown() }, 0},
		{"exit alone", func(p *proc, c *client) { c.MustNotify("exit", nil) }, 1},
		{"end of input", func(p *proc, c *client) { p.Stdin.Close() }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := e.start("--remote=unix:" + sock)
			c := p.connect()
			c.Initialize(nil, e.ws)
			if stdin := fdTarget(t, p.Cmd.Process.Pid, 0); !holds(daemon, stdin) {
				t.Fatalf("the daemon does not hold the forwarder's stdin %s", stdin)
			}
			other := e.start("--remote=unix:" + sock).connect()
			other.Initialize(nil, e.ws)
			other.tool("TodoList", map[string]any{"todos": []item{{tc.name, "pending"}}})
			c.awaitTodo(e.ws, tc.name)
			tc.end(p, c)
			wantExit(t, p, tc.want)
		})
	}
}

// TestHandoffDaemonKilled: a daemon killed while it serves a forwarder's
// pipes leaves the forwarder without a code: it exits 1 saying it lost
// the shared daemon.
func TestHandoffDaemonKilled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	d, sock := explicitDaemon(t, e)
	p := e.start("--remote=unix:" + sock)
	c := p.connect()
	c.Initialize(nil, e.ws)
	if stdin := fdTarget(t, p.Cmd.Process.Pid, 0); !holds(e.oneDaemon(), stdin) {
		t.Fatalf("the daemon does not hold the forwarder's stdin %s", stdin)
	}
	d.Cmd.Process.Kill()
	wantExit(t, p, 1)
	if msg := p.Stderr.String(); !strings.Contains(msg, "agentd: lost the shared daemon at "+sock) {
		t.Fatalf("forwarder stderr = %q, want it to say it lost the shared daemon", msg)
	}
}
