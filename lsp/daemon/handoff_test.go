//go:build unix

package daemon_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/lsp"
	"github.com/agentd/agentd/lsp/daemon"
	"github.com/agentd/agentd/lsp/daemon/client"
	"github.com/agentd/agentd/lsp/jsonrpc"
	"github.com/agentd/agentd/service"
	"github.com/agentd/agentd/workspace"
	"github.com/agentd/agentd/workspace/wsfolder"
)

// startHandoff runs daemon.Handoff in this process on conn, with real
// pipes for the editor's stdin and stdout. Once Handoff returns, the
// forwarder's ends of the pipes are closed, as its exit closes them: the
// editor then reads the end of its output only when the daemon has closed
// its descriptors too.
func startHandoff(t testing.TB, ctx context.Context, conn *net.UnixConn, redial daemon.Redial) *forwarder {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	f := &forwarder{t: t, in: inW, out: bufio.NewReader(outR), outR: outR, done: make(chan struct{})}
	go func() {
		f.code, f.relay, f.err = daemon.Handoff(ctx, inR, outW, conn, redial, nil)
		if f.relay == nil {
			inR.Close()
			outW.Close()
		}
		close(f.done)
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return f
}

// dialHandoff is startHandoff on a new connection to the daemon at path.
func dialHandoff(t testing.TB, path string) *forwarder {
	t.Helper()
	conn, err := client.Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	return startHandoff(t, context.Background(), conn, nil)
}

// outputEnds checks that the editor's output ends (EOF) once the
// forwarder has returned: the daemon closed its copy of the pipe.
func (f *forwarder) outputEnds() {
	f.t.Helper()
	got := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(f.out)
		got <- err
	}()
	select {
	case err := <-got:
		if err != nil {
			f.t.Fatalf("reading the editor's output to its end: %v", err)
		}
	case <-time.After(10 * time.Second):
		f.t.Fatal("the editor's output did not end: the daemon still holds the pipe")
	}
}

// initIn is an initialize request with folder as rootUri.
func initIn(folder string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":%q,"capabilities":{}}}`, wsfolder.URIFromPath(folder))
}

// awaitTodoTitle reads the editor's output until agentd/todoChanged
// with title.
func (f *forwarder) awaitTodoTitle(title string) {
	f.t.Helper()
	for {
		m := f.next()
		if string(m["method"]) == `"agentd/todoChanged"` && strings.Contains(string(m["params"]), title) {
			return
		}
	}
}

// TestHandoffAdopts: the daemon serves the editor's own pipes as a socket
// connection (answers, notifications of another client's change), and
// the forwarder ends with the session's code, as it did relaying: 0 at
// the end of input and after shutdown and exit, 1 after exit alone and
// when the editor closed its output. The daemon then holds no copy of
// the pipes.
func TestHandoffAdopts(t *testing.T) {
	path := filepath.Join(shortDir(t), "d.sock")
	startDaemon(t, path, 0)
	folder := shortDir(t)
	for _, tt := range []struct {
		name string
		end  func(f *forwarder)
		want int
	}{
		{"end of input", func(f *forwarder) { f.in.Close() }, 0},
		{"shutdown and exit", func(f *forwarder) {
			f.send(`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`)
			f.next()
			f.send(`{"jsonrpc":"2.0","method":"exit"}`)
		}, 0},
		{"exit without shutdown", func(f *forwarder) { f.send(`{"jsonrpc":"2.0","method":"exit"}`) }, 1},
		{"editor closed its output", func(f *forwarder) {
			f.outR.Close()
			f.out = bufio.NewReader(strings.NewReader("")) // for outputEnds: nothing is left to read
			f.send(`{"jsonrpc":"2.0","id":3,"method":"workspace/executeCommand","params":{"command":"agentd.state","arguments":[{}]}}`)
		}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := dialHandoff(t, path)
			f.send(initIn(folder))
			if m := f.next(); string(m["id"]) != "1" || m["result"] == nil {
				t.Fatalf("initialize reply = %v", m)
			}
			f.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
			other := dialClient(t, path)
			other.initialize(folder)
			other.writeTodos(folder, tt.name)
			f.awaitTodoTitle(tt.name)
			tt.end(f)
			code, err := f.wait()
			if code != tt.want || err != nil || f.relay != nil {
				t.Fatalf("code %d, err %v, relay %v; want %d, nil, nil", code, err, f.relay, tt.want)
			}
			f.outputEnds()
		})
	}
}

// oldDaemon serves a socket the way agentd did before the handoff: every
// connection goes to ServeConn as it is.
func oldDaemon(t testing.TB) string {
	t.Helper()
	ln, path := listenUnix(t, "old.sock")
	svc := service.New(workspace.Options{StateDir: filepath.Join(shortDir(t), "state")}, service.Daemon)
	srv := lsp.NewServer(svc, "0.1.0", nil)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); srv.Close(); svc.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				srv.ServeConn(ctx, c, lsp.ConnOptions{})
				c.Close()
			}()
		}
	}()
	return path
}

// TestHandoffRefusedRelays: a daemon that does not adopt the pipes (an
// agentd from before the handoff answers agentd/adopt with an error; a
// daemon given a regular file as stdin refuses it) leaves the connection
// to be relayed on, and the session works through Forward on it.
func TestHandoffRefusedRelays(t *testing.T) {
	for _, tt := range []struct {
		name  string
		path  func(t *testing.T) string
		stdin func(t *testing.T) *os.File
	}{
		{"older daemon", func(t *testing.T) string { return oldDaemon(t) }, nil},
		{"regular file", func(t *testing.T) string {
			path := filepath.Join(shortDir(t), "d.sock")
			startDaemon(t, path, 0)
			return path
		}, func(t *testing.T) *os.File {
			f, err := os.Create(filepath.Join(shortDir(t), "stdin"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			return f
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := client.Dial(tt.path(t))
			if err != nil {
				t.Fatal(err)
			}
			in, out := os.Stdin, os.Stdout // never read nor written: only sent
			if tt.stdin != nil {
				in = tt.stdin(t)
			}
			code, relay, err := daemon.Handoff(context.Background(), in, out, conn, nil, nil)
			if relay == nil || code != 0 || err != nil {
				t.Fatalf("Handoff = %d, %v, %v; want a connection to relay on", code, relay, err)
			}
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			f := &forwarder{t: t, in: inW, out: bufio.NewReader(outR), done: make(chan struct{})}
			go func() {
				f.code, f.err = daemon.Forward(context.Background(), inR, outW, relay, nil, nil)
				outW.Close()
				close(f.done)
			}()
			f.send(initMsg)
			if m := f.next(); string(m["id"]) != "1" || m["result"] == nil {
				t.Fatalf("initialize reply through the relay = %v", m)
			}
			f.in.Close()
			if code, err := f.wait(); code != 0 || err != nil {
				t.Fatalf("relay: code %d, err %v; want 0, nil", code, err)
			}
		})
	}
}

// openFds counts this process's open descriptors.
func openFds(t testing.TB) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot list descriptors: %v", err)
	}
	return len(entries)
}

// sendAdopt writes an agentd/adopt request with params on c, with fds as
// SCM_RIGHTS, and more bytes after it.
func sendAdopt(t testing.TB, c *net.UnixConn, params string, fds []int, more string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":"a","method":"agentd/adopt","params":` + params + `}`
	var oob []byte
	if len(fds) > 0 {
		oob = syscall.UnixRights(fds...)
	}
	if _, _, err := c.WriteMsgUnix(append(jsonrpc.Frame([]byte(body)), more...), oob, nil); err != nil {
		t.Fatal(err)
	}
}

// readMessage reads one message from r.
func readMessage(t testing.TB, r *jsonrpc.Reader) map[string]json.RawMessage {
	t.Helper()
	n, err := r.ReadHeader()
	if err != nil {
		t.Fatalf("reading the daemon's answer: %v", err)
	}
	body, err := r.ReadBody(n)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestAdoptBadRequests: an agentd/adopt the daemon cannot honour is
// answered with an error naming the problem, every descriptor it carried
// is closed, and the connection goes on as an ordinary one; the daemon
// keeps serving.
func TestAdoptBadRequests(t *testing.T) {
	path := filepath.Join(shortDir(t), "d.sock")
	startDaemon(t, path, 0)
	pipe := func(t *testing.T) (r, w *os.File) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close(); w.Close() })
		return r, w
	}
	pid := fmt.Sprintf(`{"pid":%d}`, os.Getpid())
	for _, tt := range []struct {
		name   string
		params string
		fds    func(t *testing.T) []int
		more   string
		want   string
	}{
		{"no descriptors", pid, func(*testing.T) []int { return nil }, "", "carries 0 descriptors"},
		{"one descriptor", pid, func(t *testing.T) []int { r, _ := pipe(t); return []int{int(r.Fd())} }, "", "carries 1 descriptors"},
		{"three descriptors", pid, func(t *testing.T) []int {
			r, w := pipe(t)
			return []int{int(r.Fd()), int(w.Fd()), int(w.Fd())}
		}, "", "carries 3 descriptors"},
		{"many descriptors", pid, func(t *testing.T) []int {
			r, w := pipe(t)
			fds := []int{int(r.Fd())}
			for range 40 {
				fds = append(fds, int(w.Fd()))
			}
			return fds
		}, "", "could not receive every descriptor"},
		{"stdin write-only", pid, func(t *testing.T) []int { _, w := pipe(t); return []int{int(w.Fd()), int(w.Fd())} }, "", "stdin: not open for reading"},
		{"stdout read-only", pid, func(t *testing.T) []int { r, _ := pipe(t); return []int{int(r.Fd()), int(r.Fd())} }, "", "stdout: not open for writing"},
		{"a terminal or device", pid, func(t *testing.T) []int {
			null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { null.Close() })
			return []int{int(null.Fd()), int(null.Fd())}
		}, "", "stdin: not a pipe or a socket"},
		{"bad params", `{"pid":"me"}`, func(t *testing.T) []int { r, w := pipe(t); return []int{int(r.Fd()), int(w.Fd())} }, "", "needs params {pid: number}"},
		{"another PID namespace", fmt.Sprintf(`{"pid":%d}`, os.Getpid()+100000), func(t *testing.T) []int { r, w := pipe(t); return []int{int(r.Fd()), int(w.Fd())} }, "", "another PID namespace"},
		{"bytes after the request", pid, func(t *testing.T) []int { r, w := pipe(t); return []int{int(r.Fd()), int(w.Fd())} }, string(jsonrpc.Frame([]byte(initMsg))), "bytes followed agentd/adopt"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fds := tt.fds(t)
			before := openFds(t)
			c, err := client.Dial(path)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			sendAdopt(t, c, tt.params, fds, tt.more)
			r := jsonrpc.NewReader(c, jsonrpc.ReaderOptions{})
			m := readMessage(t, r)
			var e jsonrpc.Error
			if string(m["id"]) != `"a"` || json.Unmarshal(m["error"], &e) != nil || !strings.Contains(e.Message, tt.want) {
				t.Fatalf("answer = %v, want an error saying %q", m, tt.want)
			}
			// The connection is an ordinary one now.
			if tt.more == "" {
				c.Write(jsonrpc.Frame([]byte(initMsg)))
			}
			if m := readMessage(t, r); string(m["id"]) != "1" || m["result"] == nil {
				t.Fatalf("initialize after the refusal = %v", m)
			}
			c.Close()
			waitFds(t, before+1) // c, closed: the daemon's copy of c may take a moment
		})
	}
	// Still serving.
	other := dialClient(t, path)
	other.initialize(shortDir(t))
}

// waitFds waits until this process has at most n descriptors open.
func waitFds(t testing.TB, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for openFds(t) > n {
		if time.Now().After(deadline) {
			t.Fatalf("%d descriptors open, want at most %d: the daemon kept some", openFds(t), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAdoptControlMistakes: a forwarder that closes its connection right
// after agentd/adopt, or sends bytes (even descriptors again) on the
// control connection of an adopted session, ends that session; the
// daemon closes every descriptor and keeps serving.
func TestAdoptControlMistakes(t *testing.T) {
	path := filepath.Join(shortDir(t), "d.sock")
	startDaemon(t, path, 0)
	pid := fmt.Sprintf(`{"pid":%d}`, os.Getpid())
	for _, tt := range []struct {
		name  string
		after func(t *testing.T, c *net.UnixConn, r *jsonrpc.Reader, fds []int)
	}{
		{"closes at once", func(t *testing.T, c *net.UnixConn, r *jsonrpc.Reader, fds []int) { c.Close() }},
		{"descriptors again", func(t *testing.T, c *net.UnixConn, r *jsonrpc.Reader, fds []int) {
			readMessage(t, r) // adopted
			sendAdopt(t, c, pid, fds, "")
			m := readMessage(t, r)
			if string(m["method"]) != `"agentd/adoptedEnded"` || !strings.Contains(string(m["params"]), `"code":1`) {
				t.Fatalf("after a second agentd/adopt on the control connection: %v, want agentd/adoptedEnded with code 1", m)
			}
			c.Close()
		}},
		{"ends its side", func(t *testing.T, c *net.UnixConn, r *jsonrpc.Reader, fds []int) {
			readMessage(t, r)
			c.CloseWrite()
			if m := readMessage(t, r); string(m["method"]) != `"agentd/adoptedEnded"` {
				t.Fatalf("after the forwarder ended its side: %v, want agentd/adoptedEnded", m)
			}
			c.Close()
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := openFds(t)
			inR, inW, _ := os.Pipe()
			outR, outW, _ := os.Pipe()
			c, err := client.Dial(path)
			if err != nil {
				t.Fatal(err)
			}
			fds := []int{int(inR.Fd()), int(outW.Fd())}
			sendAdopt(t, c, pid, fds, "")
			tt.after(t, c, jsonrpc.NewReader(c, jsonrpc.ReaderOptions{}), fds)
			inR.Close()
			outW.Close()
			// The editor's output ends only once the daemon has closed its
			// copy of the pipe.
			if _, err := io.ReadAll(outR); err != nil {
				t.Fatal(err)
			}
			inW.Close()
			outR.Close()
			waitFds(t, before)
		})
	}
	other := dialClient(t, path)
	other.initialize(shortDir(t))
}

// TestHandoffLostDaemon: a daemon that stops while it serves the editor's
// pipes closes the control connection without a code: the forwarder ends
// with 1 and an error saying it lost the daemon; the pipes are closed.
func TestHandoffLostDaemon(t *testing.T) {
	path := filepath.Join(shortDir(t), "d.sock")
	td := startDaemon(t, path, 0)
	f := dialHandoff(t, path)
	f.send(initMsg)
	f.next()
	td.stop()
	code, err := f.wait()
	if code != 1 || err == nil || !strings.Contains(err.Error(), "closed the connection") {
		t.Fatalf("code %d, err %v; want 1 and an error saying the daemon closed the connection", code, err)
	}
	f.outputEnds()
}

// TestHandoffStopped: a forwarder told to stop (ctx: a signal) ends the
// session on its control connection and returns 1 once the daemon has
// finished it, with its descriptors closed.
func TestHandoffStopped(t *testing.T) {
	path := filepath.Join(shortDir(t), "d.sock")
	startDaemon(t, path, 0)
	conn, err := client.Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := startHandoff(t, ctx, conn, nil)
	f.send(initMsg)
	f.next()
	cancel()
	if code, err := f.wait(); code != 1 || err != nil {
		t.Fatalf("code %d, err %v; want 1, nil", code, err)
	}
	f.outputEnds()
}

// TestHandoffRedials: a daemon that ends the connection before it
// answered agentd/adopt (it was stopping when dialled) adopted nothing:
// the forwarder connects again and hands its pipes to the next daemon.
func TestHandoffRedials(t *testing.T) {
	next := filepath.Join(shortDir(t), "d.sock")
	startDaemon(t, next, 0)
	conn, err := client.Dial(endingDaemon(t, "agentd/adopt"))
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	f := startHandoff(t, context.Background(), conn, countingRedial(next, &calls))
	f.send(initMsg)
	if m := f.next(); string(m["id"]) != "1" || m["result"] == nil {
		t.Fatalf("initialize reply = %v", m)
	}
	f.in.Close()
	if code, err := f.wait(); code != 0 || err != nil || f.relay != nil {
		t.Fatalf("code %d, err %v, relay %v; want 0, nil, nil", code, err, f.relay)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("redialled %d times, want 1", n)
	}
}

// TestHandoffRedialsBounded: daemons that keep ending the connection
// before they answer are tried at most 3 more times; then the forwarder
// ends with 1 and an error that says so.
func TestHandoffRedialsBounded(t *testing.T) {
	path := closingListener(t)
	conn, err := client.Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	f := startHandoff(t, context.Background(), conn, countingRedial(path, &calls))
	code, err := f.wait()
	if code != 1 || err == nil || !strings.Contains(err.Error(), "before it answered agentd/adopt") {
		t.Fatalf("code %d, err %v; want 1 and an error saying the daemon ended before it answered", code, err)
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("redialled %d times, want 3", n)
	}
	if errors.Is(err, client.ErrNoDaemon) {
		t.Errorf("err %v wraps ErrNoDaemon", err)
	}
}

// TestAdoptRefusesItsOwnConnections: a client that sends, as the editor's
// stdin and stdout, its end of a connection to the daemon (the control
// connection itself, or another one) is refused: the daemon would hold
// both ends of that connection, and the session would outlive the
// client. Every descriptor is closed once the client has gone.
func TestAdoptRefusesItsOwnConnections(t *testing.T) {
	path := filepath.Join(shortDir(t), "d.sock")
	startDaemon(t, path, 0)
	pid := fmt.Sprintf(`{"pid":%d}`, os.Getpid())
	fdOf := func(c *net.UnixConn) int {
		raw, err := c.SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var fd int
		raw.Control(func(u uintptr) { fd = int(u) })
		return fd
	}
	for _, name := range []string{"the control connection", "another connection"} {
		t.Run(name, func(t *testing.T) {
			before := openFds(t)
			c, err := client.Dial(path)
			if err != nil {
				t.Fatal(err)
			}
			sent := c
			if name == "another connection" {
				if sent, err = client.Dial(path); err != nil {
					t.Fatal(err)
				}
			}
			sendAdopt(t, c, pid, []int{fdOf(sent), fdOf(sent)}, "")
			m := readMessage(t, jsonrpc.NewReader(c, jsonrpc.ReaderOptions{}))
			var e jsonrpc.Error
			if json.Unmarshal(m["error"], &e) != nil || !strings.Contains(e.Message, "stdin: a connection to this daemon") {
				t.Errorf("answer = %v, want an error saying stdin is a connection to this daemon", m)
			}
			sent.Close()
			c.Close()
			waitFds(t, before)
		})
	}
}
