package tests

// End-to-end tests of `agentd mcp` (docs/mcp.md) with the MCP Go SDK's own
// client over mcp.CommandTransport, against the built binary.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/tests/lsptest"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpClient is an MCP client session on one `agentd mcp` process.
type mcpClient struct {
	t      testing.TB
	cs     *mcp.ClientSession
	Stderr *lsptest.Buffer

	mu      sync.Mutex
	updates []string      // resources/updated URIs, in arrival order
	changed chan struct{} // closed and replaced on every update
}

// mcp starts `agentd mcp ARGS` in dir ("" is the test's folder) and connects
// the SDK's client with protocol version (the newest when "").
// Daemons it starts are stopped at the end of the test.
func (e *env) mcp(version, dir string, args ...string) *mcpClient {
	e.t.Helper()
	cmd := e.command(append([]string{"mcp"}, args...)...)
	cmd.Dir = dir
	return e.mcpOn(cmd, version)
}

// mcpOn connects the SDK's client with protocol version to cmd, an
// `agentd mcp` command line.
func (e *env) mcpOn(cmd *exec.Cmd, version string) *mcpClient {
	e.t.Helper()
	e.stopDaemonsAtEnd()
	c := &mcpClient{t: e.t, Stderr: &lsptest.Buffer{}, changed: make(chan struct{})}
	cmd.Stderr = c.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "agentd-e2e", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			c.mu.Lock()
			c.updates = append(c.updates, req.Params.URI)
			close(c.changed)
			c.changed = make(chan struct{})
			c.mu.Unlock()
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		e.t.Fatalf("connecting to %v (protocol %q): %v; stderr:\n%s", cmd.Args, version, err, c.Stderr.String())
	}
	c.cs = cs
	e.t.Cleanup(func() {
		cs.Close()
		if e.t.Failed() {
			e.t.Logf("agentd mcp stderr:\n%s", c.Stderr.String())
		}
	})
	return c
}

func (c *mcpClient) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), waitLimit)
}

// call runs tools/call and returns its text and isError; a JSON-RPC error
// fails the test (agentd answers every refusal as a result).
func (c *mcpClient) call(name string, args any) (string, bool) {
	c.t.Helper()
	ctx, cancel := c.ctx()
	defer cancel()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("tools/call %s %.200v: JSON-RPC error %v, want a result", name, args, err) // %.200v: each string of args cut (a test sends megabytes)
	}
	if len(res.Content) != 1 {
		c.t.Fatalf("tools/call %s: %d content items, want one text", name, len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok || text.Text == "" {
		c.t.Fatalf("tools/call %s: content %#v, want non-empty text", name, res.Content[0])
	}
	return text.Text, res.IsError
}

// good calls a tool that must succeed and returns its text.
func (c *mcpClient) good(name string, args any) string {
	c.t.Helper()
	text, isError := c.call(name, args)
	if isError {
		c.t.Fatalf("tools/call %s %.200v: isError %.300q", name, args, text)
	}
	return text
}

// bad calls a tool that must refuse, and returns the reason.
func (c *mcpClient) bad(name string, args any) string {
	c.t.Helper()
	text, isError := c.call(name, args)
	if !isError {
		c.t.Fatalf("tools/call %s %.200v: %.300q, want an isError result", name, args, text)
	}
	return text
}

// read returns the text of a resource.
func (c *mcpClient) read(uri string) string {
	c.t.Helper()
	ctx, cancel := c.ctx()
	defer cancel()
	res, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil || len(res.Contents) != 1 {
		c.t.Fatalf("resources/read %s: %v, %+v", uri, err, res)
	}
	return res.Contents[0].Text
}

func (c *mcpClient) subscribe(uris ...string) {
	c.t.Helper()
	for _, uri := range uris {
		ctx, cancel := c.ctx()
		err := c.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
		cancel()
		if err != nil {
			c.t.Fatalf("resources/subscribe %s: %v", uri, err)
		}
	}
}

// updateCount is how many resources/updated have come so far.
func (c *mcpClient) updateCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.updates)
}

// awaitUpdate waits for a resources/updated of uri after the first n.
func (c *mcpClient) awaitUpdate(uri string, n int) {
	c.t.Helper()
	deadline := time.After(waitLimit)
	for {
		c.mu.Lock()
		for _, u := range c.updates[min(n, len(c.updates)):] {
			if u == uri {
				c.mu.Unlock()
				return
			}
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-deadline:
			c.t.Fatalf("no resources/updated of %s after update %d within %v", uri, n, waitLimit)
		}
	}
}

const (
	stateURI = "agentd://session/state.json"
	todoURI  = "agentd://session/todos.md"
)

// TestMCPHandshakes: the 2026-07-28 handshake (server/discover) and the
// older initialize handshakes all give agentd's identity, instructions and
// capabilities, and tools/list is agentd.tools exactly, GetGoal marked
// read-only.
func TestMCPHandshakes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, lc := e.forwarder()
	lc.Initialize(nil, e.ws)
	var want struct {
		Tools []struct {
			Name        string
			Description string
			InputSchema map[string]any
			ReadOnly    bool
		}
	}
	lc.MustExec("agentd.tools", nil, &want)
	if len(want.Tools) != 5 {
		t.Fatalf("agentd.tools has %d tools, want 5", len(want.Tools))
	}
	for _, version := range []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"} {
		t.Run(version, func(t *testing.T) {
			c := e.mcp(version, "", "--workspace", e.ws)
			init := c.cs.InitializeResult()
			if init.ProtocolVersion != version || init.ServerInfo == nil || init.ServerInfo.Name != "agentd" || !strings.Contains(init.Instructions, "TodoList") {
				t.Fatalf("handshake: version %q, server %+v, instructions %q", init.ProtocolVersion, init.ServerInfo, init.Instructions)
			}
			caps := init.Capabilities
			if caps.Tools == nil || caps.Resources == nil || !caps.Resources.Subscribe || caps.Prompts == nil {
				t.Fatalf("capabilities %+v: want tools, resources with subscribe, prompts", caps)
			}
			ctx, cancel := c.ctx()
			defer cancel()
			res, err := c.cs.ListTools(ctx, nil)
			if err != nil || len(res.Tools) != len(want.Tools) {
				t.Fatalf("tools/list: %v, %d tools, want %d", err, len(res.Tools), len(want.Tools))
			}
			for i, tl := range res.Tools { // the SDK lists tools by name
				w := want.Tools[0]
				for _, wt := range want.Tools {
					if wt.Name == tl.Name {
						w = wt
					}
				}
				if tl.Name != w.Name || tl.Description != w.Description || !reflect.DeepEqual(tl.InputSchema, w.InputSchema) {
					t.Errorf("tool %d: %s %q %v, want agentd.tools' %s %q %v", i, tl.Name, tl.Description, tl.InputSchema, w.Name, w.Description, w.InputSchema)
				}
				readOnly := tl.Annotations != nil && tl.Annotations.ReadOnlyHint
				if readOnly != w.ReadOnly || readOnly != (tl.Name == "GetGoal") {
					t.Errorf("tool %s: readOnlyHint %v, agentd.tools readOnly %v; want true for GetGoal only", tl.Name, readOnly, w.ReadOnly)
				}
			}
		})
	}
}

// TestMCPTools: every tool with good and bad input through the shared
// daemon; a refusal is an isError result carrying agentd's reason, never a
// JSON-RPC error; the editor's client reads what the model wrote.
func TestMCPTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.mcp("", "", "--workspace", e.ws)

	if got := c.good("TodoList", nil); !strings.Contains(got, "empty") {
		t.Errorf("TodoList read = %q, want an empty list", got)
	}
	if got := c.good("TodoList", map[string]any{"todos": []item{{"write the tests", "in_progress"}}}); !strings.Contains(got, "[in_progress] write the tests") {
		t.Errorf("TodoList write = %q", got)
	}
	if got := c.bad("TodoList", map[string]any{"todos": []item{{"x", "nope"}}}); !strings.Contains(got, "nope") || !strings.Contains(got, "not changed") {
		t.Errorf("TodoList with a bad status: %q, want the reason naming the status", got)
	}
	if got := c.bad("TodoList", []int{1}); !strings.Contains(got, "must be an object") {
		t.Errorf("TodoList with an array: %q, want the reason", got)
	}

	if got := c.good("GetGoal", map[string]any{}); !strings.Contains(got, `"goal": null`) {
		t.Errorf("GetGoal without a goal = %q", got)
	}
	if got := c.bad("GetGoal", map[string]any{"x": 1}); !strings.Contains(got, `"x"`) {
		t.Errorf("GetGoal with an unknown field: %q, want it named", got)
	}
	c.good("CreateGoal", map[string]any{"objective": "ship v1", "completionCriterion": "tests pass"})
	if got := c.bad("CreateGoal", map[string]any{"objective": "another"}); !strings.Contains(got, "replace") {
		t.Errorf("second CreateGoal: %q, want a refusal naming replace", got)
	}
	c.bad("CreateGoal", map[string]any{})
	c.good("SetGoalBudget", map[string]any{"value": 20, "unit": "turns"})
	c.bad("SetGoalBudget", map[string]any{"value": -1, "unit": "turns"})
	if got := c.good("GetGoal", nil); !strings.Contains(got, "ship v1") || !strings.Contains(got, "20") {
		t.Errorf("GetGoal = %q, want the goal with its budget", got)
	}
	c.bad("UpdateGoal", map[string]any{"status": "paused"})
	if got := c.bad("UpdateGoal", map[string]any{"status": "complete"}); !strings.Contains(got, `"write the tests"`) {
		t.Errorf("UpdateGoal complete with an item open: %q, want the item named (docs/runtime.md §2.12)", got)
	}
	c.good("TodoList", map[string]any{"todos": []item{{"write the tests", "done"}}})
	c.good("UpdateGoal", map[string]any{"status": "complete"})

	ctx, cancel := c.ctx()
	defer cancel()
	if _, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "NoSuchTool"}); err == nil {
		t.Error("an unknown tool answered a result, want a protocol error")
	}

	out, stderr, code := e.cli("state", "--json", "--workspace", e.ws)
	var st state
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || len(st.Todos.Items) != 1 || st.Todos.Items[0].Title != "write the tests" || !strings.Contains(string(st.Goal), `"complete"`) {
		t.Fatalf("agentd state after the MCP calls: %s %s (exit %d)", out, stderr, code)
	}
}

// TestMCPSharedWithEditor: an editor's LSP client on the same folder gets
// agentd/todoChanged for the model's MCP write; a subscribed MCP client gets
// resources/updated for the editor's write and reads it; the goal prompt
// creates the goal as the user.
func TestMCPSharedWithEditor(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, lc := e.forwarder()
	lc.Initialize(nil, e.ws)
	c := e.mcp("", "", "--workspace", e.ws)
	c.subscribe(stateURI, todoURI)

	c.good("TodoList", map[string]any{"todos": []item{{"from the agent", "pending"}}})
	if n := lc.awaitTodo(e.ws, "from the agent"); n.Actor != "model" || n.Session != "default" {
		t.Errorf("editor's todoChanged = %+v, want actor model, session default", n)
	}
	c.awaitUpdate(todoURI, 0) // the agent's own write, before counting

	n := c.updateCount()
	var st state
	lc.MustExec("agentd.todo.set", map[string]any{"items": []item{{"from the editor", "done"}, {"next", "in_progress"}}}, &st)
	c.awaitUpdate(todoURI, n)
	c.awaitUpdate(stateURI, n)
	if got := c.read(todoURI); !strings.Contains(got, "- [x] from the editor\n") || !strings.Contains(got, "- [ ] next (in progress)\n") {
		t.Errorf("todos.md after the editor's write:\n%s", got)
	}
	var read state
	if err := json.Unmarshal([]byte(c.read(stateURI)), &read); err != nil || read.Revision != st.Revision || len(read.Todos.Items) != 2 {
		t.Errorf("state.json after the editor's write: %+v, %v; want revision %d with 2 items", read, err, st.Revision)
	}

	n = c.updateCount()
	ctx, cancel := c.ctx()
	defer cancel()
	res, err := c.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "goal", Arguments: map[string]string{"objective": "make CI green", "criterion": "all jobs pass"}})
	if err != nil || len(res.Messages) != 1 || res.Messages[0].Role != "user" {
		t.Fatalf("prompts/get goal: %v, %+v", err, res)
	}
	if text, ok := res.Messages[0].Content.(*mcp.TextContent); !ok || !strings.Contains(text.Text, "make CI green") || !strings.Contains(text.Text, "all jobs pass") {
		t.Errorf("goal prompt message = %#v", res.Messages[0].Content)
	}
	if gc := lc.awaitGoal("create"); gc.Change.Actor != "user" || gc.Goal == nil || gc.Goal.Objective != "make CI green" {
		t.Errorf("editor's goalChanged for the prompt = %+v, want a goal created by the user", gc)
	}
	c.awaitUpdate(stateURI, n)
	if _, err := c.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "goal", Arguments: map[string]string{"objective": "another"}}); err == nil || !strings.Contains(err.Error(), "replace") {
		t.Errorf("goal prompt with a goal set: %v, want the refusal", err)
	}
}

// TestMCPStdoutIsOnlyJSON: with debug logging on, every line agentd mcp
// writes to stdout is a JSON-RPC message, one per request answered.
func TestMCPStdoutIsOnlyJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.start("mcp", "--remote=off", "--workspace", e.ws, "--log-level", "debug")
	requests := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"TodoList","arguments":{"todos":[{"title":"a","status":"pending"}]}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"TodoList","arguments":{"todos":[{"title":"a","status":"bad"}]}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"` + todoURI + `"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"prompts/list"}`,
	}
	for _, r := range requests {
		fmt.Fprintln(p.Stdin, r)
	}
	sc := bufio.NewScanner(p.Stdout)
	sc.Buffer(nil, 1<<20)
	ids := map[float64]bool{}
	for len(ids) < 6 && sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m["jsonrpc"] != "2.0" {
			t.Fatalf("stdout line is not a JSON-RPC message: %q (%v)", sc.Text(), err)
		}
		if id, ok := m["id"].(float64); ok {
			if m["error"] != nil {
				t.Errorf("request %v answered an error: %v", id, m["error"])
			}
			ids[id] = true
		}
	}
	if len(ids) != 6 {
		t.Fatalf("answered %v, want ids 1 to 6 (%v)", ids, sc.Err())
	}
	p.Stdin.Close()
	if code := p.waitExit(); code != 0 {
		t.Errorf("exit code %d after end of input, want 0", code)
	}
	if rest, _ := bufio.NewReader(p.Stdout).ReadString(0); strings.TrimSpace(rest) != "" {
		t.Errorf("more on stdout after the answers: %q", rest)
	}
	if !strings.Contains(p.Stderr.String(), "level=DEBUG") {
		t.Errorf("no debug log on stderr:\n%s", p.Stderr.String())
	}
}

// TestMCPDaemonDown: with no daemon at --remote=unix:PATH every tool call
// is an isError result naming the fix, and the server keeps serving; once
// a daemon answers, the next call works, and after that daemon stops the
// server connects to the next one.
func TestMCPDaemonDown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sock := filepath.Join(e.runDir, "explicit.sock")
	c := e.mcp("", "", "--workspace", e.ws, "--remote=unix:"+sock)
	got := c.bad("TodoList", nil)
	if !strings.Contains(got, "agentd serve --listen=unix:"+sock) {
		t.Errorf("TodoList with no daemon: %q, want the command that starts one", got)
	}
	ctx, cancel := c.ctx()
	defer cancel()
	if res, err := c.cs.ListTools(ctx, nil); err != nil || len(res.Tools) != 5 {
		t.Fatalf("tools/list with no daemon: %v; the server must keep serving", err)
	}
	for round := range 2 {
		d := e.serveAt(sock)
		c.good("TodoList", map[string]any{"todos": []item{{fmt.Sprintf("round %d", round), "pending"}}})
		d.Cmd.Process.Signal(os.Interrupt)
		d.waitExit()
	}
	c.bad("TodoList", nil)
}

// rpcErrorOf is the JSON-RPC error an SDK client call returned.
func rpcErrorOf(t *testing.T, what string, err error) *jsonrpc.Error {
	t.Helper()
	var re *jsonrpc.Error
	if !errors.As(err, &re) {
		t.Fatalf("%s: %v, want a JSON-RPC error", what, err)
	}
	return re
}

// TestMCPErrorCodes: prompts/get and resources/read answer JSON-RPC errors
// with real codes and messages that name the fix: a goal prompt without an
// objective -32602, one while a goal is set -32803 with data
// {"code": "goal.already_exists"} and the advice to cancel the goal first
// (the prompt cannot replace), and either with no daemon behind -32603.
func TestMCPErrorCodes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.mcp("", "", "--workspace", e.ws)
	ctx, cancel := c.ctx()
	defer cancel()
	prompt := func(args map[string]string) error {
		_, err := c.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "goal", Arguments: args})
		return err
	}
	if re := rpcErrorOf(t, "goal prompt without an objective", prompt(map[string]string{"objective": " "})); re.Code != jsonrpc.CodeInvalidParams || !strings.Contains(re.Message, "needs an objective") {
		t.Errorf("goal prompt without an objective: %d %q, want -32602 naming the objective", re.Code, re.Message)
	}
	if err := prompt(map[string]string{"objective": "first"}); err != nil {
		t.Fatalf("goal prompt: %v", err)
	}
	re := rpcErrorOf(t, "goal prompt with a goal set", prompt(map[string]string{"objective": "second"}))
	var data struct{ Code string }
	json.Unmarshal(re.Data, &data)
	if re.Code != -32803 || data.Code != "goal.already_exists" || !strings.Contains(re.Message, "is active") || !strings.Contains(re.Message, "agentd goal cancel") || strings.Contains(re.Message, `"replace": true`) {
		t.Errorf("goal prompt with a goal set: %d %s %q, want -32803 goal.already_exists advising agentd goal cancel", re.Code, re.Data, re.Message)
	}

	sock := filepath.Join(e.runDir, "nobody.sock")
	down := e.mcp("", "", "--workspace", e.ws, "--remote=unix:"+sock)
	_, err := down.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: todoURI})
	if re := rpcErrorOf(t, "resources/read with no daemon", err); re.Code != jsonrpc.CodeInternalError || !strings.Contains(re.Message, "agentd serve --listen=unix:"+sock) {
		t.Errorf("resources/read with no daemon: %d %q, want -32603 with the command that starts one", re.Code, re.Message)
	}
	_, err = down.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "goal", Arguments: map[string]string{"objective": "x"}})
	if re := rpcErrorOf(t, "goal prompt with no daemon", err); re.Code != jsonrpc.CodeInternalError || !strings.Contains(re.Message, "agentd serve") {
		t.Errorf("goal prompt with no daemon: %d %q, want -32603 naming the fix", re.Code, re.Message)
	}
	_, err = down.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "agentd://session/nope"})
	if re := rpcErrorOf(t, "resources/read of an unknown URI", err); re.Code == 0 {
		t.Errorf("resources/read of an unknown URI: code 0 %q", re.Message)
	}
}

// TestMCPRefusedFolder: `agentd mcp --remote=off` on a folder the shared
// daemon holds answers a tool call with an isError result that names the
// holder and the fix, and keeps serving.
func TestMCPRefusedFolder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, lc := e.forwarder()
	lc.Initialize(nil, e.ws)
	pid := e.oneDaemon()
	c := e.mcp("", "", "--workspace", e.ws, "--remote=off")
	got := c.bad("TodoList", nil)
	if !strings.Contains(got, fmt.Sprintf("pid %d", pid)) || !strings.Contains(got, "--remote=auto") {
		t.Errorf("TodoList on a locked folder: %q, want the holder's pid and --remote=auto", got)
	}
	c.bad("GetGoal", nil) // still serving
}

// TestWorkspaceRule (docs/protocol.md §1.3): started in a
// subfolder, `agentd mcp`, `agentd setup` and the shell commands use the
// repository root, also when a folder above it has state (left by a shell
// command run there) that no process has open; in a repository without
// state under a folder an editor has open, they use the editor's folder;
// --workspace wins. The shell commands name the folder on stderr.
func TestWorkspaceRule(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Stray state above the repositories, as `agentd tool` run in the home
	// folder leaves it (no repository there: the current folder).
	if _, stderr, code := e.cliIn(e.ws, "tool", "TodoList", `{"todos":[{"title":"home stuff","status":"pending"}]}`); code != 0 || stderr != "agentd: workspace "+e.ws+"\n" {
		t.Fatalf("agentd tool in %s: exit %d, stderr %q", e.ws, code, stderr)
	}
	repo := filepath.Join(e.ws, "repo")
	sub := filepath.Join(repo, "src", "pkg")
	other := filepath.Join(e.ws, "other", "src") // in a repository with no state yet
	for _, d := range []string{filepath.Join(repo, ".git"), sub, filepath.Join(e.ws, "other", ".git"), other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	stateOf := func(folder string) state {
		t.Helper()
		out, stderr, code := e.cli("state", "--json", "--workspace", folder)
		var st state
		if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
			t.Fatalf("agentd state --workspace %s: %s %s", folder, out, stderr)
		}
		return st
	}
	if _, stderr, code := e.cliIn(sub, "tool", "TodoList", `{"todos":[{"title":"shell","status":"pending"}]}`); code != 0 || stderr != "agentd: workspace "+repo+"\n" {
		t.Fatalf("agentd tool in a subfolder: exit %d, stderr %q, want it to name %s", code, stderr, repo)
	}
	if st := stateOf(repo); len(st.Todos.Items) != 1 || st.Todos.Items[0].Title != "shell" || st.Workspace != fileURI(repo) {
		t.Errorf("the shell command in %s did not write the repository root's list: %+v", sub, st)
	}
	if st := stateOf(e.ws); len(st.Todos.Items) != 1 || st.Todos.Items[0].Title != "home stuff" {
		t.Errorf("the stray state above the repository changed: %+v", st)
	}
	if out, _, code := e.cliIn(sub, "setup", "cursor", "--print"); code != 0 || !strings.Contains(out, filepath.Join(repo, ".cursor")) {
		t.Errorf("agentd setup cursor --print in %s: exit %d, %q; want the repository's .cursor", sub, code, out)
	}
	if _, stderr, code := e.cliIn(sub, "goal", "status"); code != 0 || !strings.Contains(stderr, "agentd: workspace "+repo+"\n") {
		t.Errorf("agentd goal status in %s: exit %d, stderr %q, want it to name %s", sub, code, stderr, repo)
	}
	c := e.mcp("", sub)
	c.good("TodoList", map[string]any{"todos": []item{{"agent", "pending"}}})
	if st := stateOf(repo); len(st.Todos.Items) != 1 || st.Todos.Items[0].Title != "agent" {
		t.Errorf("agentd mcp in %s did not write the repository root's list: %+v", sub, st)
	}

	// An editor opens the folder above the repositories.
	_, lc := e.forwarder()
	lc.Initialize(nil, e.ws)
	c = e.mcp("", other)
	c.good("TodoList", map[string]any{"todos": []item{{"seen by the editor", "pending"}}})
	if n := lc.awaitTodo(e.ws, "seen by the editor"); n.Actor != "model" {
		t.Errorf("editor's todoChanged = %+v", n)
	}
	if _, stderr, code := e.cliIn(other, "tool", "TodoList", `{"todos":[{"title":"shell 2","status":"pending"}]}`); code != 0 || stderr != "agentd: workspace "+e.ws+"\n" {
		t.Fatalf("agentd tool under the editor's folder: exit %d, stderr %q, want it to name %s", code, stderr, e.ws)
	}
	lc.awaitTodo(e.ws, "shell 2")
	// The repository with state of its own keeps it: nearer than the
	// editor's folder.
	if _, stderr, code := e.cliIn(sub, "tool", "TodoList", `{"todos":[{"title":"shell 3","status":"pending"}]}`); code != 0 || stderr != "agentd: workspace "+repo+"\n" {
		t.Fatalf("agentd tool in %s under the editor's folder: exit %d, stderr %q, want it to name %s", sub, code, stderr, repo)
	}
	if _, stderr, code := e.cliIn(sub, "tool", "TodoList", `{"todos":[{"title":"flag","status":"pending"}]}`, "--workspace", sub); code != 0 {
		t.Fatalf("agentd tool --workspace: %s", stderr)
	}
	if st := stateOf(sub); len(st.Todos.Items) != 1 || st.Todos.Items[0].Title != "flag" {
		t.Errorf("--workspace %s did not win: %+v", sub, st)
	}
}

// TestMCPRequestTooLarge: a tool call whose request to the agentd server
// would exceed its 8 MiB message limit is an isError result naming the
// limit, with the server in this process and through the daemon; the next
// call works.
func TestMCPRequestTooLarge(t *testing.T) {
	// Not parallel: it sends megabytes through agentd mcp and the shared
	// daemon and waits for the refusal; beside the other tests on two cores
	// that alone took most of its wait.
	for _, remote := range []string{"off", "auto"} {
		t.Run(remote, func(t *testing.T) {
			e := newEnv(t)
			c := e.mcp("", "", "--remote="+remote, "--workspace", e.ws)
			title := strings.Repeat("t", 8_500_000)
			text := c.bad("TodoList", map[string]any{"todos": []any{map[string]any{"title": title, "status": "pending"}}})
			if !strings.Contains(text, "exceeds the limit of 8388608 bytes") || !strings.Contains(text, "was not sent") {
				t.Errorf("got %.300q, want the 8 MiB limit named and that nothing was sent", text)
			}
			c.good("TodoList", map[string]any{"todos": []any{map[string]any{"title": "a", "status": "pending"}}})
		})
	}
}

// TestMCPBadLines: each line that is not a JSON-RPC message gets its
// error (-32700 for one that is not JSON, -32600 for other values, a batch,
// a bad object and a line over 16 MiB), with id null unless the object has
// a usable id, and the server answers the next request; stdout carries
// JSON-RPC lines only.
func TestMCPBadLines(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.start("mcp", "--remote=off", "--workspace", e.ws)
	out := bufio.NewReader(p.Stdout)
	next := func() map[string]any {
		t.Helper()
		line, err := out.ReadBytes('\n')
		if err != nil {
			t.Fatalf("reading stdout: %v; stderr:\n%s", err, p.Stderr.String())
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil || m["jsonrpc"] != "2.0" {
			t.Fatalf("stdout line is not a JSON-RPC message: %.200q (%v)", line, err)
		}
		return m
	}
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(p.Stdin, line+"\n"); err != nil {
			t.Fatalf("writing stdin: %v; stderr:\n%s", err, p.Stderr.String())
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := next(); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	deep := strings.Repeat(`[`, 1001) + strings.Repeat(`]`, 1001)
	tests := []struct {
		name, line string
		code       float64
		id         any
	}{
		{"not JSON", `garbage`, -32700, nil},
		{"truncated", `{"jsonrpc":"2.0","id":7,"method":"tools/li`, -32700, nil},
		{"trailing data", `{"jsonrpc":"2.0","id":7,"method":"tools/list"} x`, -32700, nil},
		{"too deep", `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":` + deep + `}`, -32700, nil},
		{"string", `"str"`, -32600, nil},
		{"number", `123`, -32600, nil},
		{"batch", `[{"jsonrpc":"2.0","id":7,"method":"tools/list"}]`, -32600, nil},
		{"wrong version", `{"jsonrpc":"1.0","id":"x","method":"tools/list"}`, -32600, "x"},
		{"too long", `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"p":"` + strings.Repeat("a", 16<<20) + `"}}`, -32600, nil},
	}
	for i, tt := range tests {
		send(tt.line)
		m := next()
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != tt.code || m["id"] != tt.id || e["message"] == "" {
			t.Errorf("%s: got %v, want error %v with id %v", tt.name, m, tt.code, tt.id)
		}
		id := float64(100 + i)
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"method":"tools/list"}`, id))
		if m := next(); m["id"] != id || m["result"] == nil {
			t.Fatalf("tools/list after %s: got %.300v, want its result", tt.name, m)
		}
	}
	p.Stdin.Close()
	if code := p.waitExit(); code != 0 {
		t.Errorf("exit code %d after end of input, want 0; stderr:\n%s", code, p.Stderr.String())
	}
}
