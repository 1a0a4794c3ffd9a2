// Package mcpserver is `agentd mcp` (docs/mcp.md): an MCP server, on the
// official Go SDK (github.com/modelcontextprotocol/go-sdk), that gives a
// coding agent agentd's model tools, the session's state as resources and a
// `goal` prompt, all on one workspace folder and session.
//
// It is an adapter beside package lsp, never below it: every MCP request
// becomes the same agentd command an editor would send (agentd.callTool
// with actor model, agentd.state, agentd.goal.create as the user), run
// through an LSP session (client.OpenSession) on a connection that Options.Dial
// opens, to the shared daemon or to a server in this process. The tool
// list, the texts and the refusals come from package commands; only the MCP
// shapes are made here. It imports lsp, commands, jsonin, workspace and the SDK.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentd/agentd/commands/protocol"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/commands"
	"github.com/agentd/agentd/jsonin"
	"github.com/agentd/agentd/lsp/daemon/client"
	lsprpc "github.com/agentd/agentd/lsp/jsonrpc"
	"github.com/agentd/agentd/workspace"
)

// The resources (docs/mcp.md): the session's State as JSON, and its todo
// list as Markdown. Both change with every write a client makes, and a
// subscriber gets notifications/resources/updated.
const (
	StateURI = "agentd://session/state.json"
	TodoURI  = "agentd://session/todos.md"
)

// instructions is the server's `instructions`: what the tools are for.
const instructions = "agentd keeps this workspace's todo list and goal, shared live with the user's editor panels. " +
	"Use TodoList to plan and track multi-step work. When the user gives you a goal to pursue over many turns, " +
	"use the goal tools (CreateGoal, GetGoal, SetGoalBudget, UpdateGoal) as their descriptions say."

// Options configure Serve.
type Options struct {
	Folder  string // the workspace folder, an absolute path (wsfolder.FindFolder)
	Session string // the agentd session; "" is "default"
	Version string // serverInfo.version
	// Dial opens a connection to an agentd LSP server: the shared daemon,
	// or a server in this process. Serve calls it at start and again
	// whenever the connection has ended. Its error is shown to the model as
	// it is, so it should say what to do.
	Dial   func(ctx context.Context) (io.ReadWriteCloser, error)
	Logger *slog.Logger // nil discards logs; never stdout
}

// Serve runs the MCP server on in and out (stdin and stdout for `agentd
// mcp`: newline-delimited JSON-RPC, nothing else is written to out) until
// the client ends the session (in ends) or ctx ends. An unreachable agentd
// server or a refused folder never ends it: each request answers that
// error (a tool call as an isError result) and the next one tries again.
// Nor does a line that is not a JSON-RPC message, or one over MaxLineBytes:
// it is answered -32700 or -32600 with id null (docs/mcp.md, "Framing").
// Reading stops while MaxInFlight requests or MaxUnwrittenBytes of replies
// wait to be written (flow.go).
func Serve(ctx context.Context, in io.ReadCloser, out io.WriteCloser, opts Options) error {
	w, f := &lockedWriter{w: out}, newFlow()
	// MaxLineLength -1: lineReader bounds every line already.
	return serve(ctx, &mcp.IOTransport{Reader: newLineReader(in, w, MaxLineBytes, f), Writer: &replyWriter{w: w, f: f}, MaxLineLength: -1}, opts)
}

func serve(ctx context.Context, t mcp.Transport, opts Options) error {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Session == "" {
		opts.Session = workspace.DefaultSession
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &server{opts: opts, log: opts.Logger, changed: make(chan struct{}, 1), pending: map[string]bool{}}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "agentd", Version: opts.Version}, &mcp.ServerOptions{
		Instructions:       instructions,
		Logger:             slog.New(warnAndUp{opts.Logger.Handler()}),
		Capabilities:       &mcp.ServerCapabilities{},
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	for _, info := range commands.Tools() {
		s.mcp.AddTool(mcpTool(info), s.callTool(info.Name))
	}
	s.mcp.AddResource(&mcp.Resource{URI: StateURI, Name: "state", Title: "agentd session state",
		Description: "The session's todo list, goal and revision (agentd.state), as JSON.", MIMEType: "application/json"}, s.readResource)
	s.mcp.AddResource(&mcp.Resource{URI: TodoURI, Name: "todos", Title: "agentd todo list",
		Description: "The session's todo list as a Markdown checklist.", MIMEType: "text/markdown"}, s.readResource)
	s.mcp.AddPrompt(goalPromptDef(), s.goalPrompt)

	var wg sync.WaitGroup
	wg.Go(func() { s.keepConnected(ctx) })
	wg.Go(func() { s.sendUpdates(ctx) })
	err := s.mcp.Run(ctx, t)
	cancel()
	wg.Wait()
	s.mu.Lock()
	if s.sess != nil {
		s.sess.Close()
	}
	s.mu.Unlock()
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

type server struct {
	opts Options
	log  *slog.Logger
	mcp  *mcp.Server

	mu   sync.Mutex
	sess *client.Session // nil until connected, and after its connection ended

	pendingMu sync.Mutex
	pending   map[string]bool // resource URIs changed and not yet announced
	changed   chan struct{}   // a token: pending has something
}

// mcpTool is the MCP shape of one of agentd's tools.
func mcpTool(info protocol.ToolInfo) *mcp.Tool {
	t := &mcp.Tool{Name: info.Name, Description: info.Description, InputSchema: info.InputSchema}
	if info.ReadOnly {
		t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
	}
	return t
}

// session returns the live LSP session, opening one when there is none.
func (s *server) session(ctx context.Context) (*client.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess != nil {
		select {
		case <-s.sess.Done():
			s.sess = nil
		default:
			return s.sess, nil
		}
	}
	conn, err := s.opts.Dial(ctx)
	if err != nil {
		return nil, err
	}
	sess, err := client.OpenSession(ctx, conn, client.SessionOptions{
		Folder: s.opts.Folder, Session: s.opts.Session, ClientName: "agentd-mcp", OnNotify: s.notified,
	})
	if err != nil {
		return nil, fmt.Errorf("the agentd server did not take the session: %w", err)
	}
	s.sess = sess
	return sess, nil
}

// Reconnection waits of keepConnected.
const (
	minRetry = 500 * time.Millisecond
	maxRetry = 30 * time.Second
)

// keepConnected keeps an LSP session open, so that the daemon's change
// notifications reach the resource subscribers, and opens a new one when
// the connection ends (a daemon that stopped: in auto mode a new one is
// started). After a new session, both resources are announced as updated,
// since changes may have been missed in between.
func (s *server) keepConnected(ctx context.Context) {
	wait := minRetry
	for first := true; ; first = false {
		sess, err := s.session(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.log.Warn("no agentd server for the MCP session; retrying", "err", err, "in", wait)
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			wait = min(2*wait, maxRetry)
			continue
		}
		wait = minRetry
		if !first {
			s.markChanged(StateURI, TodoURI)
		}
		select {
		case <-ctx.Done():
			return
		case <-sess.Done():
			s.log.Info("the agentd server ended the session; reconnecting")
		}
	}
}

// notified gets the server's notifications (docs/commands.md) on the
// connection's read goroutine: it only records which resources changed.
func (s *server) notified(method string, params json.RawMessage) {
	var p struct {
		Session string `json:"session"`
	}
	if json.Unmarshal(params, &p) != nil || p.Session != s.opts.Session {
		return
	}
	switch method {
	case protocol.MethodTodoChanged:
		s.markChanged(StateURI, TodoURI)
	case protocol.MethodGoalChanged, protocol.MethodTaskFileChanged, protocol.MethodQueueChanged:
		s.markChanged(StateURI)
	}
}

func (s *server) markChanged(uris ...string) {
	s.pendingMu.Lock()
	for _, u := range uris {
		s.pending[u] = true
	}
	s.pendingMu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// sendUpdates announces changed resources to their subscribers, away from
// the LSP connection's read goroutine, coalescing changes that come faster
// than the MCP client reads.
func (s *server) sendUpdates(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.changed:
		}
		s.pendingMu.Lock()
		var uris []string
		for _, u := range []string{StateURI, TodoURI} {
			if s.pending[u] {
				uris = append(uris, u)
			}
		}
		clear(s.pending)
		s.pendingMu.Unlock()
		for _, u := range uris {
			if err := s.mcp.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: u}); err != nil {
				s.log.Warn("resources/updated not sent", "uri", u, "err", err)
			}
		}
	}
}

// execute runs one agentd command on the session's folder.
func (s *server) execute(ctx context.Context, command protocol.CommandID, args any) (json.RawMessage, error) {
	sess, err := s.session(ctx)
	if err != nil {
		return nil, err
	}
	return sess.Execute(ctx, command, args)
}

// metaErrorCode is the _meta key of a refused tool call's agentd error code
// (docs/mcp.md, What it serves), e.g. goal.check_failed.
const metaErrorCode = "agentd/errorCode"

// callTool runs a tool as the model (agentd.callTool). The tool's output is
// the text content; a refusal is an isError result with its reason (and
// its error code, when agentd gave one, in _meta under metaErrorCode), and
// so is any error on the way (no agentd server, a refused folder, bad
// input), so that the model reads it and the session goes on.
func (s *server) callTool(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		input := req.Params.Arguments
		if len(input) == 0 {
			input = json.RawMessage("{}")
		}
		var agent string
		if name == todoListTool {
			input, agent = takeAgent(input)
		}
		raw, err := s.execute(ctx, protocol.CmdCallTool, protocol.CallToolArgs{Common: protocol.Common{Agent: agent}, Name: name, Input: input})
		if err != nil {
			return errorResult(err), nil
		}
		var res protocol.ToolResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return errorResult(fmt.Errorf("reading the result of %s: %w", name, err)), nil
		}
		out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Output}}, IsError: res.IsError}
		if res.IsError && res.ErrorCode != "" {
			out.Meta = mcp.Meta{metaErrorCode: res.ErrorCode}
		}
		return out, nil
	}
}

// todoListTool is agentd's todo tool (docs/runtime.md §1).
const todoListTool = "TodoList"

// takeAgent takes the member "agent", a string, out of a TodoList input
// and returns the input without it and the agent it names: an MCP call
// names no agent, so an agent's hook that sees a subagent make the call
// adds it (docs/runtime.md §1.3). Any other input (no such member, or one
// that is not a lone string) is returned as it is, for the tool's strict
// decoder to judge.
func takeAgent(input json.RawMessage) (json.RawMessage, string) {
	members, ok := jsonin.Members(input)
	if !ok {
		return input, ""
	}
	var agent string
	var rest []jsonin.Member
	for _, m := range members {
		if m.Key != "agent" {
			rest = append(rest, m)
			continue
		}
		if agent != "" || json.Unmarshal(m.Value, &agent) != nil || agent == "" {
			return input, ""
		}
	}
	if agent == "" {
		return input, ""
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range rest {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(m.Key)
		b.Write(key)
		b.WriteByte(':')
		b.Write(m.Value)
	}
	b.WriteByte('}')
	return b.Bytes(), agent
}

// errorResult is err as a tool result the model reads.
func errorResult(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "agentd: " + err.Error()}}, IsError: true}
}

// state reads the session's State.
func (s *server) state(ctx context.Context) (protocol.State, json.RawMessage, error) {
	var st protocol.State
	raw, err := s.execute(ctx, protocol.CmdState, protocol.NoArgs{})
	if err != nil {
		return st, nil, err
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return st, nil, fmt.Errorf("reading the session state: %w", err)
	}
	return st, raw, nil
}

func (s *server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	if uri != StateURI && uri != TodoURI {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	st, raw, err := s.state(ctx)
	if err != nil {
		return nil, requestError(err)
	}
	c := &mcp.ResourceContents{URI: uri}
	switch uri {
	case StateURI:
		c.MIMEType, c.Text = "application/json", string(raw)
	case TodoURI:
		c.MIMEType, c.Text = "text/markdown", todoMarkdown(st)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
}

// todoMarkdown is the todo list as a Markdown checklist: "- [x]" for done,
// "- [ ]" for the others, "(in progress)" after the one being worked on.
func todoMarkdown(st protocol.State) string {
	var b strings.Builder
	b.WriteString("# Todo list\n\n")
	if len(st.Todos.Items) == 0 {
		b.WriteString("The todo list is empty.\n")
		return b.String()
	}
	for _, it := range st.Todos.Items {
		box, note := "[ ]", ""
		switch it.Status {
		case "done":
			box = "[x]"
		case "in_progress":
			note = " (in progress)"
		}
		fmt.Fprintf(&b, "- %s %s%s\n", box, it.Title, note)
	}
	return b.String()
}

// codeGoalExists is the stable code of agentd's refusal to create a goal
// while one is set (package goal's CodeAlreadyExists), as it comes over the
// wire.
const codeGoalExists = "goal.already_exists"

// requestError is err, from agentd or on the way to it, as the JSON-RPC
// error of a prompts/get or resources/read (docs/mcp.md, "When something is
// wrong"): a badly shaped argument is -32602 (invalid params); another
// agentd refusal is -32803 (request failed, as agentd's LSP interface
// answers it) with data {"code": "goal.already_exists", ...}; anything else
// (no agentd server, a lost connection, a refused folder) is -32603
// (internal error). The message is agentd's, which names the fix.
func requestError(err error) error {
	code := protocol.ErrorCode(err)
	switch {
	case code == protocol.CodeArgsInvalid:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	case code != "":
		data, _ := json.Marshal(map[string]string{"code": code})
		return &jsonrpc.Error{Code: lsprpc.CodeRequestFailed, Message: err.Error(), Data: data}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

// goalPrompt creates a goal as the user (agentd.goal.create) and hands the
// model the goal as the user's message. A refusal (a goal already set, a
// bad objective) is the prompt's error (requestError), which the host shows
// the user; the prompt never replaces a goal, so its refusal of one says to
// cancel the current goal first.
func (s *server) goalPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	objective, criterion, err := goalPromptArgs(req.Params.Arguments)
	if err != nil {
		return nil, err
	}
	if _, err := s.execute(ctx, protocol.CmdGoalCreate, protocol.GoalCreateArgs{Objective: objective, CompletionCriterion: criterion}); err != nil {
		if protocol.ErrorCode(err) == codeGoalExists {
			held, _, _ := strings.Cut(err.Error(), ";")
			err = &protocol.Error{Code: codeGoalExists, Msg: held + "; the goal prompt does not replace it: cancel it first (`agentd goal cancel` from a shell, or the editor's goal panel), then use the prompt again"}
		}
		return nil, requestError(err)
	}
	text := "I have set a goal for this workspace: " + objective
	if criterion != "" {
		text += "\nIt is done when: " + criterion
	}
	text += "\nWork towards it now."
	return &mcp.GetPromptResult{
		Description: "Goal set: " + objective,
		Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}},
	}, nil
}

// warnAndUp passes the SDK's warnings and errors on; its info lines (one
// per notification sent) would drown agentd's own.
type warnAndUp struct{ slog.Handler }

func (h warnAndUp) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.Handler.Enabled(ctx, l)
}

func (h warnAndUp) WithAttrs(attrs []slog.Attr) slog.Handler {
	return warnAndUp{h.Handler.WithAttrs(attrs)}
}

func (h warnAndUp) WithGroup(name string) slog.Handler { return warnAndUp{h.Handler.WithGroup(name)} }
