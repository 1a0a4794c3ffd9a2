package mcpserver

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	lsprpc "github.com/agentd/agentd/lsp/jsonrpc"
)

// admitLine checks a line and admits it, as lineReader does.
func admitLine(f *flow, line string) (json.RawMessage, int64, string) {
	m, id, code, msg := check([]byte(line))
	if code != 0 {
		return id, code, msg
	}
	return f.admit(m, id)
}

// reply writes the SDK's reply to id through w.
func reply(t *testing.T, w *replyWriter, id string, failed bool) {
	t.Helper()
	body := `"result":{}`
	if failed {
		body = `"error":{"code":-32602,"message":"no"}`
	}
	if _, err := w.Write([]byte(`{"jsonrpc":"2.0","id":` + id + `,` + body + "}\n")); err != nil {
		t.Fatal(err)
	}
}

// TestIDsNotExact: a numeric id the SDK would round is refused -32600 with
// id null, naming it, for any "id" key of the object; string ids and plain
// integers up to 2^53-1 pass, with the raw id.
func TestIDsNotExact(t *testing.T) {
	for _, id := range []string{"7.5", "-0.5", "1e400", "1e2", "7.0", "-0", "9007199254740992", "-9007199254740992", "123456789012345678901234567890"} {
		for _, line := range []string{
			`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`,
			`{"jsonrpc":"2.0","id":` + id + `,"id":1,"method":"ping"}`, // a later id does not hide it
		} {
			_, got, code, msg := check([]byte(line))
			if code != jsonrpc.CodeInvalidRequest || got != nil || !strings.Contains(msg, "the id "+id[:min(len(id), 40)]) {
				t.Errorf("%s: %d %s %q, want -32600 with id null naming the id", line, code, got, msg)
			}
		}
	}
	for _, id := range []string{`"7.5"`, `"x"`, "0", "-3", "9007199254740991", "-9007199254740991"} {
		m, got, code, msg := check([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`))
		if code != 0 || m == nil || string(got) != id {
			t.Errorf("id %s: %d %s %q, want the message and its id", id, code, got, msg)
		}
	}
}

// TestLifecycle: a request before initialize is -32002 (ping and
// server/discover pass, and a request of the 2026-07-28 revision, which
// starts the session); an initialize holds what follows until it is
// answered, an initialize the SDK refused leaves the server uninitialized,
// a second one is -32600; an id in use is -32600 with id null.
func TestLifecycle(t *testing.T) {
	f := newFlow()
	w := &replyWriter{w: &lockedWriter{w: nopCloser{io.Discard}}, f: f}
	if id, code, _ := admitLine(f, `{"jsonrpc":"2.0","id":"a","method":"tools/list"}`); code != lsprpc.CodeServerNotInitialized || string(id) != `"a"` {
		t.Errorf("tools/list before initialize: %d %s", code, id)
	}
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"method":"server/discover"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	} {
		if _, code, msg := admitLine(f, line); code != 0 {
			t.Errorf("%s before initialize: %d %s", line, code, msg)
		}
	}
	if _, code, msg := admitLine(f, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); code != jsonrpc.CodeInvalidRequest || !strings.Contains(msg, "already in use") {
		t.Errorf("an id in use: %d %s", code, msg)
	}
	reply(t, w, "1", false)
	reply(t, w, "2", false)

	admitLine(f, `{"jsonrpc":"2.0","id":3,"method":"initialize"}`)
	next := make(chan int64)
	go func() { _, code, _ := admitLine(f, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`); next <- code }()
	reply(t, w, "3", true) // refused: no params
	if code := <-next; code != lsprpc.CodeServerNotInitialized {
		t.Errorf("tools/list after a refused initialize: %d", code)
	}
	admitLine(f, `{"jsonrpc":"2.0","id":5,"method":"initialize","params":{}}`)
	go func() { _, code, _ := admitLine(f, `{"jsonrpc":"2.0","id":6,"method":"tools/list"}`); next <- code }()
	reply(t, w, "5", false)
	if code := <-next; code != 0 {
		t.Errorf("tools/list after initialize: %d", code)
	}
	if id, code, _ := admitLine(f, `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}`); code != jsonrpc.CodeInvalidRequest || string(id) != "7" {
		t.Errorf("second initialize: %d %s", code, id)
	}

	g := newFlow()
	if _, code, _ := admitLine(g, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`); code != 0 {
		t.Errorf("a request of the 2026-07-28 revision before initialize: %d", code)
	}
}

// TestBackpressure: the request after MaxInFlight unanswered ones waits
// until a reply is written, and so does a notification while a write is
// under way.
func TestBackpressure(t *testing.T) {
	f := newFlow()
	f.initialized = true
	w := &replyWriter{w: &lockedWriter{w: nopCloser{io.Discard}}, f: f}
	for i := range MaxInFlight {
		if _, code, msg := admitLine(f, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)); code != 0 {
			t.Fatalf("request %d: %d %s", i, code, msg)
		}
	}
	done := make(chan struct{})
	go func() {
		admitLine(f, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, MaxInFlight))
		close(done)
	}()
	select {
	case <-done:
		t.Fatalf("request %d admitted with %d unanswered", MaxInFlight+1, MaxInFlight)
	case <-time.After(50 * time.Millisecond):
	}
	reply(t, w, "0", false)
	<-done

	block := make(chan struct{})
	bw := &replyWriter{w: &lockedWriter{w: nopCloser{blockingWriter(block)}}, f: f}
	go bw.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"x"}}` + "\n"))
	for {
		f.mu.Lock()
		writing := f.writing
		f.mu.Unlock()
		if writing > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	note := make(chan struct{})
	go func() {
		admitLine(f, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
		close(note)
	}()
	select {
	case <-note:
		t.Fatal("a notification admitted while a write is under way")
	case <-time.After(50 * time.Millisecond):
	}
	close(block)
	<-note
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// blockingWriter is a Writer whose writes wait until release is closed.
type blockingWriter chan struct{}

func (b blockingWriter) Write(p []byte) (int, error) {
	<-b
	return len(p), nil
}
