package tests

// End-to-end tests of `agentd mcp`'s bounds and JSON-RPC codes
// (docs/mcp.md, "Framing"): raw lines over the real binary's pipes.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// rawMCP is `agentd mcp --remote=off` driven line by line.
type rawMCP struct {
	*proc
	t   testing.TB
	out *bufio.Reader
}

func (e *env) rawMCP() *rawMCP {
	e.t.Helper()
	p := e.start("mcp", "--remote=off", "--workspace", e.ws)
	return &rawMCP{proc: p, t: e.t, out: bufio.NewReaderSize(p.Stdout, 1<<16)}
}

// send writes one line.
func (m *rawMCP) send(line string) {
	m.t.Helper()
	if _, err := io.WriteString(m.Stdin, line+"\n"); err != nil {
		m.t.Fatalf("writing stdin: %v; stderr:\n%s", err, m.Stderr.String())
	}
}

// next reads one stdout line, which must be a JSON-RPC message.
func (m *rawMCP) next() map[string]any {
	m.t.Helper()
	line, err := m.out.ReadBytes('\n')
	if err != nil {
		m.t.Fatalf("reading stdout: %v; stderr:\n%s", err, m.Stderr.String())
	}
	var msg map[string]any
	if err := json.Unmarshal(line, &msg); err != nil || msg["jsonrpc"] != "2.0" {
		m.t.Fatalf("stdout line is not a JSON-RPC message: %.200q (%v)", line, err)
	}
	return msg
}

// nextRaw reads one stdout line as it is.
func (m *rawMCP) nextRaw() string {
	m.t.Helper()
	line, err := m.out.ReadString('\n')
	if err != nil {
		m.t.Fatalf("reading stdout: %v; stderr:\n%s", err, m.Stderr.String())
	}
	return strings.TrimSpace(line)
}

const initializeLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// initialize runs the handshake.
func (m *rawMCP) initialize() {
	m.t.Helper()
	m.send(initializeLine)
	if msg := m.next(); msg["result"] == nil {
		m.t.Fatalf("initialize: %v", msg)
	}
	m.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// errorOf is a reply's error code and message; ok false when it has none.
func errorOf(msg map[string]any) (code float64, text string, ok bool) {
	e, ok := msg["error"].(map[string]any)
	if !ok {
		return 0, "", false
	}
	code, _ = e["code"].(float64)
	text, _ = e["message"].(string)
	return code, text, true
}

// TestMCPLifecycleCodes: a request before initialize is answered -32002
// (server not initialized) with its id, as LSP does (docs/protocol.md §2),
// ping before initialize is answered, a second initialize is -32600, and a
// client that pipelines initialize and a request without waiting gets the
// request's result, not -32002; an initialize the SDK refuses leaves the
// server uninitialized, and the next one works.
func TestMCPLifecycleCodes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.rawMCP()
	m.send(`{"jsonrpc":"2.0","id":"a","method":"tools/list"}`)
	if msg := m.next(); msg["id"] != "a" {
		t.Fatalf("tools/list before initialize: %v", msg)
	} else if code, text, _ := errorOf(msg); code != -32002 || !strings.Contains(text, "initialize") {
		t.Errorf("tools/list before initialize: %v, want -32002 naming initialize", msg)
	}
	m.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"GetGoal","arguments":{}}}`)
	if msg := m.next(); msg["id"] != 2.0 {
		t.Fatalf("tools/call before initialize: %v", msg)
	} else if code, _, _ := errorOf(msg); code != -32002 {
		t.Errorf("tools/call before initialize: %v, want -32002", msg)
	}
	m.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if msg := m.next(); msg["id"] != 3.0 || msg["result"] == nil {
		t.Errorf("ping before initialize: %v, want a result", msg)
	}
	m.send(`{"jsonrpc":"2.0","id":4,"method":"initialize"}`)
	if msg := m.next(); msg["id"] != 4.0 {
		t.Fatalf("initialize without params: %v", msg)
	} else if code, _, _ := errorOf(msg); code == 0 || code == -32002 {
		t.Errorf("initialize without params: %v, want a coded refusal", msg)
	}
	m.send(`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
	if code, _, _ := errorOf(m.next()); code != -32002 {
		t.Errorf("tools/list after a refused initialize: code %v, want -32002", code)
	}
	// Pipelined: initialize and tools/list in one write.
	if _, err := io.WriteString(m.Stdin, initializeLine+"\n"+`{"jsonrpc":"2.0","id":6,"method":"tools/list"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if msg := m.next(); msg["id"] != 1.0 || msg["result"] == nil {
		t.Fatalf("initialize: %v", msg)
	}
	if msg := m.next(); msg["id"] != 6.0 || msg["result"] == nil {
		t.Errorf("tools/list sent right behind initialize: %v, want its result", msg)
	}
	m.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	m.send(`{"jsonrpc":"2.0","id":"again","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if msg := m.next(); msg["id"] != "again" {
		t.Fatalf("second initialize: %v", msg)
	} else if code, text, _ := errorOf(msg); code != -32600 || !strings.Contains(text, "initialize was already received") {
		t.Errorf("second initialize: %v, want -32600", msg)
	}
	m.send(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
	if msg := m.next(); msg["id"] != 7.0 || msg["result"] == nil {
		t.Errorf("tools/list after the second initialize: %v", msg)
	}
}

// TestMCPNonIntegerIDs: a request whose id is a number that is not an
// integer agentd can echo exactly (7.5, -0.5, 1e400, 1e2, 7.0, 2^53+1) is
// refused -32600 with id null and a message naming the id, never answered
// under a rounded id, and so is a notifications/cancelled naming such a
// requestId; string ids (even "7.5") and integer ids up to 2^53-1 are
// echoed as sent; the server goes on.
func TestMCPNonIntegerIDs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	m := e.rawMCP()
	m.initialize()
	for _, id := range []string{"7.5", "-0.5", "1e400", "1e2", "7.0", "9007199254740993", "-9007199254740993"} {
		m.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		msg := m.next()
		code, text, _ := errorOf(msg)
		if msg["id"] != nil || code != -32600 || !strings.Contains(text, id) {
			t.Errorf("ping with id %s: %v, want -32600 with id null naming the id", id, msg)
		}
	}
	// A cancellation naming such an id would cancel the request of the
	// rounded id: refused too, before the next request's answer.
	m.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7.5}}`)
	m.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
	if msg := m.next(); msg["id"] != nil {
		t.Errorf("notifications/cancelled with requestId 7.5: the next line out is %v, want -32600 with id null", msg)
	} else if code, text, _ := errorOf(msg); code != -32600 || !strings.Contains(text, "requestId 7.5") {
		t.Errorf("notifications/cancelled with requestId 7.5: %v", msg)
	} else if msg := m.next(); msg["id"] != "after" {
		t.Errorf("ping after the cancellation: %v", msg)
	}
	for _, id := range []string{`"7.5"`, `"x"`, "0", "-3", "7", "9007199254740991", "-9007199254740991"} {
		m.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		if got := m.nextRaw(); got != `{"jsonrpc":"2.0","id":`+id+`,"result":{}}` {
			t.Errorf("ping with id %s: %s, want its result under the same id", id, got)
		}
	}
}

// TestMCPBackpressure: a client writes 100,000 ping requests (10,000 with
// -short) and reads nothing. agentd mcp stops reading its input once a
// bounded number of replies waits to be written, so the writes stall, and
// its peak memory (VmHWM) stays under 64 MiB; then the client reads, the
// writes go on, and every request gets its reply, each id once.
func TestMCPBackpressure(t *testing.T) {
	t.Parallel()
	n := 100_000
	if testing.Short() {
		n = 10_000 // the writes stall after about 3,000 (a bounded queue and the pipe's buffer)
	}
	e := newEnv(t)
	m := e.rawMCP()
	m.initialize()
	pid := m.Cmd.Process.Pid
	var written atomic.Int64
	writeErr := make(chan error, 1)
	go func() {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i)
			if i%100 == 0 {
				if _, err := io.WriteString(m.Stdin, b.String()); err != nil {
					writeErr <- err
					return
				}
				b.Reset()
				written.Store(int64(i))
			}
		}
		writeErr <- nil
	}()

	// Read nothing until the writes stall (the server stopped reading) or
	// all are written (it did not).
	deadline := time.Now().Add(4 * time.Minute) // 100,000 pings took 45 s on 2 cores shared with other builds
	last, still := int64(-1), 0
	for still < 10 && written.Load() < int64(n) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		if w := written.Load(); w == last {
			still++
		} else {
			last, still = w, 0
		}
	}
	stalled := readProcStats(t, pid)
	if w := written.Load(); w >= int64(n) {
		t.Errorf("all %d requests were taken in with no reply read: agentd mcp does not stop reading", n)
	} else {
		t.Logf("the writes stalled after %d requests, VmRSS %d KiB, VmHWM %d KiB", w, stalled.RSSKiB, stalled.PeakKiB)
	}
	if stalled.PeakKiB > 64<<10 {
		t.Errorf("agentd mcp's peak memory with replies unread: %d KiB, want under 64 MiB", stalled.PeakKiB)
	}

	got := make([]bool, n+1)
	for count := 0; count < n; count++ {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d replies within the time limit", count, n)
		}
		var r struct {
			ID     *int64          `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		line, err := m.out.ReadBytes('\n')
		if err != nil || json.Unmarshal(line, &r) != nil || r.ID == nil || *r.ID < 1 || *r.ID > int64(n) || r.Result == nil || got[*r.ID] {
			t.Fatalf("reply %d: %.200q (%v), want a result for a new id", count, line, err)
		}
		got[*r.ID] = true
	}
	if err := <-writeErr; err != nil {
		t.Fatalf("writing the requests: %v", err)
	}
	end := readProcStats(t, pid)
	if end.PeakKiB > 64<<10 {
		t.Errorf("agentd mcp's peak memory over %d requests: %d KiB, want under 64 MiB", n, end.PeakKiB)
	}
	t.Logf("every reply read; VmHWM %d KiB", end.PeakKiB)
	m.Stdin.Close()
	if code := m.waitExit(); code != 0 {
		t.Errorf("exit code %d after end of input; stderr:\n%s", code, m.Stderr.String())
	}
}
