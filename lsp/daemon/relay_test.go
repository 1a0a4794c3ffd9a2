package daemon

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// writeLog records every Write as one entry, and what seen was told.
type writeLog struct{ events chan string }

func (w *writeLog) Write(p []byte) (int, error) {
	w.events <- "write " + string(p)
	return len(p), nil
}

func (w *writeLog) seen(method string, _ json.RawMessage) { w.events <- "seen " + method }

func (w *writeLog) next(t *testing.T) string {
	t.Helper()
	select {
	case e := <-w.events:
		return e
	case <-time.After(5 * time.Second):
		t.Fatal("relayClient wrote nothing")
		return ""
	}
}

func frame(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }

// TestRelayClientOneWritePerMessage: a message that has arrived whole is
// written in one Write, header block and body, after seen has its method;
// what has arrived of the next one (part of a header line) is written
// before more input is awaited.
func TestRelayClientOneWritePerMessage(t *testing.T) {
	src, in := io.Pipe()
	log := &writeLog{events: make(chan string, 16)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		relayClient(log, src, log.seen)
	}()
	msgs := []string{frame(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`), "\r\n" + frame(`{"jsonrpc":"2.0","method":"initialized"}`)}
	go in.Write([]byte(strings.Join(msgs, "") + "Content-Len"))
	want := []string{"seen initialize", "write " + msgs[0], "seen initialized", "write " + msgs[1], "write Content-Len"}
	for _, w := range want {
		if got := log.next(t); got != w {
			t.Fatalf("got %q, want %q", got, w)
		}
	}
	in.Close()
	<-done
	select {
	case e := <-log.events:
		t.Errorf("after the end of input: %q", e)
	default:
	}
}
