package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
