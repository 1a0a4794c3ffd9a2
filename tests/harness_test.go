package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/tests/lsptest"
)

// agentdBin is the binary under test, and hookBin agentd-hook beside it
// (what agentd setup writes into the agents' hooks, docs/hooks.md), built
// once by TestMain.
var agentdBin, hookBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentd-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	agentdBin, hookBin = filepath.Join(dir, "agentd"), filepath.Join(dir, "agentd-hook")
	// Built as README's Install builds them: agentd-hook static (no cgo).
	for _, b := range []struct {
		out, pkg string
		static   bool
	}{{agentdBin, "../cmd/agentd", false}, {hookBin, "../cmd/agentd-hook", true}} {
		build := exec.Command("go", "build", "-o", b.out, b.pkg)
		if b.static {
			build.Env = append(os.Environ(), "CGO_ENABLED=0")
		}
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building", b.pkg+":", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// writeExecutable writes a file a test then runs, through a child process
// (cat): a file this process holds open for writing is also open, for a
// moment, in any child a parallel test forks meanwhile, and running it then
// fails with "text file busy" (ETXTBSY).
func writeExecutable(t testing.TB, path string, data []byte) {
	t.Helper()
	cmd := exec.Command("sh", "-c", `cat > "$1" && chmod 755 "$1"`, "sh", path)
	cmd.Stdin = bytes.NewReader(data)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("writing %s: %v %s", path, err, out)
	}
}

// waitLimit bounds every wait on the daemon; tests wait on events, and this
// only turns a hang into a failure. It is a hang guard, so it is long: on a
// loaded 2-core machine (go test -cpu 1 beside a busy loop) an 8.5 MB tool
// call through agentd mcp took more than 20 s to be refused.
const waitLimit = 60 * time.Second

// env is a private home for one test: state dir, runtime dir, workspace.
type env struct {
	t        testing.TB
	stateDir string
	runDir   string
	ws       string // a workspace folder
	remote   bool   // start() with no arguments runs `agentd --remote=auto` (daemon_test.go)
	// stopsDaemons: a cleanup that stops the env's daemons is registered (stopDaemonsAtEnd)
	stopsDaemons bool
	bin          string // the agentd binary this env runs (agentdBin unless a test installs another)
	// hookViaAgentd: hook() runs `agentd hook` instead of agentd-hook
	hookViaAgentd bool
}

func newEnv(t testing.TB) *env {
	t.Helper()
	base := t.TempDir()
	e := &env{t: t, stateDir: filepath.Join(base, "state"), runDir: filepath.Join(base, "run"), ws: filepath.Join(base, "work space"), bin: agentdBin}
	for _, d := range []string{e.runDir, e.ws} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if forwarded(t) {
		e.useDaemon()
	}
	return e
}

// environ is the process environment for agentd in this env.
func (e *env) environ() []string {
	return append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(e.stateDir, "xdg"), "XDG_RUNTIME_DIR="+e.runDir)
}

// command is an agentd command line in this env (state dir set).
func (e *env) command(args ...string) *exec.Cmd {
	cmd := exec.Command(e.bin, append(args, "--state-dir", e.stateDir)...)
	cmd.Env = e.environ()
	return cmd
}

// cli runs a one-shot agentd command and returns stdout, stderr, exit code.
func (e *env) cli(args ...string) (string, string, int) {
	e.t.Helper()
	return e.cliIn("", args...)
}

// cliIn is cli with dir as the current folder ("" is the test's).
func (e *env) cliIn(dir string, args ...string) (string, string, int) {
	e.t.Helper()
	cmd := e.command(args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		e.t.Fatalf("agentd %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// proc is a running agentd with its pipes (lsptest.Process), ended when
// the test ends.
type proc struct {
	*lsptest.Process
	t testing.TB
}

// start runs agentd (stdio server unless args say otherwise) with pipes.
func (e *env) start(args ...string) *proc {
	e.t.Helper()
	if len(args) == 0 && e.remote {
		args = []string{"--remote=auto"}
	}
	return e.run(e.command(args...))
}

// serveAt starts `agentd serve` on sock and waits until it accepts (the
// socket file exists from bind, a moment before the daemon listens, and a
// dial in between is refused); it is stopped when the test ends.
func (e *env) serveAt(sock string) *proc {
	e.t.Helper()
	d := e.start("serve", "--listen=unix:"+sock, "--listen.timeout=0")
	e.t.Cleanup(func() { d.Cmd.Process.Signal(syscall.SIGTERM); d.waitExit() })
	waitFor(e.t, "the daemon to listen", func() bool { return answersAt(sock) })
	return d
}

// run starts cmd with pipes for stdin and stdout, and stderr kept in
// p.Stderr unless cmd.Stderr is set. When the test ends, stdin is closed
// and the process gets 5 s to exit before it is killed.
func (e *env) run(cmd *exec.Cmd) *proc {
	e.t.Helper()
	lp, err := lsptest.Start(cmd)
	if err != nil {
		e.t.Fatal(err)
	}
	p := &proc{Process: lp, t: e.t}
	e.t.Cleanup(func() {
		p.Stop(5 * time.Second)
		if e.t.Failed() {
			e.t.Logf("agentd stderr:\n%s", p.Stderr.String())
		}
	})
	return p
}

// waitExit waits for the process to end and returns its exit code.
func (p *proc) waitExit() int {
	p.t.Helper()
	return p.waitExitWithin(waitLimit)
}

// waitExitWithin is waitExit for a process that may first wait out a
// bound of its own: limit is that bound plus waitLimit.
func (p *proc) waitExitWithin(limit time.Duration) int {
	p.t.Helper()
	select {
	case <-p.Exited():
		return p.ExitCode()
	case <-time.After(limit):
		p.t.Fatalf("agentd did not exit within %v; stderr:\n%s", limit, p.Stderr.String())
		return -1
	}
}

// client is the test client (lsptest.Client) with the helpers of these
// tests; p is the process behind it, nil on a socket.
type client struct {
	*lsptest.Client
	p *proc
}

// connect starts a client on a running agentd process.
func (p *proc) connect() *client { return p.connectWith(lsptest.Options{}) }

// connectWith starts a client with options o on a running agentd process.
func (p *proc) connectWith(o lsptest.Options) *client {
	return &client{Client: lsptest.NewClient(p.t, p.Conn(o), waitLimit), p: p}
}

// connectSocket starts a client on a Unix socket.
func connectSocket(t testing.TB, path string) *client {
	t.Helper()
	return dialSocket(t, path, lsptest.Options{Name: "socket"})
}

// dialSocket starts a client with options o on a Unix socket; the socket
// is closed when the test ends.
func dialSocket(t testing.TB, path string, o lsptest.Options) *client {
	t.Helper()
	conn, err := lsptest.Dial(path, o)
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	t.Cleanup(conn.Release)
	return &client{Client: lsptest.NewClient(t, conn, waitLimit)}
}

// revisionAtLeast matches notifications whose revision is >= rev.
func revisionAtLeast(rev uint64) func(json.RawMessage) bool {
	return func(raw json.RawMessage) bool {
		var p struct{ Revision uint64 }
		return json.Unmarshal(raw, &p) == nil && p.Revision >= rev
	}
}

// shutdown sends shutdown and exit and waits for the process to end.
func (c *client) shutdown() int {
	c.T.Helper()
	c.Shutdown()
	return c.p.waitExit()
}

var fileURI = lsptest.FileURI

// raw is a byte-level LSP peer for tests of framing and hostile input.
type raw struct {
	t  testing.TB
	p  *proc
	in *bufio.Reader
}

func (p *proc) raw() *raw { return &raw{t: p.t, p: p, in: bufio.NewReader(p.Stdout)} }

// send writes one framed message with a correct Content-Length.
func (r *raw) send(body string) {
	r.t.Helper()
	r.write(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
}

func (r *raw) write(s string) {
	r.t.Helper()
	if _, err := io.WriteString(r.p.Stdin, s); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

// read returns the next message body (any header case), or fails.
func (r *raw) read() map[string]any {
	r.t.Helper()
	type result struct {
		msg map[string]any
		err error
	}
	ch := make(chan result, 1)
	go func() {
		body, err := lsptest.ReadFrame(r.in)
		if err != nil {
			ch <- result{err: err}
			return
		}
		var m map[string]any
		d := json.NewDecoder(bytes.NewReader(body))
		d.UseNumber()
		err = d.Decode(&m)
		ch <- result{msg: m, err: err}
	}()
	select {
	case res := <-ch:
		if res.err != nil {
			r.t.Fatalf("reading a message: %v; stderr:\n%s", res.err, r.p.Stderr.String())
		}
		return res.msg
	case <-time.After(waitLimit):
		r.t.Fatalf("no message within %v; stderr:\n%s", waitLimit, r.p.Stderr.String())
		return nil
	}
}

// readResponse skips notifications and returns the next response.
func (r *raw) readResponse() map[string]any {
	r.t.Helper()
	for {
		m := r.read()
		if _, isNote := m["method"]; !isNote {
			return m
		}
	}
}

// errCode is the error code of a response, or 0.
func errCode(m map[string]any) int64 {
	e, ok := m["error"].(map[string]any)
	if !ok {
		return 0
	}
	n, _ := e["code"].(json.Number).Int64()
	return n
}

// initRaw sends initialize (with folder, or no workspace) and initialized.
func (r *raw) initRaw(folder string) {
	r.t.Helper()
	root := "null"
	if folder != "" {
		root = strconv.Quote(fileURI(folder))
	}
	r.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"processId":null,"rootUri":` + root + `,"capabilities":{}}}`)
	if m := r.readResponse(); m["result"] == nil {
		r.t.Fatalf("initialize failed: %v", m)
	}
	r.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
}
