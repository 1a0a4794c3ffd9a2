package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/commands/protocol"

	"github.com/agentd/agentd/lsp"
	"github.com/agentd/agentd/lsp/daemon"
	"github.com/agentd/agentd/lsp/daemon/client"
	"github.com/agentd/agentd/lsp/jsonrpc"
	"github.com/agentd/agentd/service"
	"github.com/agentd/agentd/workspace"
	"github.com/agentd/agentd/workspace/wsfolder"
)

// shortDir is a private directory with a short path: Unix socket paths are
// limited to 107 bytes, and t.TempDir's paths can be long.
func shortDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "agd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// testDaemon is a daemon served in this process.
type testDaemon struct {
	t        testing.TB
	d        *daemon.Daemon
	path     string
	stateDir string
	cancel   context.CancelFunc
	done     chan error // Serve's result
}

// startDaemon claims a socket in dir and serves it on a fresh registry.
func startDaemon(t testing.TB, path string, idle time.Duration) *testDaemon {
	t.Helper()
	return startDaemonWith(t, daemon.Options{Path: path, IdleTimeout: idle})
}

// startDaemonWith is startDaemon with options; a fresh state dir when
// opts.StateDir is empty.
func startDaemonWith(t testing.TB, opts daemon.Options) *testDaemon {
	t.Helper()
	if opts.StateDir == "" {
		opts.StateDir = filepath.Join(shortDir(t), "state")
	}
	path, stateDir := opts.Path, opts.StateDir
	d, err := daemon.Listen(opts)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	svc := service.New(workspace.Options{StateDir: stateDir}, service.Daemon)
	srv := lsp.NewServer(svc, opts.Version, nil)
	ctx, cancel := context.WithCancel(context.Background())
	td := &testDaemon{t: t, d: d, path: path, stateDir: stateDir, cancel: cancel, done: make(chan error, 1)}
	go func() {
		err := d.Serve(ctx, srv)
		srv.Close()
		svc.Close()
		d.Close()
		td.done <- err
	}()
	t.Cleanup(func() { td.stop() })
	return td
}

// stop ends the daemon and waits for it.
func (td *testDaemon) stop() {
	td.cancel()
	td.wait()
}

// wait waits for Serve to return (once; later calls return at once).
func (td *testDaemon) wait() error {
	td.t.Helper()
	select {
	case err, ok := <-td.done:
		if ok {
			close(td.done)
		}
		return err
	case <-time.After(10 * time.Second):
		td.t.Fatal("the daemon did not stop")
		return nil
	}
}

// lspClient is an LSP client on our own Conn, recording notifications.
type lspClient struct {
	t   testing.TB
	rpc *jsonrpc.Conn

	mu      sync.Mutex
	notes   []note
	changed chan struct{}
}

type note struct {
	method string
	params json.RawMessage
}

func dialClient(t testing.TB, path string) *lspClient {
	t.Helper()
	nc, err := client.Dial(path)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	return clientOn(t, nc)
}

// clientOn is an lspClient on a connection to the daemon.
func clientOn(t testing.TB, nc io.ReadWriteCloser) *lspClient {
	c := &lspClient{t: t, changed: make(chan struct{})}
	c.rpc = jsonrpc.NewConn(nc, func(req *jsonrpc.Request) (jsonrpc.Handler, bool) {
		return func(_ context.Context, req *jsonrpc.Request) (any, error) {
			c.mu.Lock()
			c.notes = append(c.notes, note{req.Method, append(json.RawMessage(nil), req.Params...)})
			close(c.changed)
			c.changed = make(chan struct{})
			c.mu.Unlock()
			return nil, nil
		}, true
	}, jsonrpc.Options{})
	go c.rpc.Run(context.Background())
	t.Cleanup(func() { c.rpc.Close() })
	return c
}

func (c *lspClient) call(method string, params, result any) error {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := c.rpc.Call(ctx, method, params)
	if err == nil && result != nil {
		err = json.Unmarshal(raw, result)
	}
	return err
}

func (c *lspClient) initialize(folders ...string) {
	c.t.Helper()
	var wf []map[string]string
	for _, f := range folders {
		wf = append(wf, map[string]string{"uri": wsfolder.URIFromPath(f), "name": filepath.Base(f)})
	}
	if err := c.call("initialize", map[string]any{"processId": nil, "capabilities": map[string]any{}, "workspaceFolders": wf}, nil); err != nil {
		c.t.Fatalf("initialize: %v", err)
	}
	if err := c.rpc.Notify("initialized", map[string]any{}); err != nil {
		c.t.Fatal(err)
	}
}

func (c *lspClient) exec(command string, args, result any) error {
	c.t.Helper()
	return c.call("workspace/executeCommand", map[string]any{"command": command, "arguments": []any{args}}, result)
}

func (c *lspClient) writeTodos(folder, title string) protocol.ToolResult {
	c.t.Helper()
	var res protocol.ToolResult
	args := map[string]any{"name": "TodoList", "workspace": folder,
		"input": map[string]any{"todos": []any{map[string]any{"title": title, "status": "pending"}}}}
	if err := c.exec("agentd.callTool", args, &res); err != nil || res.IsError {
		c.t.Fatalf("TodoList write in %s: %v %+v", folder, err, res)
	}
	return res
}

// todoChanged is the params of agentd/todoChanged.
type todoChanged struct {
	Workspace string `json:"workspace"`
	Revision  uint64 `json:"revision"`
	Items     []struct {
		Title string `json:"title"`
	} `json:"items"`
}

// awaitTodo waits for an agentd/todoChanged matching ok; earlier ones count.
func (c *lspClient) awaitTodo(ok func(todoChanged) bool) todoChanged {
	c.t.Helper()
	var tc todoChanged
	c.await("agentd/todoChanged", func(params json.RawMessage) bool {
		return json.Unmarshal(params, &tc) == nil && ok(tc)
	})
	return tc
}

// await waits for a notification of method whose params satisfy ok;
// earlier ones count.
func (c *lspClient) await(method string, ok func(json.RawMessage) bool) {
	c.t.Helper()
	deadline := time.After(10 * time.Second)
	for i := 0; ; {
		c.mu.Lock()
		for ; i < len(c.notes); i++ {
			if c.notes[i].method == method && ok(c.notes[i].params) {
				c.mu.Unlock()
				return
			}
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			c.t.Fatalf("no matching %s", method)
		}
	}
}

func (c *lspClient) todoNotes() []todoChanged {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []todoChanged
	for _, n := range c.notes {
		var tc todoChanged
		if n.method == "agentd/todoChanged" && json.Unmarshal(n.params, &tc) == nil {
			out = append(out, tc)
		}
	}
	return out
}

func mkdirs(t testing.TB, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDaemonSocketAndLock: the socket is 0600 in a 0700 directory it
// creates, the lock file names the daemon, a second daemon on the same
// socket is refused, and stopping removes the socket and frees the lock.
func TestDaemonSocketAndLock(t *testing.T) {
	path := filepath.Join(shortDir(t), "sub", "d.sock")
	td := startDaemon(t, path, 0)
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %#o", p, fi.Mode(), err, want)
		}
	}
	info, err := client.ReadInfo(path)
	if err != nil || info.Pid != os.Getpid() || info.StateDir != td.stateDir {
		t.Errorf("ReadInfo = %+v, %v; want this pid and state dir %s", info, err, td.stateDir)
	}
	_, err = daemon.Listen(daemon.Options{Path: path})
	var running *daemon.RunningError
	if !errors.As(err, &running) || running.Pid != os.Getpid() || !strings.Contains(err.Error(), "already serves") {
		t.Fatalf("second Listen: got %v, want a RunningError naming pid %d", err, os.Getpid())
	}
	td.stop()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket still there after the daemon stopped: %v", err)
	}
	td2 := startDaemon(t, path, 0)
	td2.stop()
}

// TestDaemonStaleSocket: a socket file left by a daemon that died is
// replaced; a file that is not a socket is left alone and refused.
func TestDaemonStaleSocket(t *testing.T) {
	dir := shortDir(t)
	path := filepath.Join(dir, "d.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	td := startDaemon(t, path, 0)
	c := dialClient(t, path)
	c.initialize()
	td.stop()

	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := daemon.Listen(daemon.Options{Path: plain}); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("Listen on a regular file: %v, want a refusal", err)
	}
	if data, _ := os.ReadFile(plain); string(data) != "keep" {
		t.Fatalf("the regular file was changed: %q", data)
	}
}

// TestDaemonRefusesAnotherListener: a socket some other program answers on
// is not taken over.
func TestDaemonRefusesAnotherListener(t *testing.T) {
	path := closingListener(t)
	_, err := daemon.Listen(daemon.Options{Path: path})
	var running *daemon.RunningError
	if !errors.As(err, &running) {
		t.Fatalf("Listen while another program listens: %v, want RunningError", err)
	}
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("the other program's socket was removed: %v", err)
	}
}

// TestDaemonIdleTimeout: the daemon stays while a connection is open, and
// stops once none has been open for the idle timeout.
func TestDaemonIdleTimeout(t *testing.T) {
	// The idle timer runs from Serve's start until the accept goroutine
	// counts the test's connection, which waits in the backlog meanwhile:
	// the timeout must outlast what a loaded machine can delay that by.
	const idle = time.Second
	path := filepath.Join(shortDir(t), "d.sock")
	td := startDaemon(t, path, idle)
	c := dialClient(t, path)
	c.initialize()
	time.Sleep(3 * idle / 2) // longer than the timeout, with a client connected
	if err := c.exec("agentd.tools", nil, nil); err != nil {
		t.Fatalf("a connected client was dropped by the idle timeout: %v", err)
	}
	c.rpc.Close()
	if err := td.wait(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket still there after the idle exit: %v", err)
	}
}

// TestDaemonFanOut: a write on one connection reaches every connection
// with the folder open, in revision order, and no other connection.
func TestDaemonFanOut(t *testing.T) {
	dir := shortDir(t)
	ws, other := filepath.Join(dir, "ws"), filepath.Join(dir, "other")
	mkdirs(t, ws, other)
	startDaemon(t, filepath.Join(dir, "d.sock"), 0)
	a, b, c := dialClient(t, filepath.Join(dir, "d.sock")), dialClient(t, filepath.Join(dir, "d.sock")), dialClient(t, filepath.Join(dir, "d.sock"))
	a.initialize(ws)
	b.initialize(ws)
	c.initialize(other)
	for i, title := range []string{"one", "two", "three"} {
		a.writeTodos(ws, title)
		if got := b.awaitTodo(func(tc todoChanged) bool { return tc.Revision == uint64(i+1) }); got.Items[0].Title != title {
			t.Fatalf("b got %+v at revision %d, want %q", got, i+1, title)
		}
	}
	var revs []uint64
	for _, tc := range b.todoNotes() {
		revs = append(revs, tc.Revision)
	}
	if len(revs) != 3 || revs[0] != 1 || revs[1] != 2 || revs[2] != 3 {
		t.Errorf("b's revisions = %v, want [1 2 3]", revs)
	}
	// c's own write is fanned out after a's three: once it arrives, any of
	// a's would have arrived before it.
	c.writeTodos(other, "mine")
	c.awaitTodo(func(tc todoChanged) bool { return tc.Items[0].Title == "mine" })
	if got := c.todoNotes(); len(got) != 1 {
		t.Fatalf("c (other folder) got %+v, want only its own change", got)
	}
	var st, stB protocol.State
	if err := a.exec("agentd.state", nil, &st); err != nil {
		t.Fatal(err)
	}
	if err := b.exec("agentd.state", nil, &stB); err != nil || stB.Revision != st.Revision {
		t.Fatalf("revisions differ: a %d, b %d (%v)", st.Revision, stB.Revision, err)
	}
}

// recordingConn keeps every byte read from the daemon.
type recordingConn struct {
	net.Conn
	mu  sync.Mutex
	got bytes.Buffer
}

func (c *recordingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.got.Write(p[:n])
	c.mu.Unlock()
	return n, err
}

// todoBodies are the bodies of the agentd/todoChanged notifications c has
// read, whole, in the order they came, and their session and revision.
func (c *recordingConn) todoBodies(t *testing.T) (bodies [][]byte, sessions []string, revs []uint64) {
	t.Helper()
	c.mu.Lock()
	raw := bytes.Clone(c.got.Bytes())
	c.mu.Unlock()
	r := jsonrpc.NewReader(bytes.NewReader(raw), jsonrpc.ReaderOptions{})
	for {
		n, err := r.ReadHeader()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("reading what the daemon sent: %v", err)
		}
		body, err := r.ReadBody(n)
		if err != nil {
			t.Fatalf("reading what the daemon sent: %v", err)
		}
		var m struct {
			Method string `json:"method"`
			Params struct {
				Session  string `json:"session"`
				Revision uint64 `json:"revision"`
			} `json:"params"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("the daemon sent %q: %v", body, err)
		}
		if m.Method == "agentd/todoChanged" {
			bodies, sessions, revs = append(bodies, body), append(sessions, m.Params.Session), append(revs, m.Params.Revision)
		}
	}
}

// TestDaemonFanOutSameBytesInOrder: while two connections write two
// sessions each at once (four writers), every connection with the folder
// open gets every agentd/todoChanged of each session once, in revision
// order, and a notification is the same bytes on every connection: it is
// encoded once and the fan-out runs outside the session's lock
// (docs/performance.md, "What the ratios mean, and the verdict").
func TestDaemonFanOutSameBytesInOrder(t *testing.T) {
	dir := shortDir(t)
	ws := filepath.Join(dir, "ws")
	mkdirs(t, ws)
	sock := filepath.Join(dir, "d.sock")
	startDaemon(t, sock, 0)
	const conns, writes = 4, 20
	clients := make([]*lspClient, conns)
	recs := make([]*recordingConn, conns)
	for i := range clients {
		nc, err := client.Dial(sock)
		if err != nil {
			t.Fatal(err)
		}
		recs[i] = &recordingConn{Conn: nc}
		clients[i] = clientOn(t, recs[i])
		clients[i].initialize(ws)
		if err := clients[i].exec("agentd.state", nil, nil); err != nil { // initialized has been read
			t.Fatal(err)
		}
	}
	want := map[string]uint64{"shared": 2 * writes}
	var wg sync.WaitGroup
	for _, c := range clients[:2] {
		own := fmt.Sprintf("own-%p", c)
		want[own] = writes
		for _, session := range []string{"shared", own} {
			wg.Go(func() {
				for j := range writes {
					var res protocol.ToolResult
					args := map[string]any{"name": "TodoList", "session": session,
						"input": map[string]any{"todos": []any{map[string]any{"title": fmt.Sprintf("%s <%d> & more", session, j), "status": "pending"}}}}
					if err := c.exec("agentd.callTool", args, &res); err != nil || res.IsError {
						t.Errorf("write %d to %s: %v %+v", j, session, err, res)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	total := 0
	for _, n := range want {
		total += int(n)
	}
	for _, c := range clients {
		seen := 0
		c.awaitTodo(func(todoChanged) bool { seen++; return seen == total })
	}
	var first map[string][][]byte // session → bodies by revision, from connection 0
	for i, rec := range recs {
		bodies, sessions, revs := rec.todoBodies(t)
		got := map[string][][]byte{}
		for k, body := range bodies {
			s := sessions[k]
			if revs[k] != uint64(len(got[s])+1) {
				t.Fatalf("connection %d, session %s: notification %d has revision %d, want %d (out of order, missing or repeated)", i, s, len(got[s])+1, revs[k], len(got[s])+1)
			}
			got[s] = append(got[s], body)
		}
		for s, n := range want {
			if uint64(len(got[s])) != n {
				t.Errorf("connection %d, session %s: %d notifications, want %d", i, s, len(got[s]), n)
			}
		}
		if i == 0 {
			first = got
			continue
		}
		for s, list := range got {
			for k, body := range list {
				if !bytes.Equal(body, first[s][k]) {
					t.Errorf("session %s revision %d: connection %d got %s, connection 0 %s", s, k+1, i, body, first[s][k])
				}
			}
		}
	}
}

// TestSecureDir: only a directory of the user's own with mode 0700 passes.
func TestSecureDir(t *testing.T) {
	base := shortDir(t)
	ok := filepath.Join(base, "ok", "agentd")
	if err := client.SecureDir(ok, true); err != nil {
		t.Fatalf("SecureDir(create) = %v", err)
	}
	if err := client.SecureDir(ok, false); err != nil {
		t.Fatalf("SecureDir on the made dir = %v", err)
	}
	open := filepath.Join(base, "open")
	mkdirs(t, open)
	os.Chmod(open, 0o755)
	link := filepath.Join(base, "link")
	os.Symlink(ok, link)
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	for dir, want := range map[string]string{open: "chmod 700", link: "symbolic link", file: "not a directory"} {
		if err := client.SecureDir(dir, true); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("SecureDir(%s) = %v, want an error saying %q", filepath.Base(dir), err, want)
		}
	}
	if err := client.SecureDir(filepath.Join(base, "missing"), false); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("SecureDir(missing, false) = %v, want not exist", err)
	}
	if os.Getuid() == 0 {
		other := filepath.Join(base, "other")
		mkdirs(t, other)
		if err := os.Chown(other, 65534, 65534); err == nil {
			if err := client.SecureDir(other, false); err == nil || !strings.Contains(err.Error(), "uid 65534") {
				t.Errorf("SecureDir on another user's dir = %v, want a refusal naming uid 65534", err)
			}
		}
	}
}

// TestAutoSocketPath follows XDG_RUNTIME_DIR, else the temp dir per uid.
func TestAutoSocketPath(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/7")
	if got := client.AutoSocketPath(); got != "/run/user/7/agentd/daemon.sock" {
		t.Errorf("with XDG_RUNTIME_DIR: %s", got)
	}
	t.Setenv("XDG_RUNTIME_DIR", "")
	want := filepath.Join(os.TempDir(), "agentd-"+strconv.Itoa(os.Getuid()), "daemon.sock")
	if got := client.AutoSocketPath(); got != want {
		t.Errorf("without XDG_RUNTIME_DIR: %s, want %s", got, want)
	}
}

// listenUnix listens on a Unix socket named name in a fresh short
// directory, closed when the test ends (closing it early is harmless).
func listenUnix(t testing.TB, name string) (net.Listener, string) {
	t.Helper()
	path := filepath.Join(shortDir(t), name)
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln, path
}

// closingListener listens on a fresh socket and closes every connection at
// once: a program that answers on the path but is no agentd.
func closingListener(t testing.TB) string {
	t.Helper()
	ln, path := listenUnix(t, "d.sock")
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return path
}

// TestDaemonLongSocketPath: a socket path longer than a Unix socket address
// holds is served and dialled all the same, at that path, and removed when
// the daemon stops.
func TestDaemonLongSocketPath(t *testing.T) {
	dir := filepath.Join(shortDir(t), strings.Repeat("d", 120))
	path := filepath.Join(dir, "daemon.sock")
	td := startDaemon(t, path, 0)
	if fi, err := os.Lstat(path); err != nil || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("no socket at the long path: %v", err)
	}
	c := dialClient(t, path)
	c.initialize(dir)
	c.writeTodos(dir, "long way")
	td.stop()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket still there after the daemon stopped: %v", err)
	}
	if _, err := client.Dial(path); !errors.Is(err, client.ErrNoDaemon) {
		t.Errorf("Dial after the stop: %v, want ErrNoDaemon", err)
	}
	if _, err := client.Dial(filepath.Join(dir, "missing", "daemon.sock")); !errors.Is(err, client.ErrNoDaemon) {
		t.Errorf("Dial in a missing long directory: %v, want ErrNoDaemon", err)
	}
}
