package daemon_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd/agentd/commands/protocol"

	"github.com/agentd/agentd/commands"
	"github.com/agentd/agentd/lsp/daemon"
	"github.com/agentd/agentd/lsp/daemon/client"
	"github.com/agentd/agentd/lsp/jsonrpc"
)

// forwarder runs daemon.Forward in this process with pipes for the editor.
type forwarder struct {
	t     testing.TB
	in    io.WriteCloser // the editor's writes
	out   *bufio.Reader  // what the editor reads
	done  chan struct{}
	code  int
	err   error
	relay *net.UnixConn // Handoff's (startHandoff)
	outR  *os.File      // the editor's end of its stdout pipe (startHandoff)
}

func startForward(t testing.TB, path string) *forwarder {
	t.Helper()
	return startForwardRedial(t, path, nil)
}

// startForwardRedial is startForward with redial for Forward.
func startForwardRedial(t testing.TB, path string, redial daemon.Redial) *forwarder {
	t.Helper()
	conn, err := client.Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	f := &forwarder{t: t, in: inW, out: bufio.NewReader(outR), done: make(chan struct{})}
	go func() {
		f.code, f.err = daemon.Forward(context.Background(), inR, outW, conn, redial, nil)
		outW.Close()
		close(f.done)
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return f
}

func (f *forwarder) send(body string) {
	f.t.Helper()
	if _, err := fmt.Fprintf(f.in, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		f.t.Fatal(err)
	}
}

// next reads the next message the editor gets.
func (f *forwarder) next() map[string]json.RawMessage {
	f.t.Helper()
	n := -1
	for {
		line, err := f.out.ReadString('\n')
		if err != nil {
			f.t.Fatalf("reading: %v", err)
		}
		line = strings.TrimSpace(line)
		if line == "" && n >= 0 {
			break
		}
		fmt.Sscanf(line, "Content-Length: %d", &n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(f.out, body); err != nil {
		f.t.Fatal(err)
	}
	var m map[string]json.RawMessage
	json.Unmarshal(body, &m)
	return m
}

func (f *forwarder) wait() (int, error) {
	f.t.Helper()
	select {
	case <-f.done:
		return f.code, f.err
	case <-time.After(10 * time.Second):
		f.t.Fatal("Forward did not return")
		return 0, nil
	}
}

const initMsg = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`

// TestForwardEndsOnInputEOF: messages go both ways; the end of the
// editor's input ends the forwarder with 0.
func TestForwardEndsOnInputEOF(t *testing.T) {
	path := filepath.Join(shortDir(t), "d.sock")
	startDaemon(t, path, 0)
	f := startForward(t, path)
	f.send(initMsg)
	if m := f.next(); string(m["id"]) != "1" || m["result"] == nil {
		t.Fatalf("initialize reply = %v", m)
	}
	f.in.Close()
	if code, err := f.wait(); code != 0 || err != nil {
		t.Fatalf("after end of input: code %d, err %v; want 0, nil", code, err)
	}
}

// TestForwardExitCodes: after the client's exit, the forwarder ends like a
// stdio server: 0 after shutdown, else 1.
func TestForwardExitCodes(t *testing.T) {
	path := filepath.Join(shortDir(t), "d.sock")
	startDaemon(t, path, 0)
	for _, tt := range []struct {
		name     string
		shutdown bool
		want     int
	}{{"after shutdown", true, 0}, {"without shutdown", false, 1}} {
		t.Run(tt.name, func(t *testing.T) {
			f := startForward(t, path)
			f.send(initMsg)
			f.next()
			if tt.shutdown {
				f.send(`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`)
				f.next()
			}
			f.send(`{"jsonrpc":"2.0","method":"exit"}`)
			if code, err := f.wait(); code != tt.want || err != nil {
				t.Fatalf("code %d, err %v; want %d, nil", code, err, tt.want)
			}
		})
	}
}

// TestForwardFollowsBrokenFraming: the forwarder follows the messages the
// daemon reads after broken framing (a length counted in characters, junk
// lines, a bad length), so it sees the shutdown that follows and exits 0
// after exit, like the daemon's own connection.
func TestForwardFollowsBrokenFraming(t *testing.T) {
	path := filepath.Join(shortDir(t), "d.sock")
	startDaemon(t, path, 0)
	f := startForward(t, path)
	f.send(initMsg)
	f.next()
	shutdown := `{"jsonrpc":"2.0","id":2,"method":"shutdown"}`
	io.WriteString(f.in, "Content-Length: 5\r\n\r\n\"éé\"junk line\r\nContent-Length: x\r\n\r\n"+
		fmt.Sprintf("more junk Content-Length: %d\r\n\r\n%s", len(shutdown), shutdown))
	for _, want := range []string{"null", "null", "null", "2"} { // -32700 for the body, the junk, the bad length; then shutdown
		if m := f.next(); string(m["id"]) != want {
			t.Fatalf("got %v, want a reply with id %s", m, want)
		}
	}
	f.send(`{"jsonrpc":"2.0","method":"exit"}`)
	if code, err := f.wait(); code != 0 || err != nil {
		t.Fatalf("code %d, err %v; want 0, nil", code, err)
	}
}

// TestForwardLostDaemon: when the daemon goes away after it answered, the
// forwarder ends at once with 1 and an error that says so; it does not
// connect again (the client's session was the lost daemon's).
func TestForwardLostDaemon(t *testing.T) {
	path := filepath.Join(shortDir(t), "d.sock")
	td := startDaemon(t, path, 0)
	f := startForwardRedial(t, path, func(context.Context) (*net.UnixConn, error) {
		t.Error("Forward connected again after the daemon had answered")
		return nil, client.ErrNoDaemon
	})
	f.send(initMsg)
	f.next()
	td.stop()
	code, err := f.wait()
	if code != 1 || err == nil || !strings.Contains(err.Error(), "closed the connection") {
		t.Fatalf("code %d, err %v; want 1 and an error saying the daemon closed the connection", code, err)
	}
}

// dyingDaemon listens at a new socket path and never accepts; drop closes
// the listener, and the kernel resets the connections queued on it. So
// ends a connection to a daemon killed with SIGKILL: its socket takes
// connections until its last thread has exited.
func dyingDaemon(t testing.TB) (path string, drop func()) {
	t.Helper()
	ln, path := listenUnix(t, "dying.sock")
	return path, func() { ln.Close() }
}

// endingDaemon listens at a new socket path, accepts one connection, reads
// until it has seen until, and closes it without answering, as a daemon
// that stops (idle timeout, handover) or dies as it reads.
func endingDaemon(t testing.TB, until string) string {
	t.Helper()
	ln, path := listenUnix(t, "ending.sock")
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		var got []byte
		buf := make([]byte, 4096)
		for !bytes.Contains(got, []byte(until)) {
			n, err := c.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				return
			}
		}
	}()
	return path
}

// countingRedial is a Redial that dials path and counts its calls.
func countingRedial(path string, calls *atomic.Int32) daemon.Redial {
	return func(context.Context) (*net.UnixConn, error) {
		calls.Add(1)
		return client.Dial(path)
	}
}

// TestForwardReconnectsToNextDaemon: a daemon that ends the connection
// before it answered the client's initialize (it was dying or stopping
// when dialled) is replaced: the forwarder connects again, the next
// daemon gets the same initialize, and the session goes on there.
func TestForwardReconnectsToNextDaemon(t *testing.T) {
	for _, tt := range []struct {
		name  string
		start func(t *testing.T) *forwarder
	}{
		{"connection reset unaccepted", func(t *testing.T) *forwarder {
			path, drop := dyingDaemon(t)
			next := filepath.Join(shortDir(t), "d.sock")
			startDaemon(t, next, 0)
			var calls atomic.Int32
			f := startForwardRedial(t, path, countingRedial(next, &calls))
			f.send(initMsg)
			drop()
			t.Cleanup(func() {
				if n := calls.Load(); n != 1 {
					t.Errorf("redial called %d times, want 1", n)
				}
			})
			return f
		}},
		{"closed after reading initialize", func(t *testing.T) *forwarder {
			path := endingDaemon(t, `"initialize"`)
			next := filepath.Join(shortDir(t), "d.sock")
			startDaemon(t, next, 0)
			var calls atomic.Int32
			f := startForwardRedial(t, path, countingRedial(next, &calls))
			f.send(initMsg)
			t.Cleanup(func() {
				if n := calls.Load(); n != 1 {
					t.Errorf("redial called %d times, want 1", n)
				}
			})
			return f
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.start(t)
			if m := f.next(); string(m["id"]) != "1" || m["result"] == nil {
				t.Fatalf("initialize reply = %v, want the next daemon's result", m)
			}
			f.send(`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`)
			if m := f.next(); string(m["id"]) != "2" {
				t.Fatalf("shutdown reply = %v", m)
			}
			f.send(`{"jsonrpc":"2.0","method":"exit"}`)
			if code, err := f.wait(); code != 0 || err != nil {
				t.Fatalf("code %d, err %v; want 0, nil", code, err)
			}
		})
	}
}

// TestForwardNoReplayAfterMoreThanInitialize: when the client sent more
// than initialize before the daemon ended the connection unanswered, the
// daemon may have run it: the forwarder does not send it again elsewhere
// but ends with 1, saying it lost the daemon.
func TestForwardNoReplayAfterMoreThanInitialize(t *testing.T) {
	path := endingDaemon(t, "agentd.todo.set")
	var calls atomic.Int32
	f := startForwardRedial(t, path, countingRedial(filepath.Join(shortDir(t), "none.sock"), &calls))
	f.send(initMsg)
	f.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	f.send(`{"jsonrpc":"2.0","id":2,"method":"workspace/executeCommand","params":{"command":"agentd.todo.set","arguments":[{"items":[]}]}}`)
	code, err := f.wait()
	if code != 1 || err == nil || !strings.Contains(err.Error(), "closed the connection") {
		t.Fatalf("code %d, err %v; want 1 and an error saying the daemon closed the connection", code, err)
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("redial called %d times, want 0", n)
	}
}

// TestForwardNoRedialAfterInputEnded: an editor whose input ends before it
// sent a whole initialize (nothing at all: stdin /dev/null or empty; or a
// message cut short) has the daemon end the connection unanswered because
// of that end, not because the daemon was going away: the forwarder ends
// with 0 and connects no more.
func TestForwardNoRedialAfterInputEnded(t *testing.T) {
	path := filepath.Join(shortDir(t), "d.sock")
	startDaemon(t, path, 0)
	for _, tt := range []struct{ name, input string }{
		{"nothing", ""},
		{"a cut initialize", fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(initMsg), initMsg[:20])},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			f := startForwardRedial(t, path, countingRedial(path, &calls))
			io.WriteString(f.in, tt.input)
			f.in.Close()
			if code, err := f.wait(); code != 0 || err != nil {
				t.Errorf("code %d, err %v; want 0, nil", code, err)
			}
			if n := calls.Load(); n != 0 {
				t.Errorf("redial called %d times, want 0", n)
			}
		})
	}
}

// TestForwardRedialsBounded: when every daemon reached ends the connection
// unanswered, the forwarder gives up after 3 new connections, with 1 and
// an error that says so; and when connecting again fails, at once.
func TestForwardRedialsBounded(t *testing.T) {
	t.Run("every daemon ends", func(t *testing.T) {
		var calls atomic.Int32
		f := startForwardRedial(t, endingDaemon(t, `"initialize"`), func(context.Context) (*net.UnixConn, error) {
			calls.Add(1)
			return client.Dial(endingDaemon(t, `"initialize"`))
		})
		f.send(initMsg)
		code, err := f.wait()
		if code != 1 || err == nil || !strings.Contains(err.Error(), "closed the connection") {
			t.Fatalf("code %d, err %v; want 1 and an error saying the daemon closed the connection", code, err)
		}
		if n := calls.Load(); n != 3 {
			t.Fatalf("redial called %d times, want 3", n)
		}
	})
	t.Run("connecting again fails", func(t *testing.T) {
		var calls atomic.Int32
		f := startForwardRedial(t, endingDaemon(t, `"initialize"`), countingRedial(filepath.Join(shortDir(t), "none.sock"), &calls))
		f.send(initMsg)
		code, err := f.wait()
		if code != 1 || !errors.Is(err, client.ErrNoDaemon) || !strings.Contains(err.Error(), "connecting again failed") {
			t.Fatalf("code %d, err %v; want 1 and an error saying connecting again failed (no daemon)", code, err)
		}
		if n := calls.Load(); n != 1 {
			t.Fatalf("redial called %d times, want 1", n)
		}
	})
}

// TestForwardBytesVerbatim: whatever the editor writes, framing errors
// included, reaches the daemon unchanged, and the other way round.
func TestForwardBytesVerbatim(t *testing.T) {
	ln, path := listenUnix(t, "raw.sock")
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Write([]byte("from daemon\x00\xff"))
		b, _ := io.ReadAll(c)
		got <- b
		c.Close()
	}()
	f := startForward(t, path)
	big := strings.Repeat("x", 70<<10) // longer than the relay's line buffer
	sent := "garbage line\r\n" + big + "\n" +
		"Content-Length: 5\r\n\r\n{bad}" +
		"content-length: 2\r\nX-Other: 1\r\n\r\n{}" +
		"Content-Length: " + fmt.Sprint(len(initMsg)) + "\r\n\r\n" + initMsg +
		"Content-Length: 10\r\n\r\ntrunc"
	io.WriteString(f.in, sent)
	buf := make([]byte, len("from daemon\x00\xff"))
	if _, err := io.ReadFull(f.out, buf); err != nil || string(buf) != "from daemon\x00\xff" {
		t.Fatalf("editor read %q, %v", buf, err)
	}
	f.in.Close()
	select {
	case b := <-got:
		if !bytes.Equal(b, []byte(sent)) {
			t.Fatalf("daemon got %d bytes, want the %d sent unchanged", len(b), len(sent))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the daemon side never saw the end of input")
	}
	if code, _ := f.wait(); code != 0 {
		t.Fatalf("code %d, want 0", code)
	}
}

// TestForwardParentDeath: the forwarder ends when the processId given in
// initialize is gone.
func TestForwardParentDeath(t *testing.T) {
	path := filepath.Join(shortDir(t), "d.sock")
	startDaemon(t, path, 0)
	parent := exec.Command("sleep", "60")
	if err := parent.Start(); err != nil {
		t.Skipf("cannot start a stand-in parent: %v", err)
	}
	f := startForward(t, path)
	f.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":%d,"capabilities":{}}}`, parent.Process.Pid))
	f.next()
	parent.Process.Kill()
	parent.Wait()
	if code, err := f.wait(); code != 1 || err != nil {
		t.Fatalf("code %d, err %v; want 1, nil", code, err)
	}
}

// TestDialOrStartStartsOne: forwarders racing to start the daemon end with
// one daemon, all connected to it.
func TestDialOrStartStartsOne(t *testing.T) {
	path := filepath.Join(shortDir(t), "d.sock")
	var starts atomic.Int32
	start := func() (<-chan error, error) {
		starts.Add(1)
		go func() { startDaemon(t, path, 0) }() // answers a little later
		return nil, nil
	}
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			c, err := client.DialOrStart(context.Background(), path, start)
			if err == nil {
				c.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("DialOrStart: %v", err)
		}
	}
	if got := starts.Load(); got != 1 {
		t.Fatalf("started %d daemons, want 1", got)
	}
}

// TestDialOrStartReportsEarlyExit: a daemon that ends as it starts is
// reported at once, not after the whole wait.
func TestDialOrStartReportsEarlyExit(t *testing.T) {
	path := filepath.Join(shortDir(t), "d.sock")
	exited := make(chan error, 1)
	exited <- errors.New("exit status 1")
	_, err := client.DialOrStart(context.Background(), path, func() (<-chan error, error) { return exited, nil })
	if err == nil || !strings.Contains(err.Error(), "ended as it started") {
		t.Fatalf("got %v, want an error saying the daemon ended as it started", err)
	}
}

// TestDialDaemonNoDaemon: no socket and a stale one both mean ErrNoDaemon.
func TestDialDaemonNoDaemon(t *testing.T) {
	dir := shortDir(t)
	if _, err := client.Dial(filepath.Join(dir, "none.sock")); !errors.Is(err, client.ErrNoDaemon) {
		t.Errorf("missing socket: %v, want ErrNoDaemon", err)
	}
	stale := filepath.Join(dir, "stale.sock")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	if _, err := client.Dial(stale); !errors.Is(err, client.ErrNoDaemon) {
		t.Errorf("stale socket: %v, want ErrNoDaemon", err)
	}
}

// TestCallDaemon: a shell command's session through the daemon; a refusal
// comes back with its code and data, and the daemon's other clients see
// the change.
func TestCallDaemon(t *testing.T) {
	dir := shortDir(t)
	ws := filepath.Join(dir, "ws")
	mkdirs(t, ws)
	path := filepath.Join(dir, "d.sock")
	startDaemon(t, path, 0)
	watcher := dialClient(t, path)
	watcher.initialize(ws)

	call := func(id protocol.CommandID, args any) (json.RawMessage, error) {
		conn, err := client.Dial(path)
		if err != nil {
			t.Fatal(err)
		}
		return client.Call(context.Background(), conn, ws, "s1", id, args, client.CallWaits{})
	}
	raw, err := call("agentd.todo.set", map[string]any{"items": []any{map[string]any{"title": "a", "status": "pending"}}, "expectedRevision": 0})
	var st protocol.State
	if err != nil || json.Unmarshal(raw, &st) != nil || st.Session != "s1" || st.Todos.Revision != 1 {
		t.Fatalf("todo.set: %s, %v; want State of session s1 at revision 1", raw, err)
	}
	watcher.awaitTodo(func(tc todoChanged) bool { return tc.Revision == 1 })

	_, err = call("agentd.todo.set", map[string]any{"items": []any{}, "expectedRevision": 0})
	var ce *commands.Error
	if protocol.ErrorCode(err) != "todo.conflict" || !errors.As(err, &ce) || ce.Data["state"] == nil || !strings.Contains(err.Error(), "changed since you read it") {
		t.Fatalf("stale todo.set: %#v, want a todo.conflict error with data.state and the daemon's message", err)
	}
	_, err = call("agentd.callTool", map[string]any{"name": "NoSuchTool"})
	if protocol.ErrorCode(err) != protocol.CodeArgsInvalid {
		t.Fatalf("unknown tool: %v, want args.invalid", err)
	}
}

// TestCallDaemonTooLarge: a command whose arguments exceed the message
// limit is refused by the client with an error naming the limit (the
// daemon would answer it with id null, and the command would wait
// forever); the daemon goes on serving.
func TestCallDaemonTooLarge(t *testing.T) {
	dir := shortDir(t)
	ws := filepath.Join(dir, "ws")
	mkdirs(t, ws)
	path := filepath.Join(dir, "d.sock")
	startDaemon(t, path, 0)
	call := func(args any) (json.RawMessage, error) {
		conn, err := client.Dial(path)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return client.Call(ctx, conn, ws, "s1", "agentd.todo.set", args, client.CallWaits{})
	}
	title := strings.Repeat("t", int(jsonrpc.DefaultMaxMessageBytes)+1)
	_, err := call(map[string]any{"items": []any{map[string]any{"title": title, "status": "pending"}}})
	limit := fmt.Sprintf("exceeds the limit of %d bytes", jsonrpc.DefaultMaxMessageBytes)
	if !errors.Is(err, jsonrpc.ErrMessageTooLarge) || !strings.Contains(err.Error(), limit) || !strings.Contains(err.Error(), "agentd.todo.set was not sent") {
		t.Fatalf("got %v, want ErrMessageTooLarge saying the command was not sent and %q", err, limit)
	}
	if _, err := call(map[string]any{"items": []any{map[string]any{"title": "a", "status": "pending"}}}); err != nil {
		t.Fatalf("a small command after it: %v", err)
	}
}

// TestCallDaemonNoSession: a socket that closes at once means ErrNoDaemon
// (the command was not sent), so a shell command may go on without it.
func TestCallDaemonNoSession(t *testing.T) {
	path := closingListener(t)
	conn, err := client.Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Call(context.Background(), conn, "/tmp", "", "agentd.state", nil, client.CallWaits{}); !errors.Is(err, client.ErrNoDaemon) {
		t.Fatalf("got %v, want ErrNoDaemon", err)
	}
}

// TestCallDaemonCommandWait: a daemon that answers initialize but not the
// command makes Call give up after waits.Command with a
// *SilentError saying the command may have run; one that does not
// answer initialize, after waits.Begin.
func TestCallDaemonCommandWait(t *testing.T) {
	for _, answerInit := range []bool{true, false} {
		conn, peer := net.Pipe()
		go func() { // a daemon that answers initialize (or not) and nothing else
			defer peer.Close()
			br := bufio.NewReader(peer)
			for {
				var n int
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					if line == "\r\n" {
						break
					}
					fmt.Sscanf(line, "Content-Length: %d", &n)
				}
				body := make([]byte, n)
				if _, err := io.ReadFull(br, body); err != nil {
					return
				}
				var m struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				json.Unmarshal(body, &m)
				if m.Method == "initialize" && answerInit {
					resp := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"capabilities":{}}}`, m.ID)
					fmt.Fprintf(peer, "Content-Length: %d\r\n\r\n%s", len(resp), resp)
				}
			}
		}()
		waits := client.CallWaits{Begin: 300 * time.Millisecond, Command: 200 * time.Millisecond}
		began := time.Now()
		_, err := client.Call(context.Background(), conn, "/tmp", "", "agentd.state", map[string]any{}, waits)
		var silent *client.SilentError
		want := client.SilentError{What: "agentd.state", Wait: waits.Command, MayHaveRun: true}
		if !answerInit {
			want = client.SilentError{What: "initialize", Wait: waits.Begin}
		}
		if !errors.As(err, &silent) || *silent != want || errors.Is(err, client.ErrNoDaemon) {
			t.Fatalf("answerInit=%v: %v, want %+v", answerInit, err, want)
		}
		if took := time.Since(began); took > 5*time.Second {
			t.Fatalf("answerInit=%v: Call took %v", answerInit, took)
		}
	}
}
