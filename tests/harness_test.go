package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// agentdBin is the binary under test, built once by TestMain.
var agentdBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentd-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	agentdBin = filepath.Join(dir, "agentd")
	build := exec.Command("go", "build", "-o", agentdBin, "../cmd/agentd")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building agentd:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// waitLimit bounds every wait on the daemon; tests wait on events, and this
// only turns a hang into a failure.
const waitLimit = 15 * time.Second

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

// proc is a running agentd with its pipes.
type proc struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *lockedBuffer
	exited chan struct{}
	code   int
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// start runs agentd (stdio server unless args say otherwise) with pipes.
func (e *env) start(args ...string) *proc {
	e.t.Helper()
	if len(args) == 0 && e.remote {
		args = []string{"--remote=auto"}
	}
	return e.run(e.command(args...))
}

// run starts cmd with pipes for stdin and stdout, and stderr kept in
// p.stderr unless cmd.Stderr is set.
func (e *env) run(cmd *exec.Cmd) *proc {
	e.t.Helper()
	p := &proc{t: e.t, cmd: cmd, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		e.t.Fatal(err)
	}
	// Our own pipe, not cmd.StdoutPipe: Wait (below, as soon as the process
	// ends) would close that one under a reader still taking the last
	// replies ("file already closed"). This one reads to EOF.
	out, w, err := os.Pipe()
	if err != nil {
		e.t.Fatal(err)
	}
	p.stdout, cmd.Stdout = out, w
	if cmd.Stderr == nil {
		cmd.Stderr = p.stderr
	}
	err = cmd.Start()
	w.Close()
	if err != nil {
		out.Close()
		e.t.Fatal(err)
	}
	go func() {
		err := cmd.Wait()
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			p.code = exitErr.ExitCode()
		}
		close(p.exited)
	}()
	e.t.Cleanup(func() {
		p.stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
			p.cmd.Process.Kill()
			<-p.exited
		}
		out.Close()
		if e.t.Failed() {
			e.t.Logf("agentd stderr:\n%s", p.stderr.String())
		}
	})
	return p
}

// waitExit waits for the process to end and returns its exit code.
func (p *proc) waitExit() int {
	p.t.Helper()
	select {
	case <-p.exited:
		return p.code
	case <-time.After(waitLimit):
		p.t.Fatalf("agentd did not exit; stderr:\n%s", p.stderr.String())
		return -1
	}
}

// note is one notification received by a client.
type note struct {
	Method string
	Params json.RawMessage
}

// client is an LSP client on go.lsp.dev/jsonrpc2 (a real third-party
// JSON-RPC library) connected to agentd's stdio.
type client struct {
	t    testing.TB
	p    *proc
	conn jsonrpc2.Conn

	mu      sync.Mutex
	notes   []note
	changed chan struct{} // closed and replaced on every new note
}

type pipeRWC struct {
	io.Reader
	io.WriteCloser
}

// connect starts a client on a running agentd process.
func (p *proc) connect() *client {
	c := &client{t: p.t, p: p, changed: make(chan struct{})}
	c.conn = jsonrpc2.NewConn(jsonrpc2.NewStream(pipeRWC{p.stdout, p.stdin}))
	c.conn.Go(context.Background(), c.handle)
	return c
}

// connectSocket starts a client on a Unix socket.
func connectSocket(t testing.TB, path string) *client {
	nc, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	c := &client{t: t, changed: make(chan struct{})}
	c.conn = jsonrpc2.NewConn(jsonrpc2.NewStream(nc))
	c.conn.Go(context.Background(), c.handle)
	t.Cleanup(func() { c.conn.Close() })
	return c
}

func (c *client) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	c.mu.Lock()
	c.notes = append(c.notes, note{Method: req.Method(), Params: json.RawMessage(append([]byte(nil), req.Params()...))})
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	if _, isCall := req.(*jsonrpc2.Call); isCall {
		return reply(ctx, nil, nil)
	}
	return nil
}

// rpcError is a JSON-RPC error answer, with data decoded.
type rpcError struct {
	Code    int64
	Message string
	Data    map[string]json.RawMessage
}

func (e *rpcError) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// call sends a request and decodes the result into result (may be nil).
func (c *client) call(method string, params, result any) error {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	var raw json.RawMessage
	_, err := c.conn.Call(ctx, method, params, &raw)
	var je *jsonrpc2.Error
	if errors.As(err, &je) {
		e := &rpcError{Code: int64(je.Code), Message: je.Message}
		if je.Data != nil {
			json.Unmarshal(*je.Data, &e.Data)
		}
		return e
	}
	if err != nil {
		return err
	}
	if result != nil {
		if err := json.Unmarshal(raw, result); err != nil {
			return fmt.Errorf("decoding %s result %s: %w", method, raw, err)
		}
	}
	return nil
}

func (c *client) notify(method string, params any) {
	c.t.Helper()
	if err := c.conn.Notify(context.Background(), method, params); err != nil {
		c.t.Fatalf("notify %s: %v", method, err)
	}
}

// initialize runs initialize + initialized with the given folders (paths).
func (c *client) initialize(initOptions any, folders ...string) map[string]any {
	c.t.Helper()
	params := map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{}}
	var wf []map[string]string
	for _, f := range folders {
		wf = append(wf, map[string]string{"uri": fileURI(f), "name": filepath.Base(f)})
	}
	if wf != nil {
		params["workspaceFolders"] = wf
	}
	if initOptions != nil {
		params["initializationOptions"] = initOptions
	}
	var res map[string]any
	if err := c.call("initialize", params, &res); err != nil {
		c.t.Fatalf("initialize: %v", err)
	}
	c.notify("initialized", map[string]any{})
	return res
}

// exec runs workspace/executeCommand with one ARGS object.
func (c *client) exec(command string, args, result any) error {
	c.t.Helper()
	params := map[string]any{"command": command}
	if args != nil {
		params["arguments"] = []any{args}
	}
	return c.call("workspace/executeCommand", params, result)
}

// mustExec is exec that fails the test on error.
func (c *client) mustExec(command string, args, result any) {
	c.t.Helper()
	if err := c.exec(command, args, result); err != nil {
		c.t.Fatalf("%s %v: %v", command, args, err)
	}
}

// await waits for a notification of method whose params satisfy match, and
// returns its params. Notifications seen before are searched too.
func (c *client) await(method string, match func(json.RawMessage) bool) json.RawMessage {
	c.t.Helper()
	deadline := time.After(waitLimit)
	for i := 0; ; {
		c.mu.Lock()
		for ; i < len(c.notes); i++ {
			if n := c.notes[i]; n.Method == method && (match == nil || match(n.Params)) {
				c.mu.Unlock()
				return n.Params
			}
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-deadline:
			c.t.Fatalf("no %s notification matched within %v; got %v", method, waitLimit, c.methods())
		}
	}
}

// notesOf returns the notifications of method received so far.
func (c *client) notesOf(method string) []json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []json.RawMessage
	for _, n := range c.notes {
		if n.Method == method {
			out = append(out, n.Params)
		}
	}
	return out
}

func (c *client) methods() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var m []string
	for _, n := range c.notes {
		m = append(m, n.Method)
	}
	return m
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
	c.t.Helper()
	if err := c.call("shutdown", nil, nil); err != nil {
		c.t.Fatalf("shutdown: %v", err)
	}
	c.notify("exit", nil)
	return c.p.waitExit()
}

func fileURI(path string) string {
	return "file://" + strings.ReplaceAll(pathEscape(path), "%2F", "/")
}

// pathEscape percent-encodes a path the way VS Code does for file URIs.
func pathEscape(p string) string {
	var b strings.Builder
	for _, r := range []byte(p) {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.IndexByte("-._~/", r) >= 0:
			b.WriteByte(r)
		default:
			fmt.Fprintf(&b, "%%%02X", r)
		}
	}
	return b.String()
}

// raw is a byte-level LSP peer for tests of framing and hostile input.
type raw struct {
	t  testing.TB
	p  *proc
	in *bufio.Reader
}

func (p *proc) raw() *raw { return &raw{t: p.t, p: p, in: bufio.NewReader(p.stdout)} }

// send writes one framed message with a correct Content-Length.
func (r *raw) send(body string) {
	r.t.Helper()
	r.write(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
}

func (r *raw) write(s string) {
	r.t.Helper()
	if _, err := io.WriteString(r.p.stdin, s); err != nil {
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
		n := -1
		for {
			line, err := r.in.ReadString('\n')
			if err != nil {
				ch <- result{err: err}
				return
			}
			line = strings.TrimRight(line, "\r\n")
			if line == "" {
				break
			}
			if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "Content-Length") {
				n, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r.in, body); err != nil {
			ch <- result{err: err}
			return
		}
		var m map[string]any
		d := json.NewDecoder(bytes.NewReader(body))
		d.UseNumber()
		err := d.Decode(&m)
		ch <- result{msg: m, err: err}
	}()
	select {
	case res := <-ch:
		if res.err != nil {
			r.t.Fatalf("reading a message: %v; stderr:\n%s", res.err, r.p.stderr.String())
		}
		return res.msg
	case <-time.After(waitLimit):
		r.t.Fatalf("no message within %v; stderr:\n%s", waitLimit, r.p.stderr.String())
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
