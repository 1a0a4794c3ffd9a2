package lsptest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// server is the far end of a Conn under test: it reads what the Conn
// writes and writes what a test scripts.
type server struct {
	t   *testing.T
	in  *bufio.Reader // what the Conn sent
	out io.Writer     // to the Conn
}

func pair(t *testing.T, o Options) (*Conn, *server) {
	cr, sw := io.Pipe() // server → conn
	sr, cw := io.Pipe() // conn → server
	c := NewConn(cr, cw, cw.Close, o)
	t.Cleanup(func() { sw.Close(); sr.Close() })
	return c, &server{t: t, in: bufio.NewReader(sr), out: sw}
}

func (s *server) read() map[string]any {
	s.t.Helper()
	body, err := ReadFrame(s.in)
	if err != nil {
		s.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		s.t.Fatalf("the client wrote %q: %v", body, err)
	}
	return m
}

// send writes body with the header as given (any case, extra headers).
func (s *server) send(header, body string) {
	s.t.Helper()
	if _, err := io.WriteString(s.out, header+"\r\n\r\n"+body); err != nil {
		s.t.Fatal(err)
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestExecRoutesTheResponseByID(t *testing.T) {
	c, s := pair(t, Options{})
	done := make(chan error, 1)
	var got struct{ Revision int }
	go func() { done <- c.Exec(ctx(t), "agentd.state", map[string]any{"session": "a<b>"}, &got) }()
	req := s.read()
	params := req["params"].(map[string]any)
	if req["method"] != "workspace/executeCommand" || params["command"] != "agentd.state" || req["id"] != float64(1) {
		t.Fatalf("request = %v", req)
	}
	if args := params["arguments"].([]any); len(args) != 1 || args[0].(map[string]any)["session"] != "a<b>" {
		t.Fatalf("arguments = %v, want one ARGS object", params["arguments"])
	}
	// A notification first, an answer to an id nobody asked for, then the
	// answer: the call gets its own.
	note := `{"jsonrpc":"2.0","method":"agentd/todoChanged","params":{}}`
	s.send("content-length: "+itoa(len(note)), note)
	s.send("Content-Length: 36", `{"jsonrpc":"2.0","id":9,"result":{}}`)
	body := `{"jsonrpc":"2.0","id":1,"result":{"revision":7}}`
	s.send("Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: "+itoa(len(body)), body)
	if err := <-done; err != nil || got.Revision != 7 {
		t.Fatalf("Exec = %+v, %v", got, err)
	}
	if strays := c.TakeStrays(); len(strays) != 1 || string(strays[0].ID) != "9" {
		t.Fatalf("strays = %+v, want the answer to id 9", strays)
	}
	if n := c.NotesOf("agentd/todoChanged"); len(n) != 1 {
		t.Fatalf("notes = %v", c.Methods())
	}
	if err := c.Violation(); err != nil {
		t.Fatal(err)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestExecReturnsTheJSONRPCError(t *testing.T) {
	c, s := pair(t, Options{})
	done := make(chan error, 1)
	go func() { done <- c.Exec(ctx(t), "agentd.todo.set", nil, nil) }()
	if req := s.read(); req["params"].(map[string]any)["arguments"] != nil {
		t.Fatalf("no args sent arguments: %v", req)
	}
	body := `{"jsonrpc":"2.0","id":1,"error":{"code":-32803,"message":"conflict","data":{"code":"todo.conflict","state":{"revision":2}}}}`
	s.send("Content-Length: "+itoa(len(body)), body)
	err := <-done
	e, ok := err.(*Error)
	if !ok || e.Code != -32803 || e.DataCode() != "todo.conflict" || string(e.DataField("state")) != `{"revision":2}` {
		t.Fatalf("Exec = %v, want the JSON-RPC error with its data", err)
	}
}

func TestAwaitSeesEarlierNotesAndAnswersServerRequests(t *testing.T) {
	c, s := pair(t, Options{})
	body := `{"jsonrpc":"2.0","id":"p1","method":"window/workDoneProgress/create","params":{"token":"t"}}`
	s.send("Content-Length: "+itoa(len(body)), body)
	if reply := s.read(); reply["id"] != "p1" || reply["result"] != nil {
		t.Fatalf("reply to a server request = %v, want result null", reply)
	}
	got, err := c.Await(ctx(t), "window/workDoneProgress/create", func(p json.RawMessage) bool { return strings.Contains(string(p), `"t"`) })
	if err != nil || string(got) != `{"token":"t"}` {
		t.Fatalf("Await = %s, %v", got, err)
	}
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Await(short, "agentd/goalChanged", nil); err == nil || !strings.Contains(err.Error(), "window/workDoneProgress/create") {
		t.Fatalf("Await of a note that never comes = %v, want a timeout listing what came", err)
	}
}

func TestViolationUnlessLenient(t *testing.T) {
	for _, lenient := range []bool{false, true} {
		c, s := pair(t, Options{Lenient: lenient})
		body := `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`
		s.send("Content-Length: "+itoa(len(body)), body)
		s.send("Content-Length: 2", "{}") // a second stray: once it is kept, the first was checked
		strays := 0
		for deadline := time.Now().Add(5 * time.Second); strays < 2 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			strays += len(c.TakeStrays())
		}
		if err := c.Violation(); (err != nil) == lenient {
			t.Errorf("lenient %v: violation %v", lenient, err)
		}
	}
}

func TestWriteAndSendBodyAreRaw(t *testing.T) {
	c, s := pair(t, Options{})
	go func() {
		c.Write("Content-Length: 2\r\n\r\n{}")
		c.SendBody(`{"a":"<&>"}`)
		c.Notify("exit", nil)
	}()
	for _, want := range []string{`{}`, `{"a":"<&>"}`, `{"jsonrpc":"2.0","method":"exit","params":null}`} {
		body, err := ReadFrame(s.in)
		if err != nil || string(body) != want {
			t.Fatalf("read %q, %v; want %q", body, err, want)
		}
	}
}

func TestCallEndsWhenTheConnectionDoes(t *testing.T) {
	c, s := pair(t, Options{})
	done := make(chan error, 1)
	go func() { _, err := c.Call(ctx(t), "shutdown", nil); done <- err }()
	s.read()
	s.out.(io.Closer).Close()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "connection ended") {
		t.Fatalf("Call on a closed connection = %v", err)
	}
	<-c.Done()
	if c.ReadErr() != io.EOF {
		t.Errorf("ReadErr = %v, want EOF", c.ReadErr())
	}
}

func TestFileURI(t *testing.T) {
	if got := FileURI("/tmp/work space/ü#1"); got != "file:///tmp/work%20space/%C3%BC%231" {
		t.Errorf("FileURI = %s", got)
	}
}
