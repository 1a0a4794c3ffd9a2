package etcdtest

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// quiet is how long a test waits to see that nothing arrives; bound how
// long it waits for what must arrive.
const (
	quiet = 300 * time.Millisecond
	bound = 3 * time.Second
)

// pair is one connection through a proxy: the client's end and the
// server's end of it.
type pair struct{ cl, sv net.Conn }

// startBackend listens on a free port; each connection a test makes
// through the proxy comes out as the server end of a pair.
func startBackend(t *testing.T) (addr string, accepted <-chan net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan net.Conn, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			ch <- c
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		close(ch)
		for c := range ch {
			c.Close()
		}
	})
	return l.Addr().String(), ch
}

// dial connects through p and returns once p counts the connection.
func dial(t *testing.T, p *Proxy, accepted <-chan net.Conn) pair {
	t.Helper()
	before := p.Accepted()
	cl, err := net.DialTimeout("tcp", p.Addr(), bound)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	select {
	case sv := <-accepted:
		t.Cleanup(func() { sv.Close() })
		// The backend may accept before the proxy's own dial returns.
		for deadline := time.Now().Add(bound); p.Accepted() == before; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the proxy did not count the connection")
			}
		}
		return pair{cl, sv}
	case <-time.After(bound):
		t.Fatal("the proxy did not connect to the backend")
		return pair{}
	}
}

// send writes msg on from and returns when it was written.
func send(t *testing.T, from net.Conn, msg string) time.Time {
	t.Helper()
	at := time.Now()
	if _, err := from.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	return at
}

// recv reads len(msg) bytes from c within d, and the time the last came.
func recv(c net.Conn, msg string, d time.Duration) (time.Time, error) {
	c.SetReadDeadline(time.Now().Add(d))
	defer c.SetReadDeadline(time.Time{})
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(c, buf); err != nil {
		return time.Time{}, err
	}
	if !bytes.Equal(buf, []byte(msg)) {
		return time.Time{}, errors.New("got " + string(buf) + ", want " + msg)
	}
	return time.Now(), nil
}

func mustRecv(t *testing.T, c net.Conn, msg string) time.Time {
	t.Helper()
	at, err := recv(c, msg, bound)
	if err != nil {
		t.Fatalf("%q did not arrive within %s: %v", msg, bound, err)
	}
	return at
}

// mustNotRecv: nothing arrives within quiet, and the connection stays open.
func mustNotRecv(t *testing.T, c net.Conn, what string) {
	t.Helper()
	_, err := recv(c, "x", quiet)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("%s: want nothing within %s and the connection open, got %v", what, quiet, err)
	}
}

// TestProxyDelay: each direction's delay is added to what goes that way,
// measured from the write on one end to the read on the other.
func TestProxyDelay(t *testing.T) {
	addr, accepted := startBackend(t)
	p := NewProxy(t, addr)
	c := dial(t, p, accepted)
	p.Delay(ToServer, 150*time.Millisecond)
	p.Delay(ToClient, 60*time.Millisecond)
	for range 3 {
		sent := send(t, c.cl, "ping")
		up := mustRecv(t, c.sv, "ping").Sub(sent)
		sent = send(t, c.sv, "pong")
		down := mustRecv(t, c.cl, "pong").Sub(sent)
		t.Logf("to server %s, to client %s", up, down)
		if up < 150*time.Millisecond || up > 150*time.Millisecond+quiet {
			t.Errorf("to server took %s, want 150ms (+ at most %s)", up, quiet)
		}
		if down < 60*time.Millisecond || down > 60*time.Millisecond+quiet {
			t.Errorf("to client took %s, want 60ms (+ at most %s)", down, quiet)
		}
	}
	p.Restore()
	sent := send(t, c.cl, "fast")
	if d := mustRecv(t, c.sv, "fast").Sub(sent); d > 50*time.Millisecond {
		t.Errorf("after Restore a byte took %s, want no delay", d)
	}
}

// TestProxyFreezeHoldsRestoreResumes: frozen, the connection stays open
// and a new one is accepted, no byte goes either way; Restore delivers
// what was held, in order, and the connections go on.
func TestProxyFreezeHoldsRestoreResumes(t *testing.T) {
	addr, accepted := startBackend(t)
	p := NewProxy(t, addr)
	a := dial(t, p, accepted)
	p.Freeze()
	send(t, a.cl, "req1")
	send(t, a.cl, "req2")
	send(t, a.sv, "ans1")
	b := dial(t, p, accepted) // accepted while frozen, as by a hung machine's kernel
	send(t, b.cl, "new!")
	mustNotRecv(t, a.sv, "frozen, to server")
	mustNotRecv(t, a.cl, "frozen, to client")
	mustNotRecv(t, b.sv, "frozen, a new connection")
	if n := p.Conns(); n != 2 {
		t.Fatalf("Conns() = %d while frozen, want 2 (open, not dropped)", n)
	}
	p.Restore()
	mustRecv(t, a.sv, "req1req2")
	mustRecv(t, a.cl, "ans1")
	mustRecv(t, b.sv, "new!")
	send(t, a.cl, "more")
	mustRecv(t, a.sv, "more")
}

// TestProxyCutOneWay: a cut holds one direction while the other flows.
func TestProxyCutOneWay(t *testing.T) {
	addr, accepted := startBackend(t)
	p := NewProxy(t, addr)
	c := dial(t, p, accepted)
	for _, dir := range []Direction{ToServer, ToClient} {
		p.Cut(dir)
		from, to := c.cl, c.sv
		if dir == ToClient {
			from, to = c.sv, c.cl
		}
		send(t, from, "held")
		send(t, to, "flow")
		mustRecv(t, from, "flow")
		mustNotRecv(t, to, "cut "+dir.String())
		p.Restore()
		mustRecv(t, to, "held")
	}
}

// TestProxyDrop: Drop resets every open connection at once, and a new
// connection goes through.
func TestProxyDrop(t *testing.T) {
	addr, accepted := startBackend(t)
	p := NewProxy(t, addr)
	a, b := dial(t, p, accepted), dial(t, p, accepted)
	if n := p.Drop(); n != 2 {
		t.Fatalf("Drop() = %d, want 2", n)
	}
	for _, c := range []pair{a, b} {
		if _, err := recv(c.cl, "x", bound); err == nil || isTimeout(err) {
			t.Fatalf("client end after Drop: want the connection closed, got %v", err)
		}
		if _, err := recv(c.sv, "x", bound); err == nil || isTimeout(err) {
			t.Fatalf("server end after Drop: want the connection closed, got %v", err)
		}
	}
	c := dial(t, p, accepted)
	send(t, c.cl, "next")
	mustRecv(t, c.sv, "next")
	// Counted once written, which the backend may read first.
	for deadline := time.Now().Add(bound); p.Bytes(ToServer) < 4 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
	}
	if up, down := p.Bytes(ToServer), p.Bytes(ToClient); up != 4 || down != 0 {
		t.Fatalf("Bytes() = %d to server, %d to client, want 4 and 0", up, down)
	}
	if p.Accepted() != 3 || p.Conns() != 1 {
		t.Fatalf("Accepted() = %d, Conns() = %d, want 3 and 1", p.Accepted(), p.Conns())
	}
}

// TestProxyCloseEndsEverything: Close, with a freeze holding bytes and a
// delay pending, closes every connection, ends every goroutine (it
// returns) within the bound and frees its port.
func TestProxyCloseEndsEverything(t *testing.T) {
	addr, accepted := startBackend(t)
	p := NewProxy(t, addr)
	a, b := dial(t, p, accepted), dial(t, p, accepted)
	p.Delay(ToClient, time.Hour)
	send(t, b.sv, "late")
	p.Cut(ToServer)
	send(t, a.cl, "held")
	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(bound):
		t.Fatalf("Close did not return within %s", bound)
	}
	if _, err := recv(a.cl, "x", bound); err == nil || isTimeout(err) {
		t.Fatalf("client end after Close: want the connection closed, got %v", err)
	}
	if p.Conns() != 0 {
		t.Fatalf("Conns() = %d after Close", p.Conns())
	}
	l, err := net.Listen("tcp", p.Addr())
	if err != nil {
		t.Fatalf("the proxy's port is not free after Close: %v", err)
	}
	l.Close()
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestKillLeaderAwaitLeader: on three members, KillLeader stops the leader
// and AwaitLeader returns the one the other two elect.
func TestKillLeaderAwaitLeader(t *testing.T) {
	c := Start(t, 3)
	old := c.AwaitLeader()
	start := time.Now()
	if killed := c.KillLeader(); killed != old || killed.Running() {
		t.Fatalf("KillLeader stopped %s (running %v), want the leader %s stopped", killed.Name, killed.Running(), old.Name)
	}
	next := c.AwaitLeader()
	t.Logf("new leader %s after %s", next.Name, time.Since(start))
	if next == old || !next.Running() {
		t.Fatalf("AwaitLeader = %s after killing %s", next.Name, old.Name)
	}
	c.Restart()
	if c.AwaitLeader() == nil || !old.Running() {
		t.Fatal("the killed member did not come back with Restart")
	}
}
