package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentd/agentd/commands/protocol"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/agentd/agentd/tests/lsptest"
)

// client is the test client, lsptest.Conn, on a child's stdin and stdout:
// an agentd (stdio server or forwarder) or the floor server.
type client struct {
	*lsptest.Conn
	proc *lsptest.Process
	// notes gets the arrival time of every agentd/todoChanged of session
	// watch, stamped on the read goroutine before anything else is decoded.
	notes chan time.Time
}

// spawn starts cmd (stderr to stderr) and runs a client on its pipes. The
// client keeps no notifications, and skips the go.lsp.dev/jsonrpc2 check
// of every message (the end-to-end tests make it): the bench measures.
func spawn(cmd *exec.Cmd, stderr io.Writer, watch string) (*client, error) {
	cmd.Stderr = stderr
	p, err := lsptest.Start(cmd)
	if err != nil {
		return nil, err
	}
	c := &client{proc: p, notes: make(chan time.Time, 1<<14)}
	o := lsptest.Options{Name: filepath.Base(cmd.Path), Lenient: true, OnNote: func(*lsptest.Message) {}}
	if watch != "" {
		o.OnBody = func(body []byte) bool {
			at := time.Now()
			var m struct {
				Method string
				Params struct{ Session string }
			}
			if json.Unmarshal(body, &m) == nil && m.Method == "agentd/todoChanged" && m.Params.Session == watch {
				select {
				case c.notes <- at:
				default:
				}
			}
			return false
		}
	}
	c.Conn = p.Conn(o)
	return c, nil
}

// callLimit turns a hang into an error; it is never a timing assertion.
const callLimit = 2 * time.Minute

// call sends a request and returns its result; a JSON-RPC error is an
// error.
func (c *client) call(method string, params any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), callLimit)
	defer cancel()
	var raw json.RawMessage
	err := c.CallResult(ctx, method, params, &raw)
	return raw, err
}

func (c *client) exec(params json.RawMessage) (json.RawMessage, error) {
	return c.call("workspace/executeCommand", params)
}

// checked runs a command and fails on an error or a tool refusal.
func (c *client) checked(params json.RawMessage) error {
	raw, err := c.exec(params)
	if err != nil {
		return err
	}
	return toolError(raw)
}

func toolError(raw json.RawMessage) error {
	var r struct {
		IsError bool   `json:"isError"`
		Output  string `json:"output"`
	}
	if json.Unmarshal(raw, &r) == nil && r.IsError {
		return errors.New("tool refused: " + r.Output)
	}
	return nil
}

// initialize runs initialize and initialized with the given folders.
func (c *client) initialize(folders ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), callLimit)
	defer cancel()
	_, err := c.Initialize(ctx, lsptest.Init{Folders: folders, ProcessID: os.Getpid()})
	return err
}

// close ends the session (shutdown, exit) and waits for the child, killing
// it after 5 s.
func (c *client) close() {
	ctx, cancel := context.WithTimeout(context.Background(), callLimit)
	defer cancel()
	c.Shutdown(ctx)
	c.proc.Stop(5 * time.Second)
}

// command is workspace/executeCommand params, encoded once so that every
// timed call sends the same bytes.
func command(id string, args map[string]any) json.RawMessage {
	raw, err := json.Marshal(lsptest.ExecParams(id, args))
	if err != nil {
		panic(err)
	}
	return raw
}

func tool(session, name string, input any) json.RawMessage { return toolIn("", session, name, input) }

// toolIn is agentd.callTool in folder (a path), which a connection with more
// than one folder open needs; "" leaves it out.
func toolIn(folder, session, name string, input any) json.RawMessage {
	args := map[string]any{"session": session, "name": name, "input": input}
	if folder != "" {
		args["workspace"] = folder
	}
	return command(string(protocol.CmdCallTool), args)
}

// todoInputs are the inputs of two TodoList writes of n items, as an agent
// writes them, differing in the status of the first item; figures alternate
// them.
func todoInputs(n int) []map[string]any {
	var out []map[string]any
	for _, first := range []string{"in_progress", "done"} {
		items := make([]map[string]string, n)
		for i := range items {
			st := "pending"
			if i == 0 {
				st = first
			}
			items[i] = map[string]string{"title": fmt.Sprintf("Step %d: update the parser and its tests for the new config format", i+1), "status": st}
		}
		out = append(out, map[string]any{"todos": items})
	}
	return out
}

// writes are the two TodoList writes of todoInputs(n) in session.
func writes(session string, n int) []json.RawMessage { return writesIn("", session, n) }

// writesIn are writes in folder (see toolIn).
func writesIn(folder, session string, n int) []json.RawMessage {
	var out []json.RawMessage
	for _, in := range todoInputs(n) {
		out = append(out, toolIn(folder, session, "TodoList", in))
	}
	return out
}

// mcpClient is an MCP client of `agentd mcp` on its pipes: JSON-RPC 2.0, one
// message per line (docs/mcp.md, Framing), one request at a time.
type mcpClient struct {
	proc *lsptest.Process
	out  *bufio.Reader
	id   int
}

// startMCP starts cmd (an `agentd mcp`) and runs MCP's initialize handshake.
func startMCP(cmd *exec.Cmd, stderr io.Writer) (*mcpClient, error) {
	cmd.Stderr = stderr
	p, err := lsptest.Start(cmd)
	if err != nil {
		return nil, err
	}
	m := &mcpClient{proc: p, out: bufio.NewReader(p.Stdout)}
	_, err = m.call("initialize", json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"agentd-bench","version":"1"}}`))
	if err == nil {
		_, err = p.Stdin.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	}
	if err != nil {
		m.close()
		return nil, fmt.Errorf("agentd mcp: %w", err)
	}
	return m, nil
}

// call sends a request with already-encoded params and returns its result,
// skipping every other line; a JSON-RPC error is an error.
func (m *mcpClient) call(method string, params json.RawMessage) (json.RawMessage, error) {
	m.id++
	line := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", m.id, method, params)
	if _, err := m.proc.Stdin.Write(line); err != nil {
		return nil, err
	}
	m.proc.Stdout.SetReadDeadline(time.Now().Add(callLimit))
	for {
		l, err := m.out.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		var r struct {
			ID     *int
			Result json.RawMessage
			Error  *struct {
				Code    int
				Message string
			}
		}
		if err := json.Unmarshal(l, &r); err != nil {
			return nil, fmt.Errorf("%s: %w: %s", method, err, l)
		}
		switch {
		case r.ID == nil || *r.ID != m.id:
		case r.Error != nil:
			return nil, fmt.Errorf("%s: JSON-RPC error %d: %s", method, r.Error.Code, r.Error.Message)
		default:
			return r.Result, nil
		}
	}
}

// close closes the server's stdin, which ends it, and waits for it, killing
// it after 5 s.
func (m *mcpClient) close() { m.proc.Stop(5 * time.Second) }
