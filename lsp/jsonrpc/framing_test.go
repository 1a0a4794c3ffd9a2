package jsonrpc_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentd/agentd/lsp/jsonrpc"
)

// readAll reads every message of input with a Reader that echoes into echo
// and appends each body to echo after it: for a relay, echo is what went
// through. It returns the bodies and the error that ended the input.
func readAll(input string, echo *bytes.Buffer) (bodies []string, framingErrors int, err error) {
	r := jsonrpc.NewReader(strings.NewReader(input), jsonrpc.ReaderOptions{Echo: echo})
	for {
		n, err := r.ReadHeader()
		var fe *jsonrpc.FramingError
		if errors.As(err, &fe) {
			framingErrors++
			continue
		}
		if err != nil {
			return bodies, framingErrors, err
		}
		if n > int64(len(input)) { // cut short: not worth holding
			if err := r.CopyBody(echo, n); err != nil {
				return bodies, framingErrors, err
			}
			continue
		}
		body, err := r.ReadBody(n)
		echo.Write(body)
		if err != nil {
			return bodies, framingErrors, err
		}
		bodies = append(bodies, string(body))
	}
}

// TestReaderEchoesEverything: with Echo, the header bytes echoed and the
// bodies read are the input, byte for byte, whatever its framing, and the
// Reader finds the messages Conn answers in TestResync and TestFraming.
func TestReaderEchoesEverything(t *testing.T) {
	good := rpcMsg(`{"n":1}`)
	tests := []struct {
		name    string
		input   string
		bodies  []string
		framing int
		cut     bool // input ends inside a message
	}{
		{"canonical", good + good, []string{`{"n":1}`, `{"n":1}`}, 0, false},
		{"headers in any case, blank lines", "\r\ncontent-LENGTH: 2\nContent-Type: x\r\n\r\n{}" + good, []string{`{}`, `{"n":1}`}, 0, false},
		{"last length counts", "Content-Length: 9\r\nContent-Length: 2\r\n\r\n{}", []string{`{}`}, 0, false},
		{"bad length", "Content-Length: -5\r\n\r\n{}" + good, []string{`{"n":1}`}, 1, false},
		{"missing length", "Content-Type: text/plain\r\n\r\n{\"a\":1}" + good, []string{`{"n":1}`}, 1, false},
		{"line without colon", "hello there\r\n" + good, []string{`{"n":1}`}, 1, false},
		{"header inside junk line", "Content-Length: x\r\n\r\nJUNKcontent-LENGTH: 7\r\n\r\n{\"n\":1}", []string{`{"n":1}`}, 1, false},
		{"long junk line", "Content-Length: x\r\n\r\n" + strings.Repeat("z", 100_000) + good, []string{`{"n":1}`}, 1, false},
		{"length in characters", "Content-Length: 5\r\n\r\n\"éé\"" + good, []string{`"éé`, `{"n":1}`}, 0, false},
		{"inside a header", "Content-Len", nil, 0, true},
		{"inside a body", "Content-Length: 10\r\n\r\n{\"a\"", nil, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var echo bytes.Buffer
			bodies, framing, err := readAll(tt.input, &echo)
			if diff := cmp.Diff(tt.bodies, bodies); diff != "" {
				t.Errorf("bodies (-want +got):\n%s", diff)
			}
			if framing != tt.framing {
				t.Errorf("%d framing errors, want %d", framing, tt.framing)
			}
			if got := errors.Is(err, io.ErrUnexpectedEOF); got != tt.cut || !got && err != io.EOF {
				t.Errorf("ended with %v, want unexpected EOF: %v", err, tt.cut)
			}
			if echo.String() != tt.input {
				t.Errorf("echoed %d bytes %q, want the %d of the input", echo.Len(), echo.String(), len(tt.input))
			}
		})
	}
}

// FuzzReaderEcho: for any input, the bytes echoed and the bodies read are
// the input byte for byte (what a relay built on the Reader passes on), and
// reading ends at the end of input.
func FuzzReaderEcho(f *testing.F) {
	f.Add(rpcMsg(`{"n":1}`) + "junk\r\nContent-Length: x\r\n\r\nJUNKcontent-length: 2\r\n\r\n{}")
	f.Add("Content-Length: 5\r\n\r\n\"éé\"" + rpcMsg(`{}`))
	f.Fuzz(func(t *testing.T, input string) {
		var echo bytes.Buffer
		_, _, err := readAll(input, &echo)
		if err != io.EOF && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("ended with %v, want the end of input", err)
		}
		if echo.String() != input {
			t.Fatalf("passed on %q, want the input %q", echo.String(), input)
		}
	})
}

// TestReaderEchoesWhatHasArrived: part of a header line is echoed before
// the rest of the line arrives, so a relay holds nothing back.
func TestReaderEchoesWhatHasArrived(t *testing.T) {
	src, in := io.Pipe()
	echoR, echoW := io.Pipe()
	r := jsonrpc.NewReader(src, jsonrpc.ReaderOptions{Echo: echoW})
	done := make(chan error, 1)
	go func() { _, err := r.ReadHeader(); done <- err }()
	go in.Write([]byte("Content-Le"))
	got := make([]byte, len("Content-Le"))
	read := make(chan error, 1)
	go func() { _, err := io.ReadFull(echoR, got); read <- err }()
	select {
	case err := <-read:
		if err != nil || string(got) != "Content-Le" {
			t.Fatalf("echo got %q, %v; want %q", got, err, "Content-Le")
		}
	case <-time.After(rpcWait):
		t.Fatal("the start of a line was not echoed before its end arrived")
	}
	in.CloseWithError(errors.New("gone"))
	if err := <-done; err == nil || !strings.Contains(err.Error(), "gone") {
		t.Fatalf("ReadHeader = %v, want the read error", err)
	}
}

// TestReaderEchoError: a failed write to Echo ends ReadHeader with that
// error, and one to CopyBody's writer ends CopyBody with it.
func TestReaderEchoError(t *testing.T) {
	broken := errors.New("broken pipe")
	r := jsonrpc.NewReader(strings.NewReader(rpcMsg(`{}`)), jsonrpc.ReaderOptions{Echo: failingWriter{broken}})
	if _, err := r.ReadHeader(); err != broken {
		t.Errorf("ReadHeader = %v, want %v", err, broken)
	}
	r = jsonrpc.NewReader(strings.NewReader(rpcMsg(`{}`)), jsonrpc.ReaderOptions{})
	n, err := r.ReadHeader()
	if err != nil || n != 2 {
		t.Fatalf("ReadHeader = %d, %v; want 2, nil", n, err)
	}
	if err := r.CopyBody(failingWriter{broken}, n); err != broken {
		t.Errorf("CopyBody = %v, want %v", err, broken)
	}
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// TestReaderCopyBody: CopyBody passes a body through and the next header
// is read after it; input that ends inside the body is unexpected EOF.
func TestReaderCopyBody(t *testing.T) {
	big := strings.Repeat("b", 200<<10) // over the Reader's buffer
	r := jsonrpc.NewReader(strings.NewReader(rpcMsg(big)+rpcMsg(`{}`)+"Content-Length: 9\r\n\r\nabc"), jsonrpc.ReaderOptions{})
	var out bytes.Buffer
	for i, want := range []string{big, `{}`} {
		n, err := r.ReadHeader()
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		out.Reset()
		if err := r.CopyBody(&out, n); err != nil || out.String() != want {
			t.Fatalf("message %d: copied %d bytes, %v; want %d", i, out.Len(), err, len(want))
		}
	}
	n, err := r.ReadHeader()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.CopyBody(io.Discard, n); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("CopyBody of a cut body = %v, want unexpected EOF", err)
	}
	if got := fmt.Sprint(r.ReadHeader()); !strings.Contains(got, "EOF") {
		t.Errorf("ReadHeader after the end = %s, want EOF", got)
	}
}
