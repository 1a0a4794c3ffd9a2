package jsonrpc_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/lsp/jsonrpc"
)

// The outgoing queue's bounds (docs/reliability.md, Limits).
const (
	queuedNotes = 4096
	noteBytes   = 8 << 20
	queueBytes  = 16 << 20
)

// stuckConn runs a Conn whose peer writes but never reads. It returns the
// Conn, the peer's end, Run's result and the Conn's logs.
func stuckConn(t *testing.T, route jsonrpc.Router) (*jsonrpc.Conn, net.Conn, chan error, *rpcLog) {
	t.Helper()
	server, client := net.Pipe() // unbuffered: nothing the Conn writes leaves until read
	logs := &rpcLog{}
	c := jsonrpc.NewConn(server, route, jsonrpc.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	runErr := make(chan error, 1)
	go func() { runErr <- c.Run(context.Background()) }()
	t.Cleanup(func() {
		client.Close()
		c.Close()
		select {
		case <-runErr:
		case <-time.After(rpcWait):
			t.Errorf("Run did not return within %v", rpcWait)
		}
	})
	return c, client, runErr, logs
}

// noteFrame is the size of the frame TryNotify writes for method "n" with a
// string of n bytes as params.
func noteFrame(n int) int {
	body := len(`{"jsonrpc":"2.0","method":"n","params":""}`) + n
	return len(fmt.Sprintf("Content-Length: %d\r\n\r\n", body)) + body
}

// TestQueueDropsNotificationsByBytes: to a peer that reads nothing, TryNotify
// queues notifications until they take 8 MiB, then drops them with
// ErrQueueFull; a reply-class message still goes in after that.
func TestQueueDropsNotificationsByBytes(t *testing.T) {
	c, _, _, _ := stuckConn(t, nil)
	payload := strings.Repeat("x", 100_000)
	accepted := 0
	for range 1000 {
		err := c.TryNotify("n", payload)
		if errors.Is(err, jsonrpc.ErrQueueFull) {
			break
		}
		if err != nil {
			t.Fatalf("TryNotify: %v", err)
		}
		accepted++
	}
	if want := noteBytes / noteFrame(len(payload)); accepted != want {
		t.Errorf("%d notifications of %d bytes queued, want %d (8 MiB)", accepted, noteFrame(len(payload)), want)
	}
	if err := c.Notify("n", payload); err != nil {
		t.Errorf("Notify with 8 MiB queued: %v, want it queued", err)
	}
}

// TestQueueDropsNotificationsByCount: small notifications are dropped once
// 4096 wait to be written.
func TestQueueDropsNotificationsByCount(t *testing.T) {
	c, _, _, _ := stuckConn(t, nil)
	accepted := 0
	for range queuedNotes + 100 {
		if err := c.TryNotify("n", "x"); err == nil {
			accepted++
		} else if !errors.Is(err, jsonrpc.ErrQueueFull) {
			t.Fatalf("TryNotify: %v", err)
		}
	}
	if accepted != queuedNotes {
		t.Errorf("%d small notifications queued, want %d", accepted, queuedNotes)
	}
}

// TestQueueClosesWhenRepliesOverflow: a peer that sends calls and reads none
// of their replies has its connection closed once the replies would take
// the queue beyond 16 MiB: Run ends with an error that says the peer is not
// reading, and the log says so, once. No reply waits forever, none is
// dropped silently.
func TestQueueClosesWhenRepliesOverflow(t *testing.T) {
	big := strings.Repeat("r", 1<<20)
	route := routes(map[string]jsonrpc.Handler{"big": func(context.Context, *jsonrpc.Request) (any, error) { return big, nil }})
	_, client, runErr, logs := stuckConn(t, route)
	sent := make(chan error, 1)
	go func() {
		var err error
		for i := range queueBytes/len(big) + 32 {
			if _, err = client.Write([]byte(rpcMsg(rpcCall(i, "big", "")))); err != nil {
				break
			}
		}
		sent <- err
	}()
	select {
	case err := <-runErr:
		if err == nil || !strings.Contains(err.Error(), "the peer is not reading") || !strings.Contains(err.Error(), "exceed the limit of 16777216 bytes") {
			t.Errorf("Run: %v, want the queue overflow", err)
		}
		runErr <- err
	case <-time.After(rpcWait):
		t.Fatalf("the connection stayed open with %d MiB of replies unread; logs:\n%s", queueBytes>>20+32, logs)
	}
	<-sent
	// Said once: the replies that overflow after the first find the
	// connection closed already.
	if n := strings.Count(logs.String(), "the peer is not reading; closing the connection"); n != 1 {
		t.Errorf("logs say %d times why the connection closed, want once:\n%s", n, logs)
	}
}

// rawPeer runs a Conn over net.Pipe and returns it with a reader of the
// bytes it writes.
func rawPeer(t *testing.T) (*jsonrpc.Conn, *bufio.Reader) {
	t.Helper()
	server, client := net.Pipe()
	c := jsonrpc.NewConn(server, nil, jsonrpc.Options{})
	runErr := make(chan error, 1)
	go func() { runErr <- c.Run(context.Background()) }()
	t.Cleanup(func() {
		client.Close()
		c.Close()
		<-runErr
	})
	return c, bufio.NewReader(client)
}

// TestTryNotifyEncodedSameBytes: a notification encoded once is written
// byte for byte as TryNotify writes it, on every connection it is queued
// on.
func TestTryNotifyEncodedSameBytes(t *testing.T) {
	params := map[string]any{"title": "a <b> & ü", "n": 1}
	note, err := jsonrpc.EncodeNotification("agentd/x", params)
	if err != nil {
		t.Fatal(err)
	}
	if note.Method() != "agentd/x" {
		t.Errorf("Method() = %q", note.Method())
	}
	a, ra := rawPeer(t)
	b, rb := rawPeer(t)
	sent := make(chan error, 1)
	go func() {
		sent <- errors.Join(a.TryNotify("agentd/x", params), a.TryNotifyEncoded(note), b.TryNotifyEncoded(note))
	}()
	var got [3][]byte
	for i, r := range []*bufio.Reader{ra, ra, rb} {
		if got[i], err = readFrame(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	const want = `{"jsonrpc":"2.0","method":"agentd/x","params":{"n":1,"title":"a <b> & ü"}}`
	if string(got[0]) != want {
		t.Errorf("TryNotify wrote %s, want %s", got[0], want)
	}
	for _, body := range got[1:] {
		if !bytes.Equal(body, got[0]) {
			t.Errorf("encoded once: %s, want what TryNotify wrote: %s", body, got[0])
		}
	}
	if _, err := jsonrpc.EncodeNotification("agentd/x", func() {}); err == nil {
		t.Error("EncodeNotification of a func: no error")
	}
}

// TestQueueDropsEncodedNotifications: notifications encoded once count
// against the same bounds as TryNotify's: 4096 messages in all.
func TestQueueDropsEncodedNotifications(t *testing.T) {
	c, _, _, _ := stuckConn(t, nil)
	note, err := jsonrpc.EncodeNotification("n", "x")
	if err != nil {
		t.Fatal(err)
	}
	for range queuedNotes / 2 {
		if err := c.TryNotify("n", "x"); err != nil {
			t.Fatalf("TryNotify: %v", err)
		}
	}
	accepted := queuedNotes / 2
	for range queuedNotes {
		if err := c.TryNotifyEncoded(note); err == nil {
			accepted++
		} else if !errors.Is(err, jsonrpc.ErrQueueFull) {
			t.Fatalf("TryNotifyEncoded: %v", err)
		}
	}
	if accepted != queuedNotes {
		t.Errorf("%d notifications queued, want %d", accepted, queuedNotes)
	}
}
