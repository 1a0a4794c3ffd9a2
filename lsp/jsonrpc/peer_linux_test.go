package jsonrpc_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/lsp/jsonrpc"
)

// TestWriteToAPeerThatClosedIsNoError: a peer that closes its end of a
// socket while its call is being answered (as agentd hook drops its
// connection after each event, docs/hooks.md) makes the write fail with
// EPIPE or ECONNRESET; that is the peer gone, logged at debug level, not
// an error of ours.
func TestWriteToAPeerThatClosedIsNoError(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	conns := make([]net.Conn, 2)
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "socketpair")
		conns[i], err = net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	server, client := conns[0], conns[1]
	defer client.Close()
	logs := &rpcLog{}
	called, release := make(chan struct{}), make(chan struct{})
	answerLate := func(context.Context, *jsonrpc.Request) (any, error) {
		close(called)
		<-release
		return strings.Repeat("x", 1<<20), nil // more than a socket buffer holds
	}
	c := jsonrpc.NewConn(server, routes(map[string]jsonrpc.Handler{"late": answerLate}),
		jsonrpc.Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	runErr := make(chan error, 1)
	go func() { runErr <- c.Run(context.Background()) }()
	if _, err := io.WriteString(client, rpcMsg(rpcCall(1, "late", ""))); err != nil {
		t.Fatal(err)
	}
	select {
	case <-called:
	case <-time.After(rpcWait):
		t.Fatalf("the call was not handled within %v", rpcWait)
	}
	client.Close()
	close(release)
	select {
	case err := <-runErr:
		if err != nil {
			t.Errorf("Run: %v, want nil (the peer ended the input)", err)
		}
	case <-time.After(rpcWait):
		t.Fatalf("Run did not return within %v", rpcWait)
	}
	got := logs.String()
	if strings.Contains(got, "level=ERROR") || !strings.Contains(got, "the peer closed the connection") {
		t.Errorf("logs:\n%s\nwant the failed write at debug level, naming the peer gone, and no error", got)
	}
}
