package jsonrpc_test

import (
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
// reading, and the log says so. No reply waits forever, none is dropped
// silently.
func TestQueueClosesWhenRepliesOverflow(t *testing.T) {
	big := strings.Repeat("r", 1<<20)
	route := routes(map[string]jsonrpc.Handler{"big": func(context.Context, *jsonrpc.Request) (any, error) { return big, nil }})
	_, client, runErr, logs := stuckConn(t, route)
	sent := make(chan error, 1)
	go func() {
		var err error
		for i := range queueBytes/len(big) + 4 {
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
		t.Fatalf("the connection stayed open with %d MiB of replies unread; logs:\n%s", queueBytes>>20+4, logs)
	}
	if !strings.Contains(logs.String(), "the peer is not reading; closing the connection") {
		t.Errorf("logs do not say why the connection closed:\n%s", logs)
	}
	<-sent
}
