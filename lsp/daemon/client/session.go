package client

// This file is the client side of one LSP session with an agentd server: the
// shell commands run one command in a short session (Call), and the
// adapters beside package lsp (agentd mcp, agentd hook) keep one open while
// they run, running commands and receiving the server's notifications on it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentd/agentd/commands/protocol"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/agentd/agentd/lsp/jsonrpc"
	"github.com/agentd/agentd/workspace/wsfolder"
)

// SessionOptions configure OpenSession.
type SessionOptions struct {
	Folder  string // the workspace folder, an absolute path
	Session string // initializationOptions.session; "" is the server's default
	// ClientName is clientInfo.name in initialize (e.g. "agentd-cli").
	ClientName string
	// OnNotify, when not nil, gets every notification the server sends
	// (agentd/todoChanged, ..., docs/commands.md), in arrival order, on the
	// connection's read goroutine: it must return quickly.
	OnNotify func(method string, params json.RawMessage)
}

// Session is an open LSP session on one workspace folder: initialize and
// initialized have been sent. Safe for concurrent use.
type Session struct {
	rpc     *jsonrpc.Conn
	runDone chan struct{}
	cancel  context.CancelFunc
	// commands are the ids the initialize result listed in
	// capabilities.executeCommandProvider.commands.
	commands []string
}

// OpenSession begins an LSP session on conn: initialize with opts.Folder
// as rootUri and the one workspace folder, initializationOptions
// {session} when opts.Session is set, then initialized. Requests the server
// sends (none unless the client declares capabilities) are answered with
// null; the commands the initialize result lists are kept (Serves). When
// the session cannot begin, conn is closed and the error wraps
// ErrNoDaemon.
func OpenSession(ctx context.Context, conn io.ReadWriteCloser, opts SessionOptions) (*Session, error) {
	route := func(req *jsonrpc.Request) (jsonrpc.Handler, bool) {
		if !req.IsCall() && opts.OnNotify != nil {
			opts.OnNotify(req.Method, req.Params)
		}
		return jsonrpc.Ignore, true
	}
	runCtx, cancel := context.WithCancel(context.Background())
	s := &Session{rpc: jsonrpc.NewConn(conn, route, jsonrpc.Options{}), runDone: make(chan struct{}), cancel: cancel}
	go func() {
		s.rpc.Run(runCtx)
		close(s.runDone)
	}()
	uri := wsfolder.URIFromPath(opts.Folder)
	name := opts.ClientName
	if name == "" {
		name = "agentd-cli"
	}
	params := map[string]any{
		"processId":        os.Getpid(),
		"clientInfo":       map[string]any{"name": name},
		"rootUri":          uri,
		"workspaceFolders": []map[string]string{{"uri": uri, "name": filepath.Base(opts.Folder)}},
		"capabilities":     map[string]any{},
	}
	if opts.Session != "" {
		params["initializationOptions"] = map[string]any{"session": opts.Session}
	}
	res, err := s.rpc.Call(ctx, "initialize", params)
	if err != nil {
		s.end()
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: initialize: %v", ErrNoDaemon, err)
	}
	var init struct {
		Capabilities struct {
			ExecuteCommandProvider struct {
				Commands []string `json:"commands"`
			} `json:"executeCommandProvider"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(res, &init); err != nil {
		s.end()
		return nil, fmt.Errorf("%w: the initialize result does not decode: %v", ErrNoDaemon, err)
	}
	s.commands = init.Capabilities.ExecuteCommandProvider.Commands
	if err := s.rpc.Notify("initialized", map[string]any{}); err != nil {
		s.end()
		return nil, fmt.Errorf("%w: initialized: %v", ErrNoDaemon, err)
	}
	return s, nil
}

// Execute runs workspace/executeCommand with one ARGS object and returns
// its result. A refusal comes back as a *protocol.Error with the code and
// data the server sent (protocol.ErrorCode works on it); other JSON-RPC
// errors as an error with the server's message; a connection that ended
// before the answer as an error saying the command may or may not have run;
// arguments too large for one message (DefaultMaxMessageBytes) as an error
// wrapping ErrMessageTooLarge, saying the command was not sent.
func (s *Session) Execute(ctx context.Context, command protocol.CommandID, args any) (json.RawMessage, error) {
	res, err := s.rpc.Call(ctx, "workspace/executeCommand", map[string]any{"command": command, "arguments": []any{args}})
	if err != nil {
		if errors.Is(err, jsonrpc.ErrConnClosed) {
			return nil, errors.New("the agentd server closed the connection before it answered; the command may or may not have run")
		}
		if errors.Is(err, jsonrpc.ErrMessageTooLarge) {
			return nil, fmt.Errorf("%s was not sent: its arguments are too large (%w); send less at once", command, err)
		}
		return nil, commandError(err)
	}
	return res, nil
}

// Serves reports whether the server listed command in the
// capabilities.executeCommandProvider.commands of its initialize result:
// a client that has a newer command and its older equivalent asks before
// using the newer (agentd.step.next, docs/protocol.md §3).
func (s *Session) Serves(command protocol.CommandID) bool {
	return slices.Contains(s.commands, string(command))
}

// Done is closed when the session's connection has ended (the server
// stopped or died, or Close).
func (s *Session) Done() <-chan struct{} { return s.runDone }

// Close ends the session politely (shutdown, exit, waiting up to a second
// for the server to close its side) and closes the connection.
func (s *Session) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := s.rpc.Call(ctx, "shutdown", nil); err == nil {
		s.rpc.Notify("exit", nil)
		select { // the server ends the connection after exit
		case <-s.runDone:
		case <-time.After(time.Second):
		}
	}
	s.end()
	return nil
}

// Drop ends the session without LSP's goodbye (shutdown, exit): it closes
// the connection, which the server reads as its client gone, as when a
// client dies (docs/protocol.md §2): the server releases the folders and
// ends the turns the connection began, but not detached ones. For a client
// all of whose turns are detached and that runs once per event (agentd
// hook, docs/hooks.md), where the goodbye would cost each event two more
// exchanges with the server.
func (s *Session) Drop() { s.end() }

// end closes the connection and waits for its read loop.
func (s *Session) end() {
	s.rpc.Close()
	s.cancel()
	<-s.runDone
}
