package etcdtest

import (
	"net"
	"sync"
	"time"
)

// Direction is one way through a Proxy.
type Direction int

const (
	// ToServer is from the client that dialed the proxy to the address
	// behind it (requests).
	ToServer Direction = iota
	// ToClient is back (answers, watch events, keepalive pings' acks).
	ToClient
)

func (d Direction) String() string {
	if d == ToServer {
		return "to server"
	}
	return "to client"
}

// dialTimeout bounds the proxy's own dial of the address behind it.
const dialTimeout = 5 * time.Second

// chunkSize is the most one read of a proxied connection takes; queueLen
// how many read chunks wait for their time in one direction before the
// proxy stops reading (then the kernel's buffers fill, as on a slow link).
const (
	chunkSize = 32 << 10
	queueLen  = 64
)

// Proxy is a TCP proxy in front of one address that makes the faults of a
// network the way they happen, without netem or iptables: a one-way delay
// per direction, a freeze (the connections stay open, no byte goes
// through: a hung machine), one way cut (the other way still flows), every
// connection dropped at once, and the return to normal. Bytes held by a
// freeze or a cut are delivered in order once Restore lifts it, as TCP
// retransmits them once a link is back; nothing is ever dropped from the
// middle of a stream. A fault applies to the connections open now and to
// the ones accepted later. Every Cluster member's client URL is one
// (Member.Proxy); NewProxy puts one in front of any address.
type Proxy struct {
	addr string // where it listens
	to   string // where it dials

	mu       sync.Mutex
	l        net.Listener // nil while closed
	delay    [2]time.Duration
	held     [2]bool
	changed  chan struct{} // closed, and replaced, when held changes
	conns    map[*proxyConn]bool
	accepted int
	bytes    [2]int64 // forwarded, by direction
	received [2]int64 // read, forwarded or not, by direction
	wg       sync.WaitGroup
}

// proxyConn is one accepted connection and its own to the address behind.
type proxyConn struct {
	p       *Proxy
	in, out net.Conn
	done    chan struct{}
	once    sync.Once
}

// close closes both connections and forgets them (not under p.mu).
func (c *proxyConn) close() {
	c.once.Do(func() {
		close(c.done)
		c.in.Close()
		c.out.Close()
		c.p.mu.Lock()
		delete(c.p.conns, c)
		c.p.mu.Unlock()
	})
}

// chunk is bytes read from one side, to be written to the other at at.
type chunk struct {
	b  []byte
	at time.Time
}

func newProxy(addr, to string) *Proxy {
	return &Proxy{addr: addr, to: to, changed: make(chan struct{}), conns: map[*proxyConn]bool{}}
}

// NewProxy starts a proxy on a free port of 127.0.0.1 in front of to
// (host:port). It is closed at the end of the test.
func NewProxy(t T, to string) *Proxy {
	t.Helper()
	p := newProxy("127.0.0.1:0", to)
	if err := p.open(); err != nil {
		t.Fatalf("etcdtest: starting a proxy to %s: %v", to, err)
	}
	p.addr = p.l.Addr().String()
	t.Cleanup(p.Close)
	return p
}

// Addr is the host:port the proxy listens on.
func (p *Proxy) Addr() string { return p.addr }

// open starts listening on p.addr (again, after close).
func (p *Proxy) open() error {
	l, err := net.Listen("tcp", p.addr)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.l = l
	p.mu.Unlock()
	p.wg.Go(func() { p.accept(l) })
	return nil
}

// Close stops listening and drops every connection, held bytes and all,
// and returns once every goroutine of the proxy has ended. The faults set
// stay set (a member's Restart listens again with them).
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.l != nil {
		p.l.Close()
		p.l = nil
	}
	p.mu.Unlock()
	p.Drop()
	p.wg.Wait()
}

// Delay adds d to every byte going in direction dir, from now on (bytes
// read before keep the delay they were read with); 0 removes it.
func (p *Proxy) Delay(dir Direction, d time.Duration) {
	p.mu.Lock()
	p.delay[dir] = d
	p.mu.Unlock()
}

// Freeze holds every byte in both directions: connections stay open and
// new ones are accepted, but nothing reaches either side until Restore.
func (p *Proxy) Freeze() { p.setHeld(true, true) }

// Cut holds every byte going in direction dir until Restore; the other
// direction flows as before.
func (p *Proxy) Cut(dir Direction) {
	p.mu.Lock()
	other := p.held[1-dir]
	p.mu.Unlock()
	if dir == ToServer {
		p.setHeld(true, other)
	} else {
		p.setHeld(other, true)
	}
}

// Restore lifts every freeze, cut and delay: held bytes go on at once.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.delay = [2]time.Duration{}
	p.mu.Unlock()
	p.setHeld(false, false)
}

func (p *Proxy) setHeld(toServer, toClient bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.held = [2]bool{toServer, toClient}
	close(p.changed)
	p.changed = make(chan struct{})
}

// Drop closes every open connection at once, as a reset would; the proxy
// goes on accepting new ones. It returns how many it closed.
func (p *Proxy) Drop() int {
	p.mu.Lock()
	var cs []*proxyConn
	for c := range p.conns {
		cs = append(cs, c)
	}
	p.mu.Unlock()
	for _, c := range cs {
		if tc, ok := c.in.(*net.TCPConn); ok {
			tc.SetLinger(0) // a reset, not an orderly end
		}
		c.close()
	}
	return len(cs)
}

// Conns is the number of connections open through the proxy now.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Accepted is the number of connections the proxy accepted since it
// started (Close and a member's restart included).
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// Bytes is the number of bytes the proxy forwarded in direction dir since
// it started: what a client sends its server (ToServer) measures the
// requests it makes.
func (p *Proxy) Bytes(dir Direction) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bytes[dir]
}

// Received is the number of bytes the proxy read in direction dir since
// it started, forwarded or not: a request held by a freeze or a cut
// counts once it reached the proxy.
func (p *Proxy) Received(dir Direction) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.received[dir]
}

func (p *Proxy) accept(l net.Listener) {
	for {
		in, err := l.Accept()
		if err != nil {
			return
		}
		out, err := net.DialTimeout("tcp", p.to, dialTimeout)
		if err != nil {
			in.Close()
			continue
		}
		c := &proxyConn{p: p, in: in, out: out, done: make(chan struct{})}
		p.mu.Lock()
		if p.l != l { // closed meanwhile
			p.mu.Unlock()
			c.close()
			return
		}
		p.conns[c] = true
		p.accepted++
		p.mu.Unlock()
		p.wg.Go(func() { p.pipe(c, in, out, ToServer) })
		p.wg.Go(func() { p.pipe(c, out, in, ToClient) })
	}
}

// pipe reads src and queues what it read, stamped with the time it is
// due, for a writer to dst; the end of src ends the connection once the
// writer has written what was queued.
func (p *Proxy) pipe(c *proxyConn, src, dst net.Conn, dir Direction) {
	q := make(chan chunk, queueLen)
	p.wg.Go(func() { p.write(c, dst, dir, q) })
	defer close(q)
	for {
		buf := make([]byte, chunkSize)
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			at := time.Now().Add(p.delay[dir])
			p.received[dir] += int64(n)
			p.mu.Unlock()
			select {
			case q <- chunk{b: buf[:n], at: at}:
			case <-c.done:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *Proxy) write(c *proxyConn, dst net.Conn, dir Direction, q <-chan chunk) {
	defer c.close()
	for ch := range q {
		if !p.due(c, dir, ch.at) {
			return
		}
		n, err := dst.Write(ch.b)
		p.mu.Lock()
		p.bytes[dir] += int64(n)
		p.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// due waits until at has passed and direction dir is not held; false when
// the connection closed first.
func (p *Proxy) due(c *proxyConn, dir Direction, at time.Time) bool {
	for {
		p.mu.Lock()
		held, changed := p.held[dir], p.changed
		p.mu.Unlock()
		var timer *time.Timer
		var fired <-chan time.Time
		if !held {
			wait := time.Until(at)
			if wait <= 0 {
				return true
			}
			timer = time.NewTimer(wait)
			fired = timer.C
		}
		select {
		case <-fired:
		case <-changed:
		case <-c.done:
			if timer != nil {
				timer.Stop()
			}
			return false
		}
		if timer != nil {
			timer.Stop()
		}
	}
}
