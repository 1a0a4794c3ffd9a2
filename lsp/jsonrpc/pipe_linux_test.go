package jsonrpc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/agentd/agentd/lsp/jsonrpc"
)

// pipeConn is a Conn's transport over two real pipes, as a stdio server's
// or an adopted session's: Close closes only the input (the output stays
// open for what is left to write), and write deadlines apply to the output.
type pipeConn struct{ in, out *os.File }

func (p pipeConn) Read(b []byte) (int, error)            { return p.in.Read(b) }
func (p pipeConn) Write(b []byte) (int, error)           { return p.out.Write(b) }
func (p pipeConn) Close() error                          { return p.in.Close() }
func (p pipeConn) SetWriteDeadline(t time.Time) error    { return p.out.SetWriteDeadline(t) }
func (p pipeConn) SyscallConn() (syscall.RawConn, error) { return p.out.SyscallConn() }

// startPipeRPC runs a Conn over real pipes whose handler "big" answers n
// bytes, with Run's ctx; it returns the peer's ends (the Conn's input to
// write, its output to read) and Run's result.
func startPipeRPC(t *testing.T, ctx context.Context, n int) (input, output *os.File, runErr chan error) {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inW.Close(); outR.Close(); outW.Close() })
	big := func(context.Context, *jsonrpc.Request) (any, error) { return strings.Repeat("x", n), nil }
	c := jsonrpc.NewConn(pipeConn{inR, outW}, routes(map[string]jsonrpc.Handler{"big": big}), jsonrpc.Options{})
	runErr = make(chan error, 1)
	go func() { runErr <- c.Run(ctx) }()
	return inW, outR, runErr
}

// TestEndReleasesAWriteToAPeerThatDoesNotRead: a reply larger than the
// pipe's buffer to a peer that keeps the pipe open and never reads it, a
// call after it, which goes to the worker blocked on that write (a worker
// is idle again before it writes its reply), and then the end of the
// input: Run returns and the blocked write is released without waiting
// for its drain bound (set to an hour here), and no Conn goroutine is left
// behind.
func TestEndReleasesAWriteToAPeerThatDoesNotRead(t *testing.T) {
	defer jsonrpc.SetDrainTimeout(time.Hour)()
	input, output, runErr := startPipeRPC(t, context.Background(), 1<<20)
	if _, err := io.WriteString(input, rpcMsg(rpcCall(1, "big", ""))); err != nil {
		t.Fatal(err)
	}
	waitPipeFull(t, output)
	if _, err := io.WriteString(input, rpcMsg(rpcCall(2, "echo", `"after"`))); err != nil {
		t.Fatal(err)
	}
	input.Close()
	select {
	case err := <-runErr:
		if err != nil {
			t.Errorf("Run: %v, want nil (end of input)", err)
		}
	case <-time.After(rpcWait):
		t.Fatalf("Run did not return within %v of the end of input: it waits for a write to a peer that does not read", rpcWait)
	}
	for deadline := time.Now().Add(rpcWait); len(connGoroutines()) > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Conn goroutines left after Run:\n%s", strings.Join(connGoroutines(), "\n\n"))
		}
	}
}

// waitPipeFull waits until the pipe whose read end is r holds as many
// bytes as it can: its writer is blocked.
func waitPipeFull(t *testing.T, r *os.File) {
	t.Helper()
	raw, err := r.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	const fGetPipeSz = 1032 // F_GETPIPE_SZ
	for deadline := time.Now().Add(rpcWait); ; time.Sleep(time.Millisecond) {
		var size, queued int
		raw.Control(func(fd uintptr) {
			n, _, _ := syscall.Syscall(syscall.SYS_FCNTL, fd, fGetPipeSz, 0)
			size = int(n)
			syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&queued)))
		})
		if size > 0 && queued >= size {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pipe holds %d of %d bytes: the Conn is not writing", queued, size)
		}
	}
}

// TestEndWritesEveryReplyToAPeerThatReads: the same replies, larger than
// the pipe's buffer, to a peer that closes its output (the Conn's input)
// and then reads on: every reply arrives whole before Run returns.
func TestEndWritesEveryReplyToAPeerThatReads(t *testing.T) {
	const n = 1 << 20
	input, output, runErr := startPipeRPC(t, context.Background(), n)
	for i := range 3 {
		if _, err := io.WriteString(input, rpcMsg(rpcCall(i+1, "big", ""))); err != nil {
			t.Fatal(err)
		}
	}
	input.Close()
	output.SetReadDeadline(time.Now().Add(rpcWait))
	r := bufio.NewReader(output)
	var bodies [][]byte // read on, as a reading peer does, and decoded after
	for range 3 {
		body, err := readFrame(r)
		if err != nil {
			t.Fatalf("after %d replies: %v", len(bodies), err)
		}
		bodies = append(bodies, body)
	}
	got := map[string]bool{}
	for _, body := range bodies {
		var m struct {
			ID     json.RawMessage
			Result string
		}
		if err := json.Unmarshal(body, &m); err != nil || len(m.Result) != n {
			t.Fatalf("reply %.80s…: %v, want a result of %d bytes", body, err, n)
		}
		got[string(m.ID)] = true
	}
	if len(got) != 3 {
		t.Errorf("replies to %v, want 1, 2 and 3", got)
	}
	select {
	case err := <-runErr:
		if err != nil {
			t.Errorf("Run: %v, want nil (end of input)", err)
		}
	case <-time.After(rpcWait):
		t.Fatalf("Run did not return within %v", rpcWait)
	}
}

// slowReader is a peer that reads at most size bytes at a time, after a
// pause before each read, and after first before its first one.
type slowReader struct {
	r            io.Reader
	size         int
	pause, first time.Duration
}

func (s *slowReader) Read(b []byte) (int, error) {
	time.Sleep(s.first + s.pause)
	s.first = 0
	return s.r.Read(b[:min(len(b), s.size)])
}

// TestEndWritesEveryReplyToASlowReader: when the connection ends (the end
// of input, or ctx cancelled with ErrPeerEnded, as the LSP exit does),
// replies larger than the pipe's buffer reach a peer that reads, though
// slowly: one that begins reading 1 s after the end (a shell pipeline such
// as `| (sleep 1; cat)`), one that reads 4 KiB every 100 ms, and one whose
// reading takes longer than the handlers' bound (set to 100 ms here). A
// ctx cancelled for another reason (a signal) keeps that bound: Run
// returns before a reader that would begin after 1 s, which then finds
// the replies cut (docs/protocol.md §2.5).
func TestEndWritesEveryReplyToASlowReader(t *testing.T) {
	defer jsonrpc.SetDrainTimeout(100 * time.Millisecond)()
	for _, tc := range []struct {
		name   string
		end    string // "input": the end of input; "exit": ctx cancelled with ErrPeerEnded; "signal": ctx cancelled
		size   int    // of each of the 2 replies
		reader slowReader
		all    bool // every reply arrives
		pipe   int  // the pipe's buffer in bytes, 0 for the default (64 KiB)
	}{
		{"reads after a pause of 1 s", "input", 256 << 10, slowReader{size: 64 << 10, first: time.Second}, true, 0},
		{"reads 4 KiB every 100 ms", "input", 96 << 10, slowReader{size: 4 << 10, pause: 100 * time.Millisecond}, true, 0},
		// A pipe of one page: the write goes on only as the peer empties
		// that page, a few hundred bytes at a time.
		{"reads 400 bytes every 10 ms from a pipe of one page", "input", 8 << 10, slowReader{size: 400, pause: 10 * time.Millisecond}, true, 4096},
		{"reads after a pause of 1 s, exit", "exit", 256 << 10, slowReader{size: 64 << 10, first: time.Second}, true, 0},
		{"reads 16 KiB every 20 ms, exit", "exit", 512 << 10, slowReader{size: 16 << 10, pause: 20 * time.Millisecond}, true, 0},
		{"reads after a pause of 1 s, signal", "signal", 256 << 10, slowReader{size: 64 << 10, first: time.Second}, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			input, output, runErr := startPipeRPC(t, ctx, tc.size)
			if tc.pipe > 0 {
				const fSetPipeSz = 1031 // F_SETPIPE_SZ
				raw, err := output.SyscallConn()
				if err != nil {
					t.Fatal(err)
				}
				raw.Control(func(fd uintptr) { syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSz, uintptr(tc.pipe)) })
			}
			for i := range 2 {
				if _, err := io.WriteString(input, rpcMsg(rpcCall(i+1, "big", ""))); err != nil {
					t.Fatal(err)
				}
			}
			waitPipeFull(t, output)
			switch tc.end {
			case "input":
				input.Close()
			case "exit":
				cancel(jsonrpc.ErrPeerEnded)
			case "signal":
				// Run ends within its bound, before the reader begins;
				// the reader then finds what was written by then.
				cancel(nil)
				select {
				case <-runErr:
				case <-time.After(rpcWait):
					t.Fatalf("Run did not return within %v of the cancel", rpcWait)
				}
				tc.reader.first = 0
				runErr <- nil
			}
			// A bound against a hang only: the slowest reader here takes
			// about 5 s at its pace, and a loaded machine slows its pauses.
			output.SetReadDeadline(time.Now().Add(3 * rpcWait))
			if tc.end == "signal" {
				output.SetReadDeadline(time.Now().Add(time.Second))
			}
			tc.reader.r = output
			r := bufio.NewReader(&tc.reader)
			var replies int
			for ; replies < 2; replies++ {
				body, err := readFrame(r)
				if err != nil {
					break
				}
				var m struct{ Result string }
				if err := json.Unmarshal(body, &m); err != nil || len(m.Result) != tc.size {
					t.Fatalf("reply %.80s…: %v, want a result of %d bytes", body, err, tc.size)
				}
			}
			if got := replies == 2; got != tc.all {
				t.Errorf("%d of the 2 replies read, want all: %v", replies, tc.all)
			}
			select {
			case <-runErr:
			case <-time.After(rpcWait):
				t.Fatalf("Run did not return within %v", rpcWait)
			}
		})
	}
}
