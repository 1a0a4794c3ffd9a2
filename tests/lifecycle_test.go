package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/tests/lsptest"
)

// TestCancelRequestNumericID: $/cancelRequest with a number id beyond 32
// bits cancels a running request with -32800 (docs/protocol.md §2).
func TestCancelRequestNumericID(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.start().raw()
	r.initRaw(e.ws)
	r.send(`{"jsonrpc":"2.0","id":12345678901234,"method":"workspace/executeCommand","params":{"command":"agentd.awaitChange","arguments":[{"afterRevision":1000,"timeoutMs":120000}]}}`)
	r.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":12345678901234}}`)
	m := r.readResponse()
	if got := string(m["id"].(json.Number)); got != "12345678901234" {
		t.Fatalf("response id = %s, want 12345678901234", got)
	}
	if got := errCode(m); got != -32800 {
		t.Fatalf("error code = %d, want -32800 (RequestCancelled); response %v", got, m)
	}
}

// TestCancelRequestStringID: the same with a string id.
func TestCancelRequestStringID(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.start().raw()
	r.initRaw(e.ws)
	r.send(`{"jsonrpc":"2.0","id":"slow-1","method":"workspace/executeCommand","params":{"command":"agentd.awaitChange","arguments":[{"afterRevision":1000,"timeoutMs":120000}]}}`)
	r.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"slow-1"}}`)
	if m := r.readResponse(); m["id"] != "slow-1" || errCode(m) != -32800 {
		t.Fatalf("got %v, want an error -32800 for id slow-1", m)
	}
}

// TestSlowRequestDoesNotDelayQuickOne: a request that waits does not hold
// up a later one on the same connection (docs/protocol.md §2).
func TestSlowRequestDoesNotDelayQuickOne(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.start().raw()
	r.initRaw(e.ws)
	r.send(`{"jsonrpc":"2.0","id":1,"method":"workspace/executeCommand","params":{"command":"agentd.awaitChange","arguments":[{"afterRevision":0,"timeoutMs":120000}]}}`)
	r.send(`{"jsonrpc":"2.0","id":2,"method":"workspace/executeCommand","params":{"command":"agentd.tools"}}`)
	m := r.readResponse()
	if string(m["id"].(json.Number)) != "2" || m["result"] == nil {
		t.Fatalf("first response = %v, want the result of the quick request id 2", m)
	}
	// The slow one is still waiting; a change ends it early.
	r.send(`{"jsonrpc":"2.0","id":3,"method":"workspace/executeCommand","params":{"command":"agentd.callTool","arguments":[{"name":"TodoList","input":{"todos":[{"title":"t","status":"pending"}]}}]}}`)
	ids := map[string]bool{}
	for len(ids) < 2 {
		m := r.readResponse()
		if m["error"] != nil {
			t.Fatalf("unexpected error response %v", m)
		}
		ids[string(m["id"].(json.Number))] = true
	}
	if !ids["1"] || !ids["3"] {
		t.Fatalf("responses for ids %v, want 1 and 3", ids)
	}
}

// TestMalformedBodyAndHeaderCase: truncated JSON with intact framing gets
// -32700 with id null and the session goes on; header names are
// case-insensitive (docs/protocol.md §2).
func TestMalformedBodyAndHeaderCase(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.start().raw()
	r.initRaw(e.ws)
	r.send(`{"jsonrpc":"2.0","id":5,"method":"workspace/exec`)
	m := r.readResponse()
	if errCode(m) != -32700 || m["id"] != nil {
		t.Fatalf("got %v, want error -32700 with id null", m)
	}
	body := `{"jsonrpc":"2.0","id":6,"method":"workspace/executeCommand","params":{"command":"agentd.tools"}}`
	r.write("content-length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
	if m := r.readResponse(); m["result"] == nil {
		t.Fatalf("after a malformed body, a request with a lowercase header got %v, want a result", m)
	}
}

// TestShutdownExitParamShapes: shutdown and exit accept params omitted,
// null, {} and []; exit after shutdown ends with 0 (docs/protocol.md §2).
func TestShutdownExitParamShapes(t *testing.T) {
	t.Parallel()
	for _, params := range []string{"", `,"params":null`, `,"params":{}`, `,"params":[]`} {
		name := strings.TrimPrefix(params, `,"params":`)
		if name == "" {
			name = "omitted"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			p := e.start()
			r := p.raw()
			r.initRaw(e.ws)
			r.send(`{"jsonrpc":"2.0","id":9,"method":"shutdown"` + params + `}`)
			if m := r.readResponse(); m["error"] != nil {
				t.Fatalf("shutdown: %v", m)
			}
			r.send(`{"jsonrpc":"2.0","method":"exit"` + params + `}`)
			if code := p.waitExit(); code != 0 {
				t.Fatalf("exit code = %d, want 0", code)
			}
		})
	}
}

// TestExitWithoutShutdown ends with 1.
func TestExitWithoutShutdown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.start()
	r := p.raw()
	r.initRaw(e.ws)
	r.send(`{"jsonrpc":"2.0","method":"exit"}`)
	if code := p.waitExit(); code != 1 {
		t.Fatalf("exit code = %d, want 1", code)
	}
}

// TestLifecycleGate: before initialize -32002; a second initialize -32600;
// after shutdown -32600 (docs/protocol.md §2).
func TestLifecycleGate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.start().raw()
	r.send(`{"jsonrpc":"2.0","id":1,"method":"workspace/executeCommand","params":{"command":"agentd.tools"}}`)
	if m := r.readResponse(); errCode(m) != -32002 {
		t.Fatalf("before initialize: got %v, want -32002", m)
	}
	r.initRaw(e.ws)
	r.send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`)
	if m := r.readResponse(); errCode(m) != -32600 {
		t.Fatalf("second initialize: got %v, want -32600", m)
	}
	r.send(`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`)
	r.readResponse()
	r.send(`{"jsonrpc":"2.0","id":4,"method":"workspace/executeCommand","params":{"command":"agentd.tools"}}`)
	if m := r.readResponse(); errCode(m) != -32600 {
		t.Fatalf("after shutdown: got %v, want -32600", m)
	}
}

// TestUnknownMethods: unknown requests get -32601; unknown notifications
// are ignored and the connection goes on (docs/protocol.md §2).
func TestUnknownMethods(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.start().raw()
	r.initRaw(e.ws)
	for _, n := range []string{
		`{"jsonrpc":"2.0","method":"workspace/didChangeConfiguration","params":{"settings":{"other":{"x":1}}}}`,
		`{"jsonrpc":"2.0","method":"$/setTrace","params":{"value":"verbose"}}`,
		`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///x.go","languageId":"go","version":1,"text":"package x"}}}`,
		`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":"not an object"}`,
		`{"jsonrpc":"2.0","method":"workspace/didChangeWorkspaceFolders","params":42}`,
	} {
		r.send(n)
	}
	r.send(`{"jsonrpc":"2.0","id":1,"method":"textDocument/hover","params":{}}`)
	if m := r.readResponse(); errCode(m) != -32601 {
		t.Fatalf("unknown request: got %v, want -32601", m)
	}
	r.send(`{"jsonrpc":"2.0","id":2,"method":"workspace/executeCommand","params":{"command":"agentd.state"}}`)
	if m := r.readResponse(); m["result"] == nil {
		t.Fatalf("after unknown notifications: got %v, want a result", m)
	}
}

// TestEndOfInputReleasesState: closing stdin ends the process promptly and
// releases the state file, so another agentd opens the same workspace.
func TestEndOfInputReleasesState(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.start()
	c := p.connect()
	c.Initialize(nil, e.ws)
	c.MustExec("agentd.callTool", map[string]any{"name": "TodoList", "input": map[string]any{"todos": []any{map[string]any{"title": "a", "status": "pending"}}}}, nil)
	start := time.Now()
	p.Stdin.Close()
	p.waitExit()
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("agentd took %v to exit after end of input, want about 1s at most", d)
	}
	out, errOut, code := e.cli("state", "--workspace", e.ws)
	if code != 0 || !strings.Contains(out, "[pending] a") {
		t.Fatalf("agentd state after exit: code %d, out %q, err %q", code, out, errOut)
	}
}

// TestParentDeathEndsProcess: agentd exits when the client's processId dies.
func TestParentDeathEndsProcess(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	parent := exec.Command("sleep", "60")
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	p := e.start()
	c := p.connect()
	var res map[string]any
	if err := c.Call("initialize", map[string]any{"processId": parent.Process.Pid, "rootUri": fileURI(e.ws), "capabilities": map[string]any{}}, &res); err != nil {
		t.Fatal(err)
	}
	c.MustNotify("initialized", map[string]any{})
	parent.Process.Kill()
	parent.Wait()
	start := time.Now()
	p.waitExit()
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("agentd took %v to notice its parent died, want about 1s", d)
	}
}

// TestNoWorkspace: initialize with rootUri, rootPath and workspaceFolders
// all null works; commands that need a folder answer workspace.none.
func TestNoWorkspace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	var res map[string]any
	if err := c.Call("initialize", map[string]any{"processId": nil, "rootUri": nil, "rootPath": nil, "workspaceFolders": nil, "capabilities": map[string]any{}}, &res); err != nil {
		t.Fatalf("initialize with no workspace: %v", err)
	}
	c.MustNotify("initialized", map[string]any{})
	var tools map[string]any
	c.MustExec("agentd.tools", nil, &tools)
	err := c.Exec("agentd.state", nil, nil)
	re, ok := err.(*lsptest.Error)
	if !ok || re.Code != -32803 || string(re.DataField("code")) != `"workspace.none"` {
		t.Fatalf("agentd.state with no workspace: got %v, want -32803 with data.code workspace.none", err)
	}
}

// TestInitializeResult checks the capabilities of docs/protocol.md §2.
func TestInitializeResult(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	res := c.Initialize(nil, e.ws)
	b, _ := json.Marshal(res)
	var got struct {
		Capabilities struct {
			ExecuteCommandProvider struct{ Commands []string }
			Workspace              struct {
				WorkspaceFolders struct{ Supported, ChangeNotifications bool }
			}
			Experimental struct {
				Agentd struct{ ProtocolVersion int }
			}
		}
		ServerInfo struct{ Name, Version string }
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := []string{"agentd.tools", "agentd.callTool", "agentd.describeTool", "agentd.state", "agentd.sessions", "agentd.history", "agentd.todo.set"}
	have := map[string]bool{}
	for _, id := range got.Capabilities.ExecuteCommandProvider.Commands {
		have[id] = true
	}
	for _, id := range want {
		if !have[id] {
			t.Errorf("command %s not advertised; got %v", id, got.Capabilities.ExecuteCommandProvider.Commands)
		}
	}
	wf := got.Capabilities.Workspace.WorkspaceFolders
	if !wf.Supported || !wf.ChangeNotifications || got.Capabilities.Experimental.Agentd.ProtocolVersion != 1 || got.ServerInfo.Name != "agentd" || got.ServerInfo.Version == "" {
		t.Errorf("initialize result = %s", b)
	}
}

// TestFolderURIEncoding: folder URIs with spaces, %25 and non-ASCII map to
// the right path: what a client writes is what the shell reads there.
func TestFolderURIEncoding(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := filepath.Join(e.ws, "a b%c", "été")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	c := e.start().connect()
	c.Initialize(nil, dir)
	c.MustExec("agentd.callTool", map[string]any{"name": "TodoList", "input": map[string]any{"todos": []any{map[string]any{"title": "encoded", "status": "done"}}}}, nil)
	if code := c.shutdown(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	out, errOut, code := e.cli("state", "--workspace", dir)
	if code != 0 || !strings.Contains(out, "[done] encoded") {
		t.Fatalf("agentd state --workspace %q: code %d out %q err %q", dir, code, out, errOut)
	}
}

// TestNonFileSchemeRefused: a folder with another scheme is refused with a
// message to the user, and naming it in a command is a clear -32602.
func TestNonFileSchemeRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	var res map[string]any
	if err := c.Call("initialize", map[string]any{"processId": nil, "capabilities": map[string]any{},
		"workspaceFolders": []any{map[string]any{"uri": "vscode-vfs://github/o/r", "name": "r"}, map[string]any{"uri": fileURI(e.ws), "name": "w"}}}, &res); err != nil {
		t.Fatal(err)
	}
	c.MustNotify("initialized", map[string]any{})
	msg := c.Await("window/showMessage", nil)
	if !strings.Contains(string(msg), "vscode-vfs") || !strings.Contains(string(msg), "not supported") {
		t.Errorf("showMessage = %s, want it to name the folder and say the scheme is not supported", msg)
	}
	err := c.Exec("agentd.state", map[string]any{"workspace": "vscode-vfs://github/o/r"}, nil)
	if re, ok := err.(*lsptest.Error); !ok || re.Code != -32602 || !strings.Contains(re.Message, "scheme") {
		t.Fatalf("got %v, want -32602 naming the scheme", err)
	}
	c.MustExec("agentd.state", nil, nil)
}

// pipedTools is init, initialized and n agentd.tools requests (ids t0…),
// framed back to back.
// startOnRequests starts agentd ARGS with a file as its input that holds
// pipedTools' n calls, shutdown and exit, and a pipe as its output, whose
// read end it returns; both are closed when the test ends.
func startOnRequests(t *testing.T, e *env, n int, args ...string) (*proc, *os.File) {
	t.Helper()
	requests := filepath.Join(t.TempDir(), "requests")
	if err := os.WriteFile(requests, []byte(pipedTools(e.ws, n)+framed([]string{`{"jsonrpc":"2.0","id":"shutdown","method":"shutdown"}`, `{"jsonrpc":"2.0","method":"exit"}`})), 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(requests)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close() })
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { outR.Close() })
	cmd := e.command(args...)
	p := &proc{Process: &lsptest.Process{Cmd: cmd, Stderr: &lsptest.Buffer{}}, t: t}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, outW, p.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	return p, outR
}

// readsEveryReply reads from out the replies to startOnRequests' n calls
// and initialize and shutdown, fails the test unless each call has its
// result, and waits for agentd to exit 0.
func readsEveryReply(t *testing.T, p *proc, out *bufio.Reader, n int) {
	t.Helper()
	r := &raw{t: t, p: p, in: out}
	got, _ := r.responses(n + 2)
	for i := range n {
		if m := got[fmt.Sprint("t", i)]; m["result"] == nil {
			t.Fatalf("reply to t%d: %v", i, m)
		}
	}
	if err := p.Cmd.Wait(); err != nil {
		t.Errorf("agentd: %v after shutdown and exit, want exit 0; stderr:\n%s", err, p.Stderr.String())
	}
}

func pipedTools(ws string, n int) string {
	bodies := []string{
		`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"processId":null,"rootUri":` + strconv.Quote(fileURI(ws)) + `,"capabilities":{}}}`,
		`{"jsonrpc":"2.0","method":"initialized","params":{}}`,
	}
	for i := range n {
		bodies = append(bodies, execBody(fmt.Sprint("t", i), "agentd.tools", nil))
	}
	return framed(bodies)
}

// pacedReader is a client that reads at most size bytes at a time, after a
// pause before each read, and first before its first one: the client's
// own pace, not a wait for agentd.
type pacedReader struct {
	r            io.Reader
	size         int
	pause, first time.Duration
}

func (p *pacedReader) Read(b []byte) (int, error) {
	time.Sleep(p.first + p.pause)
	p.first = 0
	return p.r.Read(b[:min(len(b), p.size)])
}

// TestEndWithRepliesUnread: a stdio client that pipes its requests,
// `shutdown` and `exit` and closes its output before reading any reply
// (more of them than a pipe holds) gets every reply and exit 0, and so
// does one that begins to read 1 s after agentd read it all
// (`agentd <requests | (sleep 1; cat)`), and one that reads 8 KiB every
// 100 ms from `agentd --remote=auto <requests` (the forwarder, and the
// shared daemon writing to it over the socket); one that
// never reads its input gets its session ended when agentd sees it takes
// nothing (docs/protocol.md §2.5), the rest dropped and logged, and exit 1
// (no shutdown).
func TestEndWithRepliesUnread(t *testing.T) {
	// Not parallel: the daemon drops what a peer takes nothing of for a
	// while (docs/protocol.md §2.5), and a reader starved by the other
	// tests looks like that peer.
	t.Run("a client that reads on", func(t *testing.T) {
		const n = 100 // replies of 6 KB
		e := newEnv(t)
		p := e.start()
		r := p.raw()
		r.write(pipedTools(e.ws, n) + framed([]string{`{"jsonrpc":"2.0","id":"shutdown","method":"shutdown"}`, `{"jsonrpc":"2.0","method":"exit"}`}))
		p.Stdin.Close()
		got, _ := r.responses(n + 2)
		for i := range n {
			if m := got[fmt.Sprint("t", i)]; m["result"] == nil {
				t.Fatalf("reply to t%d: %v", i, m)
			}
		}
		if code := p.waitExit(); code != 0 {
			t.Errorf("exit code %d after shutdown and exit, want 0", code)
		}
	})
	for _, tc := range []struct {
		name   string
		remote bool // through the shared daemon: agentd --remote=auto, its input a file (not handed off: forwarded)
		read   pacedReader
	}{
		{"a client that reads after a pause", false, pacedReader{size: 64 << 10, first: time.Second}},
		{"a client that reads slowly through the shared daemon", true, pacedReader{size: 8 << 10, pause: 100 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 60 // 360 KB of replies: more than a socket's, the forwarder's and a pipe's buffers hold
			e := newEnv(t)
			var args []string
			if tc.remote {
				e.stopDaemonsAtEnd()
				args = []string{"--remote=auto"}
			}
			p, out := startOnRequests(t, e, n, args...)
			tc.read.r = out
			readsEveryReply(t, p, bufio.NewReader(&tc.read), n)
		})
	}
	t.Run("a client that does not read", func(t *testing.T) {
		// Replies of 6 KB, or of 100 bytes for those the end of input
		// cancels before they run: more than a pipe holds either way.
		const n = 1000
		e := newEnv(t)
		p := e.start()
		r := p.raw()
		r.write(pipedTools(e.ws, n))
		p.Stdin.Close()
		if code := p.waitExit(); code != 1 {
			t.Errorf("exit code %d after the end of input without shutdown, want 1", code)
		}
		// Not the 2 s wait for the requests behind the blocked write.
		if log := p.Stderr.String(); !strings.Contains(log, "the peer does not read what is left; dropping it") || strings.Contains(log, "handlers still running") {
			t.Errorf("stderr %q: want the replies that were not read said dropped, and no wait for the handlers", log)
		}
	})
}
