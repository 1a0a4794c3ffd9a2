package jsonrpc_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/lsp/jsonrpc"
	"github.com/google/go-cmp/cmp"
)

// rpcWait bounds every wait in these tests; it guards against hangs and is never
// a timing claim. It is long enough for a loaded machine (the race detector,
// one CPU, other processes busy: 48 MiB of replies took over 10 s there).
const rpcWait = time.Minute

// rpcLog is a goroutine-safe buffer for the Conn's logs.
type rpcLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *rpcLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *rpcLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// rpcPeer is the far end of a Conn running over net.Pipe.
type rpcPeer struct {
	t      testing.TB
	conn   net.Conn
	c      *jsonrpc.Conn
	cancel context.CancelFunc
	frames chan map[string]json.RawMessage
	runErr chan error
	logs   *rpcLog
}

// startRPC runs a Conn with route and returns its peer; cleanup closes the
// peer's end and waits for Run.
func startRPC(t testing.TB, route jsonrpc.Router, opts jsonrpc.Options) *rpcPeer {
	t.Helper()
	server, client := net.Pipe()
	p := &rpcPeer{
		t:      t,
		conn:   client,
		frames: make(chan map[string]json.RawMessage, 4096),
		runErr: make(chan error, 1),
		logs:   &rpcLog{},
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(p.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	p.c = jsonrpc.NewConn(server, route, opts)
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	go func() { p.runErr <- p.c.Run(ctx) }()
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		r := bufio.NewReader(client)
		for {
			body, err := readFrame(r)
			if err != nil {
				return
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(body, &m); err != nil {
				t.Errorf("Conn wrote a body that is not a JSON object: %q", body)
				return
			}
			p.frames <- m
		}
	}()
	t.Cleanup(func() {
		client.Close()
		p.wait()
		cancel()
		<-readerDone
	})
	return p
}

// readFrame reads one message as the Conn writes it: exactly one header.
func readFrame(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(line, "Content-Length: "), "\r\n"))
	if err != nil {
		return nil, fmt.Errorf("bad header line %q", line)
	}
	if blank, err := r.ReadString('\n'); err != nil || blank != "\r\n" {
		return nil, fmt.Errorf("got %q after the header, want a blank line", blank)
	}
	body := make([]byte, n)
	_, err = io.ReadFull(r, body)
	return body, err
}

// wait returns Run's result, failing the test if Run does not return.
func (p *rpcPeer) wait() error {
	p.t.Helper()
	select {
	case err := <-p.runErr:
		p.runErr <- err // keep it for a second wait
		return err
	case <-time.After(rpcWait):
		p.t.Fatalf("Run did not return within %v", rpcWait)
		return nil
	}
}

func (p *rpcPeer) write(raw string) {
	p.t.Helper()
	p.conn.SetWriteDeadline(time.Now().Add(rpcWait))
	if _, err := io.WriteString(p.conn, raw); err != nil {
		p.t.Fatalf("writing to the Conn: %v", err)
	}
}

// send writes body framed with a correct Content-Length.
func (p *rpcPeer) send(body string) { p.t.Helper(); p.write(rpcMsg(body)) }

func rpcMsg(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }

func rpcCall(id any, method, params string) string {
	idJSON := fmt.Sprint(id)
	if params == "" {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q}`, idJSON, method)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, idJSON, method, params)
}

// next returns the next message the Conn wrote.
func (p *rpcPeer) next() map[string]json.RawMessage {
	p.t.Helper()
	select {
	case m := <-p.frames:
		return m
	case <-time.After(rpcWait):
		p.t.Fatalf("no message from the Conn within %v; logs:\n%s", rpcWait, p.logs)
		return nil
	}
}

// waitLogs polls the Conn's logs until ok accepts them.
func (p *rpcPeer) waitLogs(ok func(string) bool, want string) {
	p.t.Helper()
	for deadline := time.Now().Add(rpcWait); !ok(p.logs.String()); {
		if time.Now().After(deadline) {
			p.t.Fatalf("got logs:\n%s\nwant %s", p.logs, want)
		}
		time.Sleep(time.Millisecond)
	}
}

// rpcReply is the comparable summary of a response.
type rpcReply struct {
	ID        string
	HasResult bool
	Result    string
	Code      int64
	Message   string
	Data      string
}

func (p *rpcPeer) nextReply() rpcReply {
	p.t.Helper()
	m := p.next()
	if got := string(m["jsonrpc"]); got != `"2.0"` {
		p.t.Errorf("jsonrpc: got %s, want \"2.0\"", got)
	}
	r := rpcReply{ID: string(m["id"])}
	if res, ok := m["result"]; ok {
		r.HasResult, r.Result = true, string(res)
	}
	if raw, ok := m["error"]; ok {
		var e struct {
			Code    int64           `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(raw, &e); err != nil {
			p.t.Fatalf("error object %s: %v", raw, err)
		}
		r.Code, r.Message, r.Data = e.Code, e.Message, string(e.Data)
	}
	return r
}

// echo answers with its params.
func echo(_ context.Context, req *jsonrpc.Request) (any, error) { return req.Params, nil }

// routes builds a Router from a method table; methods not in it get a nil Handler.
func routes(table map[string]jsonrpc.Handler) jsonrpc.Router {
	return func(req *jsonrpc.Request) (jsonrpc.Handler, bool) {
		if h, ok := table[req.Method]; ok {
			return h, false
		}
		if req.Method == "echo" {
			return echo, false
		}
		return nil, false
	}
}

// checkEcho sends an echo call and expects its reply: the connection goes on.
func (p *rpcPeer) checkEcho(id int) {
	p.t.Helper()
	p.send(rpcCall(id, "echo", `{"n":1}`))
	want := rpcReply{ID: strconv.Itoa(id), HasResult: true, Result: `{"n":1}`}
	if diff := cmp.Diff(want, p.nextReply()); diff != "" {
		p.t.Errorf("follow-up echo call (-want +got):\n%s", diff)
	}
}

func TestFraming(t *testing.T) {
	body := rpcCall(1, "echo", `{"text":"héllo ✓"}`)
	tests := []struct {
		name  string
		input string
	}{
		{"canonical", rpcMsg(body)},
		{"lowercase header", fmt.Sprintf("content-length: %d\r\n\r\n%s", len(body), body)},
		{"uppercase header", fmt.Sprintf("CONTENT-LENGTH: %d\r\n\r\n%s", len(body), body)},
		{"no space after colon", fmt.Sprintf("Content-Length:%d\r\n\r\n%s", len(body), body)},
		{"content type after", fmt.Sprintf("Content-Length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n%s", len(body), body)},
		{"content type before", fmt.Sprintf("Content-Type: application/vscode-jsonrpc\r\nContent-Length: %d\r\n\r\n%s", len(body), body)},
		{"unknown header", fmt.Sprintf("X-Trace: abc\r\nContent-Length: %d\r\n\r\n%s", len(body), body)},
		{"bare LF", fmt.Sprintf("Content-Length: %d\n\n%s", len(body), body)},
		{"blank line before", "\r\n" + rpcMsg(body)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startRPC(t, routes(nil), jsonrpc.Options{})
			p.write(tt.input)
			want := rpcReply{ID: "1", HasResult: true, Result: `{"text":"héllo ✓"}`}
			if diff := cmp.Diff(want, p.nextReply()); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
			p.checkEcho(2)
		})
	}
}

func TestMalformedBody(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		wantID   string
		wantCode int64
		wantText string
	}{
		{"truncated JSON", `{"jsonrpc":"2.0","id":1,"method":"echo"`, "null", jsonrpc.CodeParseError, "parse error"},
		{"not JSON", `hello`, "null", jsonrpc.CodeParseError, "parse error"},
		{"empty body", ``, "null", jsonrpc.CodeParseError, "parse error"},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"echo"}]`, "null", jsonrpc.CodeInvalidRequest, "batches are not supported"},
		{"number", `42`, "null", jsonrpc.CodeInvalidRequest, "not a JSON object"},
		{"null", `null`, "null", jsonrpc.CodeInvalidRequest, "not a JSON object"},
		{"missing method", `{"jsonrpc":"2.0","id":5}`, "5", jsonrpc.CodeInvalidRequest, `"method" is missing`},
		{"method not a string", `{"jsonrpc":"2.0","id":6,"method":1}`, "6", jsonrpc.CodeInvalidRequest, `"method" must be a string`},
		{"method null", `{"jsonrpc":"2.0","id":6,"method":null}`, "6", jsonrpc.CodeInvalidRequest, `"method" must be a string`},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":7,"method":"echo"}`, "7", jsonrpc.CodeInvalidRequest, `"jsonrpc" must be "2.0"`},
		{"jsonrpc missing", `{"id":"x","method":"echo"}`, `"x"`, jsonrpc.CodeInvalidRequest, `"jsonrpc" must be "2.0"`},
		{"id object", `{"jsonrpc":"2.0","id":{"a":1},"method":"echo"}`, "null", jsonrpc.CodeInvalidRequest, `"id" must be a number or a string`},
		{"id array", `{"jsonrpc":"2.0","id":[1],"method":"echo"}`, "null", jsonrpc.CodeInvalidRequest, `"id" must be a number or a string`},
		{"id bool", `{"jsonrpc":"2.0","id":true,"method":"echo"}`, "null", jsonrpc.CodeInvalidRequest, `"id" must be a number or a string`},
		{"id null", `{"jsonrpc":"2.0","id":null,"method":"echo"}`, "null", jsonrpc.CodeInvalidRequest, `"id" must be a number or a string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startRPC(t, routes(nil), jsonrpc.Options{})
			p.send(tt.body)
			got := p.nextReply()
			if got.ID != tt.wantID || got.Code != tt.wantCode || got.HasResult {
				t.Errorf("got id %s code %d (result %v), want id %s code %d and no result", got.ID, got.Code, got.HasResult, tt.wantID, tt.wantCode)
			}
			if !strings.Contains(got.Message, tt.wantText) {
				t.Errorf("got message %q, want it to contain %q", got.Message, tt.wantText)
			}
			p.checkEcho(100)
		})
	}
}

func TestOversizedMessage(t *testing.T) {
	const limit = 200
	pad := func(n int) string { // a valid call of exactly n bytes
		base := rpcCall(1, "echo", `""`)
		return rpcCall(1, "echo", `"`+strings.Repeat("x", n-len(base))+`"`)
	}
	tests := []struct {
		name    string
		size    int
		wantErr bool
	}{
		{"at the limit", limit, false},
		{"one over", limit + 1, true},
		{"far over", 100_000, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startRPC(t, routes(nil), jsonrpc.Options{MaxMessageBytes: limit})
			p.send(pad(tt.size))
			got := p.nextReply()
			if !tt.wantErr {
				if got.ID != "1" || got.Code != 0 {
					t.Fatalf("got id %s code %d, want id 1 answered", got.ID, got.Code)
				}
				return
			}
			if got.ID != "null" || got.Code != jsonrpc.CodeInvalidRequest {
				t.Errorf("got id %s code %d, want id null code %d", got.ID, got.Code, jsonrpc.CodeInvalidRequest)
			}
			wantText := fmt.Sprintf("message of %d bytes exceeds the limit of %d bytes", tt.size, limit)
			if got.Message != wantText {
				t.Errorf("got message %q, want %q", got.Message, wantText)
			}
			p.checkEcho(2)
		})
	}
}

// TestOversizedMessageIsStreamed sends a 64 MiB body and checks the Conn did not
// allocate anything near its size while discarding it.
func TestOversizedMessageIsStreamed(t *testing.T) {
	const size = 64 << 20
	p := startRPC(t, routes(nil), jsonrpc.Options{})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	p.write(fmt.Sprintf("Content-Length: %d\r\n\r\n", size))
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for sent := 0; sent < size; sent += len(chunk) {
		p.conn.SetWriteDeadline(time.Now().Add(rpcWait))
		if _, err := p.conn.Write(chunk); err != nil {
			t.Fatalf("writing the body: %v", err)
		}
	}
	if got := p.nextReply(); got.Code != jsonrpc.CodeInvalidRequest {
		t.Errorf("got code %d, want %d", got.Code, jsonrpc.CodeInvalidRequest)
	}
	p.checkEcho(2)
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > size/4 {
		t.Errorf("got %d bytes allocated while discarding a %d-byte body, want under %d", alloc, size, size/4)
	}
}

// TestResync covers broken headers: each input is answered -32700 (id null), then
// the call with id 2 that follows is answered.
func TestResync(t *testing.T) {
	good := rpcMsg(rpcCall(2, "echo", `{"n":1}`))
	tests := []struct {
		name  string
		input string
	}{
		{"negative length", "Content-Length: -5\r\n\r\n{}" + good},
		{"non-numeric length", "Content-Length: abc\r\n\r\n{}" + good},
		{"empty length", "Content-Length:\r\n\r\n{}" + good},
		{"length overflows int64", "Content-Length: 99999999999999999999\r\n\r\n{}" + good},
		{"missing length", "Content-Type: text/plain\r\n\r\n{\"a\":1}" + good},
		{"line without colon", "hello there\r\n" + good},
		{"junk lines before next header", "Content-Length: x\r\n\r\njunk\r\nmore junk {\r\n" + good},
		{"header inside junk line", "Content-Length: x\r\n\r\nJUNKcontent-LENGTH: " + good[len("Content-Length: "):]},
		{"long junk line", "Content-Length: x\r\n\r\n" + strings.Repeat("z", 100_000) + good},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startRPC(t, routes(nil), jsonrpc.Options{})
			p.write(tt.input)
			got := p.nextReply()
			if got.ID != "null" || got.Code != jsonrpc.CodeParseError {
				t.Errorf("got id %s code %d (%q), want id null code %d", got.ID, got.Code, got.Message, jsonrpc.CodeParseError)
			}
			want := rpcReply{ID: "2", HasResult: true, Result: `{"n":1}`}
			if diff := cmp.Diff(want, p.nextReply()); diff != "" {
				t.Errorf("reply after resync (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLengthInCharacters: a peer that counted characters instead of bytes leaves
// the tail of its body before the next header, on the same line.
func TestLengthInCharacters(t *testing.T) {
	p := startRPC(t, routes(nil), jsonrpc.Options{})
	first := rpcCall(1, "echo", `"ééé✓✓"`)
	p.write(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len([]rune(first)), first) + rpcMsg(rpcCall(2, "echo", `"ok"`)))
	if got := p.nextReply(); got.ID != "null" || got.Code != jsonrpc.CodeParseError {
		t.Errorf("got id %s code %d, want id null code %d for the truncated body", got.ID, got.Code, jsonrpc.CodeParseError)
	}
	want := rpcReply{ID: "2", HasResult: true, Result: `"ok"`}
	if diff := cmp.Diff(want, p.nextReply()); diff != "" {
		t.Errorf("reply to the next message (-want +got):\n%s", diff)
	}
}

// rpcStream is a transport that reads a fixed input and discards output.
type rpcStream struct {
	io.Reader
	mu  sync.Mutex
	out bytes.Buffer
}

func (s *rpcStream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.Write(p)
}

func (s *rpcStream) Close() error { return nil }

func TestEndOfInput(t *testing.T) {
	good := rpcMsg(rpcCall(1, "echo", ""))
	tests := []struct {
		name           string
		input          string
		wantUnexpected bool // else Run returns nil
	}{
		{"empty input", "", false},
		{"after a message", good, false},
		{"blank lines only", "\r\n\r\n", false},
		{"inside a header name", "Content-Len", true},
		{"before the blank line", "Content-Length: 10\r\n", true},
		{"inside the body", "Content-Length: 10\r\n\r\n{\"a\"", true},
		{"while resynchronising", "Content-Length: x\r\n\r\ngarbage", true},
		{"while discarding an oversized body", "Content-Length: 1000\r\n\r\nabc", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := jsonrpc.NewConn(&rpcStream{Reader: strings.NewReader(tt.input)}, routes(nil), jsonrpc.Options{MaxMessageBytes: 100})
			err := c.Run(context.Background())
			if got := errors.Is(err, io.ErrUnexpectedEOF); got != tt.wantUnexpected || (!tt.wantUnexpected && err != nil) {
				t.Errorf("got Run error %v, want unexpected EOF: %v", err, tt.wantUnexpected)
			}
		})
	}
}

func TestIDsEchoedVerbatim(t *testing.T) {
	for _, id := range []string{`1`, `0`, `-7`, `12345678901234567890`, `1e20`, `1.5`, `"abc"`, `""`, `"<&>"`, `"\u00e9"`, `"12345678901234567890"`} {
		t.Run(id, func(t *testing.T) {
			p := startRPC(t, routes(nil), jsonrpc.Options{})
			p.send(fmt.Sprintf(`{"jsonrpc":"2.0", "id": %s ,"method":"echo"}`, id))
			want := rpcReply{ID: id, HasResult: true, Result: "null"}
			if diff := cmp.Diff(want, p.nextReply()); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCancelRequest(t *testing.T) {
	tests := []struct {
		name     string
		id       string
		cancelID string
		outcome  func(ctx context.Context) (any, error)
		want     rpcReply
	}{
		{"number", `7`, `7`, ctxErr, rpcReply{ID: `7`, Code: jsonrpc.CodeRequestCancelled, Message: "request cancelled"}},
		{"string", `"abc"`, `"abc"`, ctxErr, rpcReply{ID: `"abc"`, Code: jsonrpc.CodeRequestCancelled, Message: "request cancelled"}},
		{"big number", `12345678901234567890`, ` 12345678901234567890 `, ctxErr, rpcReply{ID: `12345678901234567890`, Code: jsonrpc.CodeRequestCancelled, Message: "request cancelled"}},
		{"zero", `0`, `0`, ctxErr, rpcReply{ID: `0`, Code: jsonrpc.CodeRequestCancelled, Message: "request cancelled"}},
		{"negative", `-1`, `-1`, ctxErr, rpcReply{ID: `-1`, Code: jsonrpc.CodeRequestCancelled, Message: "request cancelled"}},
		{"empty string", `""`, `""`, ctxErr, rpcReply{ID: `""`, Code: jsonrpc.CodeRequestCancelled, Message: "request cancelled"}},
		{"fraction", `1.5`, `1.5`, ctxErr, rpcReply{ID: `1.5`, Code: jsonrpc.CodeRequestCancelled, Message: "request cancelled"}},
		{"exponent", `1e3`, `1e3`, ctxErr, rpcReply{ID: `1e3`, Code: jsonrpc.CodeRequestCancelled, Message: "request cancelled"}},
		{"long string", strconv.Quote(strings.Repeat("x", 1<<16)), strconv.Quote(strings.Repeat("x", 1<<16)), ctxErr, rpcReply{ID: strconv.Quote(strings.Repeat("x", 1<<16)), Code: jsonrpc.CodeRequestCancelled, Message: "request cancelled"}},
		{"domain error after cancel", `8`, `8`,
			func(context.Context) (any, error) {
				return nil, fmt.Errorf("x: %w", jsonrpc.NewError(jsonrpc.CodeRequestFailed, "refused"))
			},
			rpcReply{ID: `8`, Code: jsonrpc.CodeRequestCancelled, Message: "request cancelled"}},
		{"result after cancel", `9`, `9`,
			func(context.Context) (any, error) { return "done anyway", nil },
			rpcReply{ID: `9`, HasResult: true, Result: `"done anyway"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var routed []string
			route := func(req *jsonrpc.Request) (jsonrpc.Handler, bool) {
				mu.Lock()
				routed = append(routed, req.Method)
				mu.Unlock()
				return func(ctx context.Context, _ *jsonrpc.Request) (any, error) {
					<-ctx.Done()
					return tt.outcome(ctx)
				}, false
			}
			p := startRPC(t, route, jsonrpc.Options{})
			p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"wait"}`, tt.id))
			p.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":%s}}`, tt.cancelID))
			if diff := cmp.Diff(tt.want, p.nextReply()); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff([]string{"wait"}, routed); diff != "" {
				t.Errorf("methods routed (-want +got):\n%s", diff)
			}
		})
	}
}

func ctxErr(ctx context.Context) (any, error) { return nil, ctx.Err() }

func TestCall(t *testing.T) {
	tests := []struct {
		name       string
		response   string // %s is the request's id
		wantResult string
		wantErr    *jsonrpc.Error
	}{
		{"result", `{"jsonrpc":"2.0","id":%s,"result":{"ok":true}}`, `{"ok":true}`, nil},
		{"null result", `{"jsonrpc":"2.0","id":%s,"result":null}`, `null`, nil},
		{"error", `{"jsonrpc":"2.0","id":%s,"error":{"code":-32803,"message":"no","data":{"k":1}}}`, "",
			&jsonrpc.Error{Code: jsonrpc.CodeRequestFailed, Message: "no", Data: json.RawMessage(`{"k":1}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startRPC(t, routes(nil), jsonrpc.Options{})
			type outcome struct {
				res json.RawMessage
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				res, err := p.c.Call(context.Background(), "client/do", map[string]int{"x": 1})
				done <- outcome{res, err}
			}()
			req := p.next()
			if got, want := string(req["method"]), `"client/do"`; got != want {
				t.Errorf("method: got %s, want %s", got, want)
			}
			if got, want := string(req["params"]), `{"x":1}`; got != want {
				t.Errorf("params: got %s, want %s", got, want)
			}
			if _, err := strconv.ParseInt(string(req["id"]), 10, 64); err != nil {
				t.Errorf("id: got %s, want a number", req["id"])
			}
			p.send(`{"jsonrpc":"2.0","id":424242,"result":"stray"}`) // unknown id: dropped
			p.send(fmt.Sprintf(tt.response, req["id"]))
			got := <-done
			if tt.wantErr != nil {
				var e *jsonrpc.Error
				if !errors.As(got.err, &e) {
					t.Fatalf("got error %v, want %v", got.err, tt.wantErr)
				}
				if diff := cmp.Diff(tt.wantErr, e); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				return
			}
			if got.err != nil || string(got.res) != tt.wantResult {
				t.Errorf("got %s, %v, want %s", got.res, got.err, tt.wantResult)
			}
			if !strings.Contains(p.logs.String(), "unknown id") {
				t.Errorf("got logs %q, want the stray response logged", p.logs)
			}
			p.checkEcho(3)
		})
	}
}

func TestCallCancelled(t *testing.T) {
	p := startRPC(t, routes(nil), jsonrpc.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := p.c.Call(ctx, "client/slow", nil)
		done <- err
	}()
	req := p.next()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	note := p.next()
	if got, want := string(note["method"]), `"$/cancelRequest"`; got != want {
		t.Errorf("method: got %s, want %s", got, want)
	}
	if got, want := string(note["params"]), fmt.Sprintf(`{"id":%s}`, req["id"]); got != want {
		t.Errorf("params: got %s, want %s", got, want)
	}
}

// TestCallTooLarge: a request over MaxMessageBytes is refused at once,
// naming both sizes, and never sent (the peer would answer it with id null,
// which no Call can match); the next call goes out as usual.
func TestCallTooLarge(t *testing.T) {
	p := startRPC(t, routes(nil), jsonrpc.Options{MaxMessageBytes: 100})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := p.c.Call(ctx, "client/big", map[string]string{"x": strings.Repeat("a", 100)})
	if !errors.Is(err, jsonrpc.ErrMessageTooLarge) || !strings.Contains(err.Error(), "client/big request of 164 bytes exceeds the limit of 100 bytes") {
		t.Fatalf("got %v, want ErrMessageTooLarge naming 164 and 100 bytes", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := p.c.Call(ctx, "client/small", nil)
		done <- err
	}()
	req := p.next()
	if got, want := string(req["method"]), `"client/small"`; got != want {
		t.Fatalf("first message sent: %s, want %s (the large one must not go out)", got, want)
	}
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":1}`, req["id"]))
	if err := <-done; err != nil {
		t.Errorf("small call: %v", err)
	}
}

func TestCallAfterClose(t *testing.T) {
	p := startRPC(t, routes(nil), jsonrpc.Options{})
	p.c.Close()
	p.wait()
	if _, err := p.c.Call(context.Background(), "x", nil); !errors.Is(err, jsonrpc.ErrConnClosed) {
		t.Errorf("Call: got %v, want ErrConnClosed", err)
	}
	if err := p.c.Notify("x", nil); !errors.Is(err, jsonrpc.ErrConnClosed) {
		t.Errorf("Notify: got %v, want ErrConnClosed", err)
	}
}

func TestPanicIsRecovered(t *testing.T) {
	boom := func(context.Context, *jsonrpc.Request) (any, error) { panic("kaboom") }
	tests := []struct {
		name  string
		route jsonrpc.Router
	}{
		{"handler", routes(map[string]jsonrpc.Handler{"boom": boom})},
		{"inline handler", func(req *jsonrpc.Request) (jsonrpc.Handler, bool) {
			if req.Method == "boom" {
				return boom, true
			}
			return routes(nil)(req)
		}},
		{"router", func(req *jsonrpc.Request) (jsonrpc.Handler, bool) {
			if req.Method == "boom" {
				panic("kaboom")
			}
			return routes(nil)(req)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startRPC(t, tt.route, jsonrpc.Options{})
			p.send(`{"jsonrpc":"2.0","method":"boom"}`) // a notification panics too
			p.send(rpcCall(1, "boom", ""))
			got := p.nextReply()
			if got.ID != "1" || got.Code != jsonrpc.CodeInternalError || !strings.Contains(got.Message, "internal error") || !strings.Contains(got.Message, "kaboom") {
				t.Errorf("got %+v, want id 1, code %d, a message naming the internal error and the panic", got, jsonrpc.CodeInternalError)
			}
			p.checkEcho(2)
			// The notification's handler may still be running: poll the logs.
			p.waitLogs(func(logs string) bool {
				return strings.Count(logs, "level=ERROR") == 2 && strings.Count(logs, "stack=") == 2
			}, "two Error-level logs with stacks")
		})
	}
}

func TestErrorMapping(t *testing.T) {
	domain := &jsonrpc.Error{Code: jsonrpc.CodeRequestFailed, Message: "goal exists", Data: map[string]string{"code": "goal.already_exists"}}
	tests := []struct {
		name   string
		result any
		err    error
		want   rpcReply
	}{
		{"jsonrpc error", nil, domain,
			rpcReply{ID: "1", Code: jsonrpc.CodeRequestFailed, Message: "goal exists", Data: `{"code":"goal.already_exists"}`}},
		{"wrapped keeps outer text", nil, fmt.Errorf("opening workspace: %w", domain),
			rpcReply{ID: "1", Code: jsonrpc.CodeRequestFailed, Message: "opening workspace: goal exists", Data: `{"code":"goal.already_exists"}`}},
		{"wrapped twice", nil, fmt.Errorf("a: %w", fmt.Errorf("b: %w", jsonrpc.NewError(jsonrpc.CodeInvalidParams, "bad %s", "x"))),
			rpcReply{ID: "1", Code: jsonrpc.CodeInvalidParams, Message: "a: b: bad x"}},
		{"plain error", nil, errors.New("disk full"),
			rpcReply{ID: "1", Code: jsonrpc.CodeInternalError, Message: "disk full"}},
		{"context canceled without cancelRequest", nil, context.Canceled,
			rpcReply{ID: "1", Code: jsonrpc.CodeInternalError, Message: "context canceled"}},
		{"nil result", nil, nil, rpcReply{ID: "1", HasResult: true, Result: "null"}},
		{"struct result", struct {
			A string `json:"a"`
		}{"<b>"}, nil, rpcReply{ID: "1", HasResult: true, Result: `{"a":"<b>"}`}},
		{"unencodable result", make(chan int), nil,
			rpcReply{ID: "1", Code: jsonrpc.CodeInternalError, Message: "internal error: encoding the result of m: json: unsupported type: chan int"}},
		{"unencodable data", nil, &jsonrpc.Error{Code: jsonrpc.CodeRequestFailed, Message: "no", Data: make(chan int)},
			rpcReply{ID: "1", Code: jsonrpc.CodeRequestFailed, Message: "no (error data not encodable: json: unsupported type: chan int)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := func(context.Context, *jsonrpc.Request) (any, error) { return tt.result, tt.err }
			p := startRPC(t, routes(map[string]jsonrpc.Handler{"m": h}), jsonrpc.Options{})
			p.send(rpcCall(1, "m", ""))
			if diff := cmp.Diff(tt.want, p.nextReply()); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRoutingErrors(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	block := func(context.Context, *jsonrpc.Request) (any, error) { <-release; return nil, nil }
	p := startRPC(t, routes(map[string]jsonrpc.Handler{"block": block}), jsonrpc.Options{})
	tests := []struct {
		name  string
		input string // raw bytes
		want  rpcReply
	}{
		{"nil handler is method not found", rpcMsg(rpcCall(1, "nope", "")),
			rpcReply{ID: "1", Code: jsonrpc.CodeMethodNotFound, Message: "method not found: nope"}},
		{"unknown notification is ignored, then a call", rpcMsg(`{"jsonrpc":"2.0","method":"nope"}`) + rpcMsg(rpcCall(2, "echo", "")),
			rpcReply{ID: "2", HasResult: true, Result: "null"}},
		{"id already in flight", rpcMsg(rpcCall(3, "block", "")) + rpcMsg(rpcCall(3, "echo", "")),
			rpcReply{ID: "3", Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: id 3 is already in use"}},
		{"cancelRequest as a call", rpcMsg(`{"jsonrpc":"2.0","id":4,"method":"$/cancelRequest","params":{"id":99}}`),
			rpcReply{ID: "4", HasResult: true, Result: "null"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.write(tt.input)
			if diff := cmp.Diff(tt.want, p.nextReply()); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSlowCallDoesNotDelayLaterCall(t *testing.T) {
	release := make(chan struct{})
	slow := func(context.Context, *jsonrpc.Request) (any, error) { <-release; return "slow", nil }
	p := startRPC(t, routes(map[string]jsonrpc.Handler{"slow": slow}), jsonrpc.Options{})
	p.send(rpcCall(1, "slow", ""))
	p.send(rpcCall(2, "echo", `"quick"`))
	if diff := cmp.Diff(rpcReply{ID: "2", HasResult: true, Result: `"quick"`}, p.nextReply()); diff != "" {
		t.Errorf("first reply (-want +got):\n%s", diff)
	}
	close(release)
	if diff := cmp.Diff(rpcReply{ID: "1", HasResult: true, Result: `"slow"`}, p.nextReply()); diff != "" {
		t.Errorf("second reply (-want +got):\n%s", diff)
	}
}

// goroutineID is the number runtime.Stack gives the calling goroutine.
func goroutineID() string {
	buf := make([]byte, 64)
	return strings.Fields(string(buf[:runtime.Stack(buf, false)]))[1]
}

// TestHandlerGoroutinesReused: calls sent one after the other, each on the
// reply to the one before, run on one goroutine (whose stack has already
// grown); a call that arrives while another runs gets a goroutine of its
// own; the goroutines end with the connection (TestNoGoroutineLeak).
func TestHandlerGoroutinesReused(t *testing.T) {
	release := make(chan struct{})
	who := func(context.Context, *jsonrpc.Request) (any, error) { return goroutineID(), nil }
	hold := func(context.Context, *jsonrpc.Request) (any, error) { <-release; return goroutineID(), nil }
	p := startRPC(t, routes(map[string]jsonrpc.Handler{"who": who, "hold": hold}), jsonrpc.Options{})
	var seq []string
	for i := range 20 {
		p.send(rpcCall(i, "who", ""))
		seq = append(seq, p.nextReply().Result)
	}
	if want := slices.Repeat(seq[:1], len(seq)); !slices.Equal(seq, want) {
		t.Errorf("goroutines of calls sent one after the other: got %v, want one", seq)
	}
	p.send(rpcCall(100, "hold", ""))
	p.send(rpcCall(101, "who", ""))
	quick := p.nextReply() // 101, while 100 holds its goroutine
	close(release)
	held := p.nextReply()
	if quick.ID != "101" || held.ID != "100" || quick.Result == held.Result {
		t.Errorf("got replies %+v then %+v, want 101 then 100 from different goroutines", quick, held)
	}
}

// writerConn records which goroutine made each Write.
type writerConn struct {
	net.Conn
	mu      sync.Mutex
	writers []string
}

func (w *writerConn) Write(b []byte) (int, error) {
	w.mu.Lock()
	w.writers = append(w.writers, goroutineID())
	w.mu.Unlock()
	return w.Conn.Write(b)
}

// TestReplyWrittenByItsWorker: with nothing else queued, a worker writes
// its reply itself, in one Write, instead of waking the writer goroutine.
func TestReplyWrittenByItsWorker(t *testing.T) {
	server, client := net.Pipe()
	wc := &writerConn{Conn: server}
	c := jsonrpc.NewConn(wc, routes(map[string]jsonrpc.Handler{
		"who": func(context.Context, *jsonrpc.Request) (any, error) { return goroutineID(), nil },
	}), jsonrpc.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() { cancel(); client.Close(); <-done }()
	client.SetDeadline(time.Now().Add(rpcWait))
	r := bufio.NewReader(client)
	for i := range 3 {
		if _, err := io.WriteString(client, rpcMsg(rpcCall(i, "who", ""))); err != nil {
			t.Fatal(err)
		}
		body, err := readFrame(r)
		if err != nil {
			t.Fatal(err)
		}
		var reply struct{ Result string }
		if err := json.Unmarshal(body, &reply); err != nil {
			t.Fatalf("reply %s: %v", body, err)
		}
		wc.mu.Lock()
		writers := slices.Clone(wc.writers)
		wc.mu.Unlock()
		if want := []string{reply.Result}; !slices.Equal(writers[i:], want) {
			t.Errorf("call %d: got writes from goroutines %v, want one from the handler's, %v", i, writers[i:], want)
		}
	}
}

func TestInlineHandlersRunInOrder(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	route := func(req *jsonrpc.Request) (jsonrpc.Handler, bool) {
		switch req.Method {
		case "note":
			return func(_ context.Context, req *jsonrpc.Request) (any, error) {
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, string(req.Params))
				return nil, nil
			}, true
		case "seen":
			return func(context.Context, *jsonrpc.Request) (any, error) {
				mu.Lock()
				defer mu.Unlock()
				return strings.Join(seen, ","), nil
			}, false
		}
		return nil, false
	}
	p := startRPC(t, route, jsonrpc.Options{})
	var want []string
	for i := range 50 {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"note","params":%d}`, i))
		want = append(want, strconv.Itoa(i))
	}
	p.send(rpcCall(1, "seen", ""))
	if diff := cmp.Diff(strconv.Quote(strings.Join(want, ",")), p.nextReply().Result); diff != "" {
		t.Errorf("notifications handled (-want +got):\n%s", diff)
	}
}

// TestRefusedCallIsNotRouted: a call refused because its id is in use
// never reaches the Router, so every Handler the Router returns runs.
func TestRefusedCallIsNotRouted(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var mu sync.Mutex
	var routed []string
	route := func(req *jsonrpc.Request) (jsonrpc.Handler, bool) {
		mu.Lock()
		routed = append(routed, req.Method)
		mu.Unlock()
		return func(context.Context, *jsonrpc.Request) (any, error) { <-release; return nil, nil }, false
	}
	p := startRPC(t, route, jsonrpc.Options{})
	p.write(rpcMsg(rpcCall(1, "first", "")) + rpcMsg(rpcCall(1, "again", "")))
	if diff := cmp.Diff(rpcReply{ID: "1", Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: id 1 is already in use"}, p.nextReply()); diff != "" {
		t.Fatalf("reply (-want +got):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"first"}, routed); diff != "" {
		t.Errorf("routed methods (-want +got):\n%s", diff)
	}
}

// TestSettleAnswersEarlierRequestsFirst: an inline handler that calls
// Settle is answered after every request received before it, even one
// that finishes only once the inline handler has started.
func TestSettleAnswersEarlierRequestsFirst(t *testing.T) {
	entered := make(chan struct{})
	var p *rpcPeer
	route := func(req *jsonrpc.Request) (jsonrpc.Handler, bool) {
		switch req.Method {
		case "slow":
			return func(ctx context.Context, _ *jsonrpc.Request) (any, error) {
				select {
				case <-entered:
					return "slow", nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}, false
		case "settle":
			return func(ctx context.Context, _ *jsonrpc.Request) (any, error) {
				close(entered)
				if err := p.c.Settle(ctx); err != nil {
					return nil, err
				}
				return "settled", nil
			}, true
		}
		return nil, false
	}
	p = startRPC(t, route, jsonrpc.Options{})
	p.write(rpcMsg(rpcCall(1, "slow", "")) + rpcMsg(rpcCall(2, "settle", "")))
	for _, want := range []rpcReply{{ID: "1", HasResult: true, Result: `"slow"`}, {ID: "2", HasResult: true, Result: `"settled"`}} {
		if diff := cmp.Diff(want, p.nextReply()); diff != "" {
			t.Fatalf("replies out of order (-want +got):\n%s", diff)
		}
	}
}

// TestSettleDoesNotWaitForThePeerToRead: Settle returns once every reply
// is queued or being written, not once the peer has read it. A peer that
// pipes requests, shutdown and more without reading (docs/protocol.md
// §2.2) would otherwise wait for the daemon to read on while the daemon
// waits for it to read its replies, forever.
func TestSettleDoesNotWaitForThePeerToRead(t *testing.T) {
	ran := make(chan struct{})
	server, client := net.Pipe() // unbuffered: a write waits until the peer reads
	c := jsonrpc.NewConn(server, routes(map[string]jsonrpc.Handler{
		"h": func(context.Context, *jsonrpc.Request) (any, error) { close(ran); return "r", nil },
	}), jsonrpc.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() { cancel(); client.Close(); <-done }()
	client.SetDeadline(time.Now().Add(rpcWait))
	if _, err := io.WriteString(client, rpcMsg(rpcCall(1, "h", ""))); err != nil {
		t.Fatal(err)
	}
	<-ran
	sctx, stop := context.WithTimeout(context.Background(), rpcWait)
	defer stop()
	if err := c.Settle(sctx); err != nil {
		t.Fatalf("Settle with the reply unread: %v; want it to return once the reply is being written", err)
	}
	body, err := readFrame(bufio.NewReader(client))
	if err != nil || !strings.Contains(string(body), `"result":"r"`) {
		t.Fatalf("the reply read after Settle: %q, %v", body, err)
	}
}

// TestWritesAreWholeAndOrdered: concurrent Notify and replies never interleave
// (the peer's strict framer would fail) and one goroutine's messages keep order.
func TestWritesAreWholeAndOrdered(t *testing.T) {
	const writers, each = 8, 200
	p := startRPC(t, routes(nil), jsonrpc.Options{})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if err := p.c.Notify("tick", map[string]int{"w": w, "i": i}); err != nil {
					t.Errorf("Notify: %v", err)
				}
			}
		})
	}
	wg.Go(func() {
		for i := range each {
			p.send(rpcCall(1000+i, "echo", `"x"`))
		}
	})
	next := make([]int, writers)
	replies := 0
	for range writers*each + each {
		m := p.next()
		if _, ok := m["method"]; !ok {
			replies++
			continue
		}
		var tick struct{ W, I int }
		if err := json.Unmarshal(m["params"], &tick); err != nil {
			t.Fatalf("params %s: %v", m["params"], err)
		}
		if tick.I != next[tick.W] {
			t.Fatalf("writer %d: got message %d, want %d", tick.W, tick.I, next[tick.W])
		}
		next[tick.W]++
	}
	wg.Wait()
	if replies != each {
		t.Errorf("got %d replies, want %d", replies, each)
	}
}

func TestRunReturns(t *testing.T) {
	tests := []struct {
		name string
		end  func(p *rpcPeer)
		want error
	}{
		{"end of input", func(p *rpcPeer) { p.conn.Close() }, nil},
		{"Close", func(p *rpcPeer) { p.c.Close() }, nil},
		{"ctx cancelled", func(p *rpcPeer) { p.cancel() }, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cancelled := make(chan struct{})
			wait := func(ctx context.Context, _ *jsonrpc.Request) (any, error) {
				<-ctx.Done()
				close(cancelled)
				return nil, ctx.Err()
			}
			p := startRPC(t, routes(map[string]jsonrpc.Handler{"wait": wait}), jsonrpc.Options{})
			p.send(rpcCall(1, "wait", ""))
			p.checkEcho(2) // the wait call is in flight now
			tt.end(p)
			if err := p.wait(); !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Errorf("got Run error %v, want %v", err, tt.want)
			}
			select {
			case <-cancelled:
			default:
				t.Errorf("Run returned before the in-flight handler saw its ctx cancelled")
			}
			select {
			case <-p.c.Done():
			default:
				t.Errorf("Done is open after Run returned")
			}
		})
	}
}

// TestRunDoesNotWaitForeverOnHandlers: a handler that ignores its ctx does not
// keep Run from returning (it waits about 2s for it).
func TestRunDoesNotWaitForeverOnHandlers(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	stuck := func(context.Context, *jsonrpc.Request) (any, error) { <-release; return nil, nil }
	p := startRPC(t, routes(map[string]jsonrpc.Handler{"stuck": stuck}), jsonrpc.Options{})
	p.send(rpcCall(1, "stuck", ""))
	p.checkEcho(2)
	p.c.Close()
	if err := p.wait(); err != nil {
		t.Errorf("got Run error %v, want nil", err)
	}
}

// connGoroutines lists the stacks of goroutines running Conn code.
func connGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var found []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "agentd/jsonrpc.(*Conn)") {
			found = append(found, g)
		}
	}
	return found
}

func TestNoGoroutineLeak(t *testing.T) {
	release := make(chan struct{})
	slow := func(ctx context.Context, _ *jsonrpc.Request) (any, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return "slow", nil
	}
	p := startRPC(t, routes(map[string]jsonrpc.Handler{"slow": slow}), jsonrpc.Options{})
	for i := range 5 {
		p.send(rpcCall(i+10, "slow", ""))
	}
	p.checkEcho(1)
	callDone := make(chan error, 1)
	go func() {
		_, err := p.c.Call(context.Background(), "client/never", nil)
		callDone <- err
	}()
	p.next() // the Call's request; it is never answered
	if err := p.c.Notify("note", nil); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	p.conn.Close()
	p.wait()
	p.c.Close()
	if err := <-callDone; !errors.Is(err, jsonrpc.ErrConnClosed) {
		t.Errorf("pending Call: got %v, want ErrConnClosed", err)
	}
	deadline := time.Now().Add(rpcWait)
	for {
		left := connGoroutines()
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("got %d goroutines running Conn code after Run and Close, want 0:\n%s", len(left), strings.Join(left, "\n\n"))
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	close(release)
}

// TestCancelRequestWithoutIDLoggedOnce: $/cancelRequest messages without a
// usable id are ignored; the first is a warning, the others debug lines
// only, and the connection keeps working (a call sent after them is
// answered, and one they do not name is not cancelled).
func TestCancelRequestWithoutIDLoggedOnce(t *testing.T) {
	var logs rpcLog
	p := startRPC(t, routes(nil), jsonrpc.Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	bad := []string{``, `,"params":null`, `,"params":{}`, `,"params":{"id":null}`, `,"params":{"id":{"x":1}}`, `,"params":{"id":true}`, `,"params":[1]`, `,"params":"7"`}
	for range 3 {
		for _, params := range bad {
			p.send(`{"jsonrpc":"2.0","method":"$/cancelRequest"` + params + `}`)
		}
	}
	p.checkEcho(1)
	out := logs.String()
	const msg = "$/cancelRequest without a number or string id"
	if n := strings.Count(out, msg); n != 3*len(bad) {
		t.Errorf("%d log lines of the bad cancels, want one per message (%d); logs:\n%s", n, 3*len(bad), out)
	}
	if n := strings.Count(out, "level=WARN msg=\"jsonrpc: "+msg); n != 1 {
		t.Errorf("%d warnings of the bad cancels, want 1 (the rest at debug level); logs:\n%s", n, out)
	}
}

// TestCancelRequestWithoutIDLogBounded: the params of a bad $/cancelRequest
// as large as a message (an id that is a 1 MiB array) are cut in its log
// line, which says their size; the connection keeps working.
func TestCancelRequestWithoutIDLogBounded(t *testing.T) {
	var logs rpcLog
	p := startRPC(t, routes(nil), jsonrpc.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	params := `{"id":[` + strings.Repeat(`"é",`, 1<<18) + `0]}`
	p.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":` + params + `}`)
	p.checkEcho(1)
	out := logs.String()
	if !strings.Contains(out, "$/cancelRequest without a number or string id") || len(out) > 1024 || !strings.Contains(out, fmt.Sprintf("bytes=%d", len(params))) {
		t.Errorf("log of %d bytes: %.600s…; want the warning, under 1 KiB, with the params' size (%d bytes)", len(out), out, len(params))
	}
}
