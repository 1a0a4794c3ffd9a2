// Package lsptest is the one LSP test client of agentd: the end-to-end
// tests, the reliability suite and the benchmark (tests/bench) talk to the
// real binary through it, over a started process's pipes (Start) or the
// shared daemon's Unix socket (Dial).
//
// Conn is the core, error-returning and usable from a main program: it
// frames and writes requests and notifications, reads every frame on its
// own goroutine, routes responses by id (also ids a test wrote by hand, see
// Expect), keeps notifications and server→client requests for Await
// (answering each request with null), and keeps responses nobody waits for
// (TakeStrays). Raw writes
// (Write, SendBody) go through the same writer, so a test can mix hostile
// bytes with ordinary calls. Client wraps a Conn for tests: it takes a
// testing.TB, bounds every wait and fails the test instead of returning
// errors.
//
// Unless Options.Lenient is set, every message the server writes must also
// decode as JSON-RPC 2.0 with go.lsp.dev/jsonrpc2, a third-party
// implementation, so the tests check that a client other than ours reads
// agentd's output (docs/protocol.md §1).
//
// lsptest speaks only the wire: it must not import any package of this
// module, so that a test sees what a client sees.
package lsptest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// Message is one JSON-RPC message read from the server: a response (ID and
// Result or Error), a notification (Method, Params) or a server→client
// request (ID and Method).
type Message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
}

// Error is a JSON-RPC error response (docs/protocol.md §1); Data is the
// error's data member as sent, nil when absent.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (e *Error) Error() string { return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message) }

// DataCode is the error's data.code (agentd's error code, "todo.conflict"),
// or "" when there is none.
func (e *Error) DataCode() string {
	var d struct{ Code string }
	json.Unmarshal(e.Data, &d)
	return d.Code
}

// DataField is the member name of the error's data object as sent, or nil.
func (e *Error) DataField(name string) json.RawMessage {
	var d map[string]json.RawMessage
	json.Unmarshal(e.Data, &d)
	return d[name]
}

// Options configure a Conn. The hooks run on the read goroutine, in the
// order the server wrote the messages, and must not block.
type Options struct {
	// Name labels the connection in errors ("stdio", "client 3").
	Name string
	// OnBody, if set, sees every message body first; true means handled:
	// the body is neither decoded nor kept. For load tests that would
	// otherwise decode hundreds of thousands of notifications.
	OnBody func(body []byte) bool
	// OnNote, if set, gets every notification and server→client request
	// instead of the Conn keeping it for Await and NotesOf.
	OnNote func(*Message)
	// Lenient skips the go.lsp.dev/jsonrpc2 check of every message: for
	// hostile-input tests, whose answers carry ids that library cannot
	// represent (null, beyond 32 bits).
	Lenient bool
}

// Conn is a JSON-RPC 2.0 client connection with LSP base-protocol framing
// (Content-Length headers). It is safe for concurrent use.
type Conn struct {
	o       Options
	w       io.Writer
	wmu     sync.Mutex
	close   func() error
	release func() error // Dial: closes the socket

	mu        sync.Mutex
	nextID    int64
	pending   map[string]chan *Message
	notes     []*Message
	strays    []*Message
	violation error         // the first message go.lsp.dev/jsonrpc2 could not decode
	changed   chan struct{} // closed and replaced on every kept note or stray
	done      chan struct{} // closed when the read loop ends
	readErr   error
}

// NewConn runs a client that reads r and writes w; closeFn (may be nil)
// ends the connection, at least its writing side.
func NewConn(r io.Reader, w io.Writer, closeFn func() error, o Options) *Conn {
	if o.Name == "" {
		o.Name = "client"
	}
	c := &Conn{o: o, w: w, close: closeFn, pending: map[string]chan *Message{}, changed: make(chan struct{}), done: make(chan struct{})}
	go c.readLoop(bufio.NewReaderSize(r, 64<<10))
	return c
}

// Dial connects to the shared daemon's Unix socket at path. Close half-closes
// the socket (the daemon sees the end of the input); Release closes it.
func Dial(path string, o Options) (*Conn, error) {
	nc, err := net.Dial("unix", path)
	if err != nil {
		return nil, err
	}
	uc := nc.(*net.UnixConn)
	c := NewConn(nc, nc, uc.CloseWrite, o)
	c.release = nc.Close
	return c, nil
}

func (c *Conn) readLoop(r *bufio.Reader) {
	defer close(c.done)
	for {
		body, err := ReadFrame(r)
		if err != nil {
			c.mu.Lock()
			c.readErr = err
			for id, ch := range c.pending {
				close(ch)
				delete(c.pending, id)
			}
			c.signal()
			c.mu.Unlock()
			return
		}
		if c.o.OnBody != nil && c.o.OnBody(body) {
			continue
		}
		m := &Message{}
		if err := json.Unmarshal(body, m); err != nil {
			c.violate(fmt.Errorf("%s: the server wrote a body that is not JSON: %q", c.o.Name, body))
			continue
		}
		if !c.o.Lenient {
			if _, err := jsonrpc2.DecodeMessage(body); err != nil {
				c.violate(fmt.Errorf("%s: go.lsp.dev/jsonrpc2 cannot read %q: %v", c.o.Name, body, err))
			}
		}
		switch {
		case m.Method != "":
			if c.o.OnNote != nil {
				c.o.OnNote(m)
			} else {
				c.mu.Lock()
				c.notes = append(c.notes, m)
				c.signal()
				c.mu.Unlock()
			}
			if m.ID != nil { // a server→client request
				c.SendBody(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":null}`, m.ID))
			}
		default:
			c.mu.Lock()
			if ch, ok := c.pending[string(m.ID)]; ok {
				delete(c.pending, string(m.ID))
				ch <- m
			} else {
				c.strays = append(c.strays, m)
				c.signal()
			}
			c.mu.Unlock()
		}
	}
}

func (c *Conn) violate(err error) {
	c.mu.Lock()
	if c.violation == nil {
		c.violation = err
	}
	c.mu.Unlock()
}

// Violation is the first message the server wrote that was not JSON or
// that go.lsp.dev/jsonrpc2 could not decode, or nil.
func (c *Conn) Violation() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.violation
}

// signal wakes waiters; c.mu is held.
func (c *Conn) signal() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// ReadFrame reads one message body framed with a Content-Length header
// (header names in any case; other headers are skipped; blank lines before
// the headers are skipped). It is the test side's own reader, independent
// of the server's.
func ReadFrame(r *bufio.Reader) ([]byte, error) {
	n := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if n < 0 {
				continue
			}
			break
		}
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(k), "Content-Length") {
			if n, err = strconv.Atoi(strings.TrimSpace(v)); err != nil {
				return nil, fmt.Errorf("bad Content-Length from the server: %q", line)
			}
		}
	}
	body := make([]byte, n)
	_, err := io.ReadFull(r, body)
	return body, err
}

// Write sends s as it is, unframed.
func (c *Conn) Write(s string) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := io.WriteString(c.w, s)
	return err
}

// SendBody frames body with a correct Content-Length and sends it.
func (c *Conn) SendBody(body string) error {
	return c.Write("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}

// Expect registers interest in the response whose id is the JSON text id;
// call it before writing the request. The channel gets the response, or is
// closed when the connection ends first.
func (c *Conn) Expect(id string) <-chan *Message {
	ch := make(chan *Message, 1)
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	return ch
}

// Wait returns the response on ch (from Expect), or an error naming what
// when the connection ends or ctx is done first.
func (c *Conn) Wait(ctx context.Context, ch <-chan *Message, what string) (*Message, error) {
	select {
	case m, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("%s: connection ended before the response to %s (%v)", c.o.Name, what, c.ReadErr())
		}
		return m, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: no response to %s: %w", c.o.Name, what, ctx.Err())
	}
}

// Call sends a request with a fresh numeric id (params null when params is
// nil) and returns its response, which carries either Result or Error.
func (c *Conn) Call(ctx context.Context, method string, params any) (*Message, error) {
	c.mu.Lock()
	c.nextID++
	id := strconv.FormatInt(c.nextID, 10)
	c.mu.Unlock()
	body, err := encode(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	ch := c.Expect(id)
	if err := c.SendBody(body); err != nil {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return nil, fmt.Errorf("%s: writing %s: %w", c.o.Name, method, err)
	}
	return c.Wait(ctx, ch, method)
}

// CallResult is Call that returns a JSON-RPC error as *Error and decodes
// the result into result (may be nil).
func (c *Conn) CallResult(ctx context.Context, method string, params, result any) error {
	m, err := c.Call(ctx, method, params)
	if err != nil {
		return err
	}
	if m.Error != nil {
		return m.Error
	}
	if result != nil {
		if err := json.Unmarshal(m.Result, result); err != nil {
			return fmt.Errorf("%s: decoding the %s result %s: %w", c.o.Name, method, m.Result, err)
		}
	}
	return nil
}

// ExecParams are workspace/executeCommand params with args as the one
// ARGS object (no arguments when args is nil), docs/protocol.md §3.
func ExecParams(command string, args any) map[string]any {
	params := map[string]any{"command": command}
	if args != nil {
		params["arguments"] = []any{args}
	}
	return params
}

// Exec runs an agentd command (workspace/executeCommand with one ARGS
// object, none when args is nil) and decodes its result into result (may be
// nil). A JSON-RPC error comes back as *Error.
func (c *Conn) Exec(ctx context.Context, command string, args, result any) error {
	return c.CallResult(ctx, "workspace/executeCommand", ExecParams(command, args), result)
}

// Execute runs an agentd command and returns its result as sent: Conn is
// the loop.Executor of the tests and the benchmark.
func (c *Conn) Execute(ctx context.Context, command string, args any) (json.RawMessage, error) {
	var raw json.RawMessage
	err := c.Exec(ctx, command, args, &raw)
	return raw, err
}

// Notify sends a notification (params null when params is nil).
func (c *Conn) Notify(method string, params any) error {
	body, err := encode(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	if err != nil {
		return err
	}
	return c.SendBody(body)
}

// encode is v as JSON without HTML escaping, so that params given as
// json.RawMessage are sent as they are (docs/performance.md: the floor
// server answers exactly the bytes it was given).
func encode(v any) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// Init is what Initialize sends. Folders become workspaceFolders (none:
// the member is left out); RootFolder, if set, becomes rootUri (else it is
// null); Options is initializationOptions (docs/commands.md settings).
type Init struct {
	Folders    []string
	RootFolder string
	Options    any
	ProcessID  int // 0: null
}

// Initialize sends initialize, then the initialized notification, and
// returns the initialize result.
func (c *Conn) Initialize(ctx context.Context, in Init) (map[string]any, error) {
	params := map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{}}
	if in.ProcessID != 0 {
		params["processId"] = in.ProcessID
	}
	if in.RootFolder != "" {
		params["rootUri"] = FileURI(in.RootFolder)
	}
	if in.Folders != nil {
		wf := make([]map[string]string, len(in.Folders))
		for i, f := range in.Folders {
			wf[i] = map[string]string{"uri": FileURI(f), "name": baseName(f)}
		}
		params["workspaceFolders"] = wf
	}
	if in.Options != nil {
		params["initializationOptions"] = in.Options
	}
	var res map[string]any
	if err := c.CallResult(ctx, "initialize", params, &res); err != nil {
		return nil, fmt.Errorf("%s: initialize: %w", c.o.Name, err)
	}
	return res, c.Notify("initialized", map[string]any{})
}

// Shutdown sends shutdown and, when it is answered, exit.
func (c *Conn) Shutdown(ctx context.Context) error {
	if err := c.CallResult(ctx, "shutdown", nil, nil); err != nil {
		return err
	}
	return c.Notify("exit", nil)
}

// Await waits for a notification of method whose params satisfy match (nil:
// any) and returns its params. Notifications received before are searched
// too, so there is no race with the action that causes it.
func (c *Conn) Await(ctx context.Context, method string, match func(json.RawMessage) bool) (json.RawMessage, error) {
	for i := 0; ; {
		c.mu.Lock()
		for ; i < len(c.notes); i++ {
			if n := c.notes[i]; n.Method == method && (match == nil || match(n.Params)) {
				c.mu.Unlock()
				return n.Params, nil
			}
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: no %s notification matched (%w); got %v", c.o.Name, method, ctx.Err(), c.Methods())
		}
	}
}

// NotesOf returns the params of the notifications of method received so
// far, oldest first.
func (c *Conn) NotesOf(method string) []json.RawMessage {
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

// Methods lists the methods of the notifications received so far.
func (c *Conn) Methods() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var m []string
	for _, n := range c.notes {
		m = append(m, n.Method)
	}
	return m
}

// Changed is closed when the next notification (or stray response) is
// kept: read it before looking at NotesOf, then wait on it, for waits that
// Await's predicate cannot express.
func (c *Conn) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// TakeStrays returns and forgets the responses received so far that no
// request waited for (errors with id null, answers to ids never expected).
func (c *Conn) TakeStrays() []*Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.strays
	c.strays = nil
	return s
}

// Done is closed when the server has ended the connection (or it broke).
func (c *Conn) Done() <-chan struct{} { return c.done }

// ReadErr is why reading ended (io.EOF when the server closed), or nil.
func (c *Conn) ReadErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readErr
}

// Close ends the client's side of the connection (closes what it writes
// to); the server sees the end of its input.
func (c *Conn) Close() error {
	if c.close == nil {
		return errors.New("lsptest: this connection cannot be closed")
	}
	return c.close()
}

// Release closes a connection made by Dial both ways; it does nothing on
// other connections.
func (c *Conn) Release() {
	if c.release != nil {
		c.release()
	}
}

func baseName(path string) string {
	path = strings.TrimRight(path, "/")
	return path[strings.LastIndexByte(path, '/')+1:]
}

// FileURI is the file:// URI of an absolute path, percent-encoded the way
// VS Code encodes it.
func FileURI(path string) string {
	var b strings.Builder
	b.WriteString("file://")
	for _, r := range []byte(path) {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.IndexByte("-._~/", r) >= 0:
			b.WriteByte(r)
		default:
			fmt.Fprintf(&b, "%%%02X", r)
		}
	}
	return b.String()
}
