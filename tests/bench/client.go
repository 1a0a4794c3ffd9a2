package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"time"

	"github.com/agentd/agentd/lsp/jsonrpc"
)

// client is our JSON-RPC peer, jsonrpc.Conn, on a child's stdin and stdout: an
// agentd (stdio server or forwarder) or the floor server.
type client struct {
	conn *jsonrpc.Conn
	cmd  *exec.Cmd
	done chan struct{} // closed when the child has exited
	// notes gets the arrival time of every agentd/todoChanged of session
	// watch, stamped on the read goroutine before its params are decoded.
	watch string
	notes chan time.Time
}

// pipes joins the child's stdout (read) and stdin (write); Close closes both.
type pipes struct {
	io.ReadCloser
	w io.WriteCloser
}

func (p pipes) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p pipes) Close() error                { p.w.Close(); return p.ReadCloser.Close() }

// spawn starts cmd on fresh os.Pipe pipes (Wait never closes our ends) and
// runs a client on them.
func spawn(cmd *exec.Cmd, stderr io.Writer, watch string) (*client, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, stderr
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	c := &client{cmd: cmd, done: make(chan struct{}), watch: watch, notes: make(chan time.Time, 1<<14)}
	go func() { cmd.Wait(); close(c.done) }()
	c.conn = jsonrpc.NewConn(pipes{outR, inW}, c.route, jsonrpc.Options{})
	go c.conn.Run(context.Background())
	return c, nil
}

// route stamps watched notifications and refuses server→client requests
// (the bench declares no client capabilities).
func (c *client) route(req *jsonrpc.Request) (jsonrpc.Handler, bool) {
	if c.watch != "" && req.Method == "agentd/todoChanged" {
		at := time.Now()
		var p struct{ Session string }
		if json.Unmarshal(req.Params, &p) == nil && p.Session == c.watch {
			select {
			case c.notes <- at:
			default:
			}
		}
	}
	return nil, true
}

// callLimit turns a hang into an error; it is never a timing assertion.
const callLimit = 2 * time.Minute

func (c *client) call(method string, params any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), callLimit)
	defer cancel()
	return c.conn.Call(ctx, method, params)
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
	ws := make([]map[string]string, len(folders))
	for i, f := range folders {
		ws[i] = map[string]string{"uri": (&url.URL{Scheme: "file", Path: f}).String(), "name": f}
	}
	if _, err := c.call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": nil,
		"workspaceFolders": ws, "capabilities": map[string]any{}}); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	return c.conn.Notify("initialized", map[string]any{})
}

// close ends the session (shutdown, exit) and waits for the child.
func (c *client) close() {
	if _, err := c.call("shutdown", nil); err == nil {
		c.conn.Notify("exit", nil)
	}
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		c.cmd.Process.Kill()
		<-c.done
	}
	c.conn.Close()
}

// command is workspace/executeCommand params, encoded once so that every
// timed call sends the same bytes.
func command(id string, args map[string]any) json.RawMessage {
	raw, err := json.Marshal(map[string]any{"command": id, "arguments": []any{args}})
	if err != nil {
		panic(err)
	}
	return raw
}

func tool(session, name string, input any) json.RawMessage {
	return command("agentd.callTool", map[string]any{"session": session, "name": name, "input": input})
}

// writes are two TodoList writes of n items in session, as an agent writes
// them, differing in the status of the first item; figures alternate them.
func writes(session string, n int) []json.RawMessage {
	var out []json.RawMessage
	for _, first := range []string{"in_progress", "done"} {
		items := make([]map[string]string, n)
		for i := range items {
			st := "pending"
			if i == 0 {
				st = first
			}
			items[i] = map[string]string{"title": fmt.Sprintf("Step %d: update the parser and its tests for the new config format", i+1), "status": st}
		}
		out = append(out, tool(session, "TodoList", map[string]any{"todos": items}))
	}
	return out
}
