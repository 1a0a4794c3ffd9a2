package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	wire "github.com/agentd/agentd/commands/protocol"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"syscall"

	"go.lsp.dev/protocol"

	"github.com/agentd/agentd/caller"
	"github.com/agentd/agentd/commands"
	"github.com/agentd/agentd/jsonin"
	"github.com/agentd/agentd/lsp/jsonrpc"
	"github.com/agentd/agentd/service"
	"github.com/agentd/agentd/workspace"
)

// ProtocolVersion is capabilities.experimental.agentd.protocolVersion.
const ProtocolVersion = 1

// Server serves LSP connections on one service.Service. Every connection
// shares the service's workspace registry; a change committed through any of
// them is pushed to every connection that has the folder open.
type Server struct {
	svc     *service.Service
	version string
	log     *slog.Logger

	mu    sync.Mutex
	conns map[*connection]struct{}
	unsub func()

	fanMu     sync.Mutex
	fanQueue  []workspace.Notice // committed changes not yet delivered, in commit order
	fanning   bool               // drainFanOut is running
	fanQueued uint64             // notices queued so far
	fanSent   uint64             // notices delivered so far
	fanWait   []fanWaiter        // fannedOut calls waiting for fanSent to reach their mark
}

// fanWaiter is a fannedOut call: done is closed once fanSent reaches mark.
type fanWaiter struct {
	mark uint64
	done chan struct{}
}

// NewServer returns a server; Close stops its subscription.
func NewServer(svc *service.Service, version string, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{svc: svc, version: version, log: log, conns: map[*connection]struct{}{}}
	s.unsub = svc.Registry().Subscribe(s.fanOut)
	return s
}

// Close stops fanning out notices. Connections end on their own.
func (s *Server) Close() { s.unsub() }

// ConnCount is the number of live connections.
func (s *Server) ConnCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// ConnOptions tune one connection.
type ConnOptions struct {
	// WatchParent ends the connection when the client's processId dies
	// (docs/protocol.md §2). Set for stdio; a shared daemon's connections come
	// through forwarders that watch their own parent.
	WatchParent bool
	// Ungated are methods the owner of the connection serves itself, by
	// name, before the lifecycle gate: at any state, inline on the read
	// goroutine (so they must not block). The shared daemon serves
	// agentd/handover so (package lsp/daemon).
	Ungated map[string]jsonrpc.Handler
	// Caller is who the connection's peer acts for: a person (the zero
	// Agent), or an agent's shell, to which the person's commands are
	// refused (commands.Client.SetCaller; docs/runtime.md, "Who is calling:
	// a person or an agent's shell").
	Caller caller.Agent
	// OnExit, when not nil, is called when the client's exit notification
	// ends the connection, before it ends: the shared daemon tells a
	// session it serves on an editor's own pipes ended by exit from one
	// whose input ended (docs/shared-daemon.md, "Handoff").
	OnExit func()
}

// ServeConn serves one LSP connection until it ends (exit, end of input, a
// closed socket, the death of the client's process or ctx) and returns the
// exit code a stdio process should end with: 0 after shutdown, else 1
// (docs/protocol.md §2).
func (s *Server) ServeConn(ctx context.Context, rwc io.ReadWriteCloser, opts ConnOptions) int {
	ctx, cancelCause := context.WithCancelCause(ctx)
	cancel := func() { cancelCause(nil) }
	defer cancel()
	c := &connection{srv: s, opts: opts, client: commands.NewClient(s.svc, commands.Defaults{}), ctx: ctx, cancel: cancel,
		peerEnded: func() { cancelCause(jsonrpc.ErrPeerEnded) }, log: s.log}
	c.client.SetCaller(opts.Caller)
	c.rpc = jsonrpc.NewConn(rwc, c.route, jsonrpc.Options{Logger: s.log})
	c.progress = newGoalProgress(c)
	go c.progress.run(ctx)
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	err := c.rpc.Run(ctx)
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	c.rpc.Close()
	c.client.Close()
	switch {
	case err == nil || errors.Is(err, context.Canceled):
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE):
		// The client closed its socket with messages of ours unread, as
		// agentd hook does after its answer when a notification follows
		// it (docs/hooks.md): a client gone, not a fault.
		s.log.Debug("connection ended: the client closed it with messages unread", "err", err)
	default:
		s.log.Warn("connection ended", "err", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state >= stateShutdown {
		return 0
	}
	return 1
}

// TellReady shows msg to the user, as a warning (window/showMessage), on
// every connection that is ready (between initialized and shutdown).
func (s *Server) TellReady(msg string) {
	s.mu.Lock()
	conns := make([]*connection, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		if c.lifecycle() == stateReady {
			c.showMessage(protocol.MessageTypeWarning, msg)
		}
	}
}

// fanOut takes a committed change for every ready connection that has its
// folder open. It runs under the session's lock, so notices of a session
// arrive here in revision order; it only queues the notice, and one
// goroutine at a time (drainFanOut) sends the queued notices, outside
// every session's lock, in the order they were queued: every connection
// gets the notifications of a session in revision order, and those of
// changes committed one after the other in that order, while the writer's
// reply does not wait for them (docs/performance.md, "What the ratios
// mean, and the verdict").
func (s *Server) fanOut(n workspace.Notice) {
	s.fanMu.Lock()
	defer s.fanMu.Unlock()
	s.fanQueue = append(s.fanQueue, n)
	s.fanQueued++
	if !s.fanning {
		s.fanning = true
		go s.drainFanOut()
	}
}

// drainFanOut delivers the queued notices in order until none is left,
// then ends. It never waits for a connection (deliver).
func (s *Server) drainFanOut() {
	for {
		s.fanMu.Lock()
		batch := s.fanQueue
		s.fanQueue = nil
		if len(batch) == 0 {
			s.fanning = false
			s.fanMu.Unlock()
			return
		}
		s.fanMu.Unlock()
		for i := range batch {
			s.deliver(batch[i])
			batch[i] = workspace.Notice{}
		}
		s.fanMu.Lock()
		s.fanSent += uint64(len(batch))
		waiting := s.fanWait[:0]
		for _, w := range s.fanWait {
			if w.mark <= s.fanSent {
				close(w.done)
			} else {
				waiting = append(waiting, w)
			}
		}
		s.fanWait = waiting
		s.fanMu.Unlock()
	}
}

// fannedOut waits until the notices of every change committed so far have
// been handed to the connections (deliver, which never waits for one), or
// ctx ends (then it returns ctx.Err()). shutdown uses it so that the
// notifications of the changes made by the requests before it go out
// before its reply (docs/protocol.md §2.2).
func (s *Server) fannedOut(ctx context.Context) error {
	s.fanMu.Lock()
	if s.fanSent == s.fanQueued {
		s.fanMu.Unlock()
		return nil
	}
	w := fanWaiter{mark: s.fanQueued, done: make(chan struct{})}
	s.fanWait = append(s.fanWait, w)
	s.fanMu.Unlock()
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// deliver sends the notifications of one committed change to every
// connection that has its folder open: each notification is encoded once
// per folder URI (clients may name the folder differently) and the same
// bytes are queued on every connection. It never waits for a connection:
// one whose client stopped reading (4096 messages or 8 MiB queued) loses
// the notification (it will see a revision gap and re-read,
// docs/protocol.md §4) rather than holding up every other client. A panic
// is logged; the next notices are still delivered.
func (s *Server) deliver(n workspace.Notice) {
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("fan-out panicked", "session", n.Session.Name, "panic", v)
		}
	}()
	s.mu.Lock()
	conns := make([]*connection, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	encoded := map[string][]*jsonrpc.Notification{}
	news, hasNews := commands.News(n, s.svc.Now())
	var message *jsonrpc.Notification // news.Message as window/showMessage, encoded once
	if hasNews && news.Message != "" {
		typ := protocol.MessageTypeInfo
		if news.Warning {
			typ = protocol.MessageTypeWarning
		}
		message = s.encode("window/showMessage", protocol.ShowMessageParams{Type: typ, Message: news.Message})
	}
	// What this machine says of the checks, the same for every connection.
	consent := commands.NoticeConsent(s.svc, n)
	for _, c := range conns {
		st := c.lifecycle()
		if st == stateShutdown {
			continue
		}
		uri, ok := c.client.FolderURI(n.Workspace)
		if !ok {
			continue
		}
		notes, ok := encoded[uri]
		if !ok {
			notes = s.encodeNotes(commands.Notifications(n, uri, s.svc.Now(), consent))
			encoded[uri] = notes
		}
		if st != stateReady {
			c.holdEarly(notes)
			continue
		}
		c.sendNotes(notes)
		if hasNews {
			if message != nil {
				c.sendNotes([]*jsonrpc.Notification{message})
			}
			if c.workDoneProgress() {
				c.progress.post(progressUpdate{key: uri + "\x00" + n.Session.Name, news: news})
			}
		}
	}
}

// encodeNotes encodes notifications for TryNotifyEncoded. The params are
// encoded with encoding/json first, as they always were on the wire (HTML
// characters escaped).
func (s *Server) encodeNotes(notes []commands.Notification) []*jsonrpc.Notification {
	out := make([]*jsonrpc.Notification, 0, len(notes))
	for _, n := range notes {
		b, err := json.Marshal(n.Params)
		if err != nil { // params are our own types: this is a bug
			s.log.Error("notification not encoded", "method", n.Method, "err", err)
			continue
		}
		if note := s.encode(n.Method, json.RawMessage(b)); note != nil {
			out = append(out, note)
		}
	}
	return out
}

// encode is jsonrpc.EncodeNotification; nil (logged) when params cannot
// be encoded, which for agentd's own types is a bug.
func (s *Server) encode(method string, params any) *jsonrpc.Notification {
	note, err := jsonrpc.EncodeNotification(method, params)
	if err != nil {
		s.log.Error("notification not encoded", "method", method, "err", err)
	}
	return note
}

// lifecycle is the LSP state of a connection (docs/protocol.md §2).
type lifecycle int

const (
	stateNew         lifecycle = iota // waiting for initialize
	stateInitialized                  // initialize answered, waiting for initialized
	stateReady                        // initialized: notifications may flow
	stateShutdown                     // shutdown answered: only exit is accepted
)

func (l lifecycle) String() string {
	switch l {
	case stateNew:
		return "new"
	case stateInitialized:
		return "initialized"
	case stateReady:
		return "ready"
	case stateShutdown:
		return "shutdown"
	}
	return fmt.Sprintf("lifecycle(%d)", int(l))
}

// connection is the per-connection state.
type connection struct {
	srv    *Server
	opts   ConnOptions
	rpc    *jsonrpc.Conn
	client *commands.Client
	ctx    context.Context // the connection's; done when it ends
	cancel context.CancelFunc
	// peerEnded ends the connection for the client's exit: what is left
	// to write goes on while the client takes it (jsonrpc.ErrPeerEnded).
	peerEnded func()
	log       *slog.Logger

	progress *goalProgress
	stalled  atomic.Bool  // notifications were dropped: the client is not reading (logged once)
	order    requestOrder // commands on the same state run in arrival order

	mu         sync.Mutex
	state      lifecycle
	pending    []string                // messages for the user, sent once the client is ready
	early      []*jsonrpc.Notification // notifications from before the client was ready (holdEarly)
	warnedKeys bool                    // unknown option keys were logged once
	workDone   bool                    // the client declared window.workDoneProgress
}

func (c *connection) workDoneProgress() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.workDone
}

func (c *connection) lifecycle() lifecycle {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// route is the lifecycle gate; it runs on the read goroutine in order.
func (c *connection) route(req *jsonrpc.Request) (jsonrpc.Handler, bool) {
	switch req.Method {
	case "initialize":
		return c.initialize, true
	case "initialized":
		return c.initialized, true
	case "shutdown":
		return c.shutdown, true
	case "exit":
		return c.exit, true
	}
	if h := c.opts.Ungated[req.Method]; h != nil {
		return h, true
	}
	st := c.lifecycle()
	if req.IsCall() {
		switch {
		case st == stateNew:
			return fail(jsonrpc.NewError(jsonrpc.CodeServerNotInitialized, "server not initialized: send initialize first")), true
		case st == stateShutdown:
			return fail(jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "server is shut down: only exit is accepted")), true
		}
	} else if st == stateNew || st == stateShutdown {
		return jsonrpc.Ignore, true
	}
	switch req.Method {
	case "workspace/executeCommand":
		return c.executeCommand(req)
	case "workspace/didChangeWorkspaceFolders":
		return c.didChangeFolders, true
	case "workspace/didChangeConfiguration":
		return c.didChangeConfiguration, true
	}
	if req.IsCall() {
		return fail(jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method %q is not supported by agentd", req.Method)), true
	}
	return jsonrpc.Ignore, true
}

func fail(err error) jsonrpc.Handler {
	return func(context.Context, *jsonrpc.Request) (any, error) { return nil, err }
}

// initializeParams is the part of LSP InitializeParams agentd reads. It is
// decoded leniently (every field may be null or missing) rather than into
// protocol.InitializeParams, whose strict field types would refuse
// capabilities of newer clients.
type initializeParams struct {
	ProcessID             *int64                     `json:"processId"`
	RootPath              *string                    `json:"rootPath"`
	RootURI               *string                    `json:"rootUri"`
	WorkspaceFolders      []protocol.WorkspaceFolder `json:"workspaceFolders"`
	InitializationOptions json.RawMessage            `json:"initializationOptions"`
	Capabilities          json.RawMessage            `json:"capabilities"` // clientCapabilities, read by workDoneProgress
}

// workDoneProgress reads capabilities.window.workDoneProgress of the
// client's capabilities, at best effort: a capability of an unexpected
// shape (a Lua client's [] for an empty table) is no capability, never a
// failed initialize.
func workDoneProgress(capabilities json.RawMessage) bool {
	var c struct {
		Window struct {
			WorkDoneProgress bool `json:"workDoneProgress"`
		} `json:"window"`
	}
	_ = json.Unmarshal(capabilities, &c) // on a type error the fields it could read are set
	return c.Window.WorkDoneProgress
}

func (c *connection) initialize(ctx context.Context, req *jsonrpc.Request) (any, error) {
	c.mu.Lock()
	if c.state != stateNew {
		c.mu.Unlock()
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "initialize was already received on this connection")
	}
	c.mu.Unlock()
	var p initializeParams
	if err := jsonin.DecodeLenient(req.Params, &p, "initialize params"); err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "%v", err)
	}
	unknown, err := c.client.Configure(p.InitializationOptions)
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "%v", err)
	}
	c.warnUnknown(unknown)
	var folders []string
	switch {
	case len(p.WorkspaceFolders) > 0:
		for _, f := range p.WorkspaceFolders {
			folders = append(folders, f.URI)
		}
	case p.RootURI != nil && *p.RootURI != "":
		folders = []string{*p.RootURI}
	case p.RootPath != nil && *p.RootPath != "":
		folders = []string{*p.RootPath}
	}
	for _, f := range folders {
		c.addFolder(f)
	}
	c.mu.Lock()
	c.state = stateInitialized
	c.workDone = workDoneProgress(p.Capabilities)
	c.mu.Unlock()
	if c.opts.WatchParent && p.ProcessID != nil && *p.ProcessID > 0 {
		WatchProcess(c.ctx, c.log, int(*p.ProcessID), c.cancel)
	}
	return map[string]any{
		"capabilities": map[string]any{
			"executeCommandProvider": protocol.ExecuteCommandOptions{Commands: commands.IDs()},
			"workspace": protocol.ServerCapabilitiesWorkspace{WorkspaceFolders: &protocol.ServerCapabilitiesWorkspaceFolders{
				Supported: true, ChangeNotifications: true}},
			"experimental": map[string]any{"agentd": map[string]any{"protocolVersion": ProtocolVersion}},
		},
		"serverInfo": protocol.ServerInfo{Name: "agentd", Version: c.srv.version},
	}, nil
}

// addFolder opens a folder for the connection; problems are kept for the
// user and told once the client is ready.
func (c *connection) addFolder(uriOrPath string) {
	if err := c.client.AddFolder(uriOrPath); err != nil {
		c.log.Warn("workspace folder not opened", "folder", uriOrPath, "err", err)
		c.tellUser(fmt.Sprintf("agentd: workspace folder %s: %v", uriOrPath, err))
	}
}

func (c *connection) tellUser(msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == stateReady {
		c.showMessage(protocol.MessageTypeWarning, msg)
		return
	}
	c.pending = append(c.pending, msg)
}

func (c *connection) showMessage(typ protocol.MessageType, msg string) {
	if err := c.rpc.TryNotify("window/showMessage", protocol.ShowMessageParams{Type: typ, Message: msg}); err != nil {
		c.notSent("window/showMessage", err)
	}
}

// notSent logs a notification the connection could not take: once at Warn
// when its client stops reading, else at Debug.
func (c *connection) notSent(method string, err error) {
	if errors.Is(err, jsonrpc.ErrQueueFull) && c.stalled.CompareAndSwap(false, true) {
		c.log.Warn("client is not reading: dropping notifications to it", "method", method)
		return
	}
	c.log.Debug("notification not sent", "method", method, "err", err)
}

func (c *connection) initialized(ctx context.Context, req *jsonrpc.Request) (any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != stateInitialized {
		return nil, nil
	}
	c.state = stateReady
	for _, msg := range c.client.Recovered() {
		c.showMessage(protocol.MessageTypeWarning, msg)
	}
	for _, msg := range c.pending {
		c.showMessage(protocol.MessageTypeWarning, msg)
	}
	c.pending = nil
	c.sendNotes(c.early)
	c.early = nil
	return nil, nil
}

// maxEarlyNotes bounds the notifications held for a connection that is not
// ready yet (docs/protocol.md §2.3).
const maxEarlyNotes = 64

// holdEarly keeps the notifications of a client's folders that come before
// the client is ready, to send them right after `initialized`: the restart
// rule pauses goals while `initialize` opens the folders, and other clients
// (or this one) may write between the answer to `initialize` and
// `initialized` (docs/protocol.md §2.3). Beyond maxEarlyNotes they are
// dropped (the client sees a revision gap and re-reads, docs/protocol.md §4).
func (c *connection) holdEarly(notes []*jsonrpc.Notification) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.state == stateReady: // initialized came meanwhile
		c.sendNotes(notes)
	case c.state == stateShutdown:
	case len(c.early)+len(notes) > maxEarlyNotes:
		c.log.Debug("notifications before initialized dropped", "held", len(c.early), "dropped", len(notes))
	default:
		c.early = append(c.early, notes...)
	}
}

func (c *connection) sendNotes(notes []*jsonrpc.Notification) {
	for _, note := range notes {
		if err := c.rpc.TryNotifyEncoded(note); err != nil {
			c.notSent(note.Method(), err)
		}
	}
}

// shutdown runs inline, so no request is read while it drains: the waits
// end, every request received before it is finished and answered, the
// notifications of their changes are sent, and then its own reply goes out
// (docs/protocol.md §2.2).
func (c *connection) shutdown(ctx context.Context, req *jsonrpc.Request) (any, error) {
	switch c.lifecycle() {
	case stateNew:
		return nil, jsonrpc.NewError(jsonrpc.CodeServerNotInitialized, "server not initialized: send initialize first")
	case stateShutdown:
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "shutdown was already received")
	}
	c.client.EndWaits()
	if err := c.rpc.Settle(ctx); err != nil {
		return nil, err
	}
	if err := c.srv.fannedOut(ctx); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.state = stateShutdown
	c.mu.Unlock()
	return nil, nil
}

func (c *connection) exit(ctx context.Context, req *jsonrpc.Request) (any, error) {
	if c.opts.OnExit != nil {
		c.opts.OnExit()
	}
	c.peerEnded()
	return nil, nil
}

func (c *connection) didChangeFolders(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p protocol.DidChangeWorkspaceFoldersParams
	if err := json.Unmarshal(req.Params, &p); err != nil {
		c.log.Warn("bad workspace/didChangeWorkspaceFolders", "err", err)
		return nil, nil
	}
	for _, f := range p.Event.Removed {
		if err := c.client.RemoveFolder(f.URI); err != nil {
			c.log.Warn("workspace folder not removed", "folder", f.URI, "err", err)
		}
	}
	for _, f := range p.Event.Added {
		c.addFolder(f.URI)
	}
	return nil, nil
}

func (c *connection) didChangeConfiguration(ctx context.Context, req *jsonrpc.Request) (any, error) {
	unknown, err := c.client.ConfigureSettings(req.Params)
	if err != nil {
		c.log.Warn("settings not applied", "err", err)
		c.tellUser("agentd: settings not applied: " + err.Error())
		return nil, nil
	}
	c.warnUnknown(unknown)
	return nil, nil
}

// warnUnknown logs unknown option keys, once per connection (docs/protocol.md §2).
func (c *connection) warnUnknown(keys []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(keys) == 0 || c.warnedKeys {
		return
	}
	c.warnedKeys = true
	c.log.Warn("unknown agentd options ignored", "keys", keys)
}

// executeCommandParams is ExecuteCommandParams with the arguments kept raw,
// so that commands decode them strictly into typed structs.
type executeCommandParams struct {
	Command   string          `json:"command"`
	Arguments json.RawMessage `json:"arguments"`
}

// decodeExecuteParams decodes params as json.Unmarshal into
// executeCommandParams does, in one pass over the (large) arguments instead
// of a validation, a decode and a copy (docs/performance.md): when every key
// is "command" or "arguments" exactly, the command is decoded from its own
// bytes and the arguments are a slice of params; any other object (keys
// that json.Unmarshal matches ignoring case, unknown keys) is decoded by
// json.Unmarshal itself.
func decodeExecuteParams(params json.RawMessage) (executeCommandParams, error) {
	var p executeCommandParams
	members, ok := jsonin.Members(params)
	for _, m := range members {
		ok = ok && (m.Key == "command" || m.Key == "arguments")
	}
	if !ok {
		return p, json.Unmarshal(params, &p)
	}
	for _, m := range members { // a key given twice: the last counts
		if m.Key == "arguments" {
			p.Arguments = m.Value
		} else if err := json.Unmarshal(m.Value, &p.Command); err != nil {
			return p, err
		}
	}
	return p, nil
}

// executeCommand resolves a command when its request arrives (on the read
// goroutine, in order) and returns the handler that runs it: after the
// earlier requests on the same state when it is ordered, at once otherwise
// (docs/protocol.md §2.2). A request that cannot be
// resolved is answered at once.
func (c *connection) executeCommand(req *jsonrpc.Request) (jsonrpc.Handler, bool) {
	p, err := decodeExecuteParams(req.Params)
	if err != nil || p.Command == "" {
		return fail(jsonrpc.NewError(jsonrpc.CodeInvalidParams, "workspace/executeCommand needs params {command: string, arguments?: [object]}")), true
	}
	cmd, err := c.client.Prepare(p.Command, p.Arguments)
	if err != nil {
		return fail(toRPCError(context.Background(), err)), true
	}
	run := func(ctx context.Context) (any, error) {
		res, err := cmd.Run(ctx)
		if err != nil {
			return nil, toRPCError(ctx, err)
		}
		return res, nil
	}
	folder, session, ordered := cmd.Scope()
	if !ordered {
		return func(ctx context.Context, _ *jsonrpc.Request) (any, error) { return run(ctx) }, false
	}
	t := c.order.take(folder, session)
	return func(ctx context.Context, _ *jsonrpc.Request) (any, error) {
		if err := t.wait(ctx); err != nil {
			return nil, err
		}
		defer t.finish()
		return run(commands.WithOrderRelease(ctx, t.finish))
	}, false
}

// toRPCError maps a command error to JSON-RPC (docs/protocol.md §3): args.invalid
// → -32602; any other coded refusal → -32803 with data {code, ...}; a
// cancelled request → -32800; anything else → -32603.
func toRPCError(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return err
	}
	code := wire.ErrorCode(err)
	switch code {
	case "":
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	case wire.CodeArgsInvalid:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error(), Data: map[string]any{"code": code}}
	}
	data := map[string]any{}
	var withData interface{ ErrorData() map[string]any }
	if errors.As(err, &withData) {
		for k, v := range withData.ErrorData() {
			data[k] = v
		}
	}
	data["code"] = code
	return &jsonrpc.Error{Code: jsonrpc.CodeRequestFailed, Message: err.Error(), Data: data}
}
