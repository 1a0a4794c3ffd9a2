package daemon

// This file is the stdio forwarder: `agentd --remote=...` relays an editor's
// stdio to the daemon's socket (Forward), which the caller dialled with
// package client (starting the daemon when none answers). None of it opens
// a state file.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentd/agentd/lsp"
	"github.com/agentd/agentd/lsp/daemon/client"
	"github.com/agentd/agentd/lsp/jsonrpc"
)

// forwardInitWait is how long Forward waits, after the client's
// initialize, for the daemon's first bytes.
const forwardInitWait = 10 * time.Second

// forwardDrain is how long Forward waits, after the client's input ended,
// for the daemon to close its side: counted from the last write to the
// client, so that what the daemon writes last reaches a client that takes
// it slowly (docs/protocol.md §2.5).
const forwardDrain = 3 * time.Second

// Redial connects Forward to the daemon again, the way its first
// connection was made (DialCurrent for the auto socket, which starts a
// daemon when none answers; client.Dial for a socket named by the user).
type Redial func(ctx context.Context) (*net.UnixConn, error)

// maxRedials bounds how many times Forward connects again to a daemon that
// ended the connection before it answered anything.
const maxRedials = 3

// maxReplay is the most of the client's bytes Forward keeps to send again
// on a new connection; after more, it does not connect again.
const maxReplay = maxSniffBytes + 4<<10

// Forward relays one LSP client (in and out, an editor's stdio) to a daemon
// connection, byte for byte both ways, until one side ends, and returns
// the exit code for the forwarder:
//   - in ends: the write side of conn is closed and Forward returns 0 once
//     the daemon has closed its side (or after 3 s);
//   - the daemon closes conn after the client's `exit`: 0 when the client
//     sent `shutdown` before, else 1, like a stdio server (docs/protocol.md §2);
//   - the daemon ends conn (closes or resets it) before it has sent a byte,
//     while the client has sent nothing but `initialize`: a daemon that was
//     dying, stopping on its idle timeout or handing over when it was
//     dialled, which has done nothing for the client. Forward connects
//     again with redial (when not nil; at most 3 times, 0.1 s apart and
//     more) and sends the new connection every byte the client sent, so
//     that the editor's session goes on with the next daemon; not when the
//     client's input ended before a whole initialize (the daemon had
//     nothing to answer): that is the first case;
//   - the daemon closes conn otherwise (it died or stopped), or connecting
//     again failed: 1 and an error that says so;
//   - out fails (the editor is gone), ctx ends (a signal), or the process
//     named by processId in the client's `initialize` dies: the write side
//     of conn is closed and Forward returns 1 once the daemon has closed
//     its side (or after 3 s), so that the daemon has settled the
//     connection (paused a goal-driven turn left open) by then;
//   - the daemon sends nothing within 10 s of the client's `initialize`
//     (it is stopped or stuck): 1 and a *client.SilentError.
//
// Forward closes conn (and any connection redial made), and in when it is
// an io.Closer.
func Forward(ctx context.Context, in io.Reader, out io.Writer, conn *net.UnixConn, redial Redial, log *slog.Logger) (int, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f := &forwarder{
		log:          log,
		l:            &link{conn: conn, replayable: redial != nil, redial: redial, log: log},
		parentGone:   make(chan int, 1),
		initSent:     make(chan struct{}),
		spoke:        make(chan struct{}),
		silent:       make(chan struct{}),
		upDone:       make(chan pumpEnd, 1),
		downDone:     make(chan pumpEnd, 1),
		daemonClosed: make(chan struct{}),
	}
	closeAll := sync.OnceFunc(func() {
		f.l.close()
		if c, ok := in.(io.Closer); ok {
			c.Close()
		}
	})
	defer closeAll()
	go f.watchSilence(ctx)
	go f.pumpUp(ctx, in)
	go f.pumpDown(ctx, conn, out)
	return f.end(ctx)
}

// forwarder is one run of Forward: the link to the daemon, what it learns
// from the client's messages, and the channels by which its goroutines
// (watchSilence, pumpUp, pumpDown) tell end how the relay ends.
type forwarder struct {
	log *slog.Logger
	l   *link
	st  clientState

	parentGone   chan int      // the process named by the client's initialize died
	initSent     chan struct{} // the client's initialize went to the daemon
	spoke        chan struct{} // the daemon sent its first bytes
	silent       chan struct{} // it sent none within forwardInitWait of initSent
	upDone       chan pumpEnd  // pumpUp ended: the client's input ended, or the daemon's side failed
	downDone     chan pumpEnd  // pumpDown ended: the daemon's side ended, or the client's output failed
	daemonClosed chan struct{} // the daemon's side of the connection has ended
	wrote        atomic.Int64  // when (UnixNano) the last write to the client's output ended
}

// pumpEnd is how one direction of the relay ended: its read or its write
// failed (a nil readErr with no writeErr is a clean end of input).
type pumpEnd struct{ readErr, writeErr error }

// watchSilence closes f.silent when the daemon sends nothing within
// forwardInitWait of the client's initialize.
func (f *forwarder) watchSilence(ctx context.Context) {
	select {
	case <-f.initSent:
	case <-f.spoke:
		return
	case <-ctx.Done():
		return
	}
	t := time.NewTimer(forwardInitWait)
	defer t.Stop()
	select {
	case <-f.spoke:
	case <-ctx.Done():
	case <-t.C:
		close(f.silent)
	}
}

// pumpUp relays the client's input to the daemon, noting on the way the
// client's initialize (which may still be replayed), shutdown and exit,
// and watching the process its initialize names.
func (f *forwarder) pumpUp(ctx context.Context, in io.Reader) {
	var watchOnce, initOnce sync.Once
	readErr, writeErr := relayClient(f.l, in, func(method string, params json.RawMessage) {
		if method == "initialize" {
			initOnce.Do(func() { f.l.sentInit(); close(f.initSent) })
		} else {
			f.l.noReplay()
		}
		pid := f.st.saw(method, params)
		if pid > 0 {
			watchOnce.Do(func() {
				lsp.WatchProcess(ctx, f.log, pid, func() { f.parentGone <- pid })
			})
		}
	})
	f.upDone <- pumpEnd{readErr, writeErr}
}

// pumpDown relays the daemon's output to the client until the daemon's
// side ends; a connection that ends before the daemon sent a byte is
// replaced when it may be (link.reconnect). After the client's output
// failed, the rest is read and dropped until the daemon closes its side.
func (f *forwarder) pumpDown(ctx context.Context, conn *net.UnixConn, out io.Writer) {
	defer close(f.daemonClosed)
	buf := make([]byte, 32<<10)
	var outErr error
	var spokeOnce sync.Once
	for {
		n, err := conn.Read(buf)
		if n > 0 {
			spokeOnce.Do(func() {
				f.l.noReplay()
				close(f.spoke)
			})
		}
		if n > 0 && outErr == nil {
			if _, outErr = out.Write(buf[:n]); outErr != nil {
				f.downDone <- pumpEnd{writeErr: outErr}
			}
			f.wrote.Store(time.Now().UnixNano())
		}
		if err != nil {
			if n == 0 {
				next, rerr := f.l.reconnect(ctx, err)
				if next != nil {
					conn = next
					continue
				}
				if rerr != nil {
					err = rerr
				}
			}
			if outErr == nil {
				f.downDone <- pumpEnd{readErr: err}
			}
			return
		}
	}
}

// settle closes the client's side of the connection and waits for the
// daemon to close its side, at most forwardDrain after it began or after
// the last write to the client, whichever is later: by then the daemon has
// finished the connection (released the client's folders, paused a
// goal-driven turn left open), as a stdio server has when it exits, and
// what it wrote last has reached a client that reads.
func (f *forwarder) settle(after string) {
	f.l.closeWrite()
	begun := time.Now().UnixNano()
	tick := time.NewTicker(forwardDrain / 30)
	defer tick.Stop()
	for {
		select {
		case <-f.daemonClosed:
			return
		case <-tick.C:
		}
		if time.Duration(time.Now().UnixNano()-max(begun, f.wrote.Load())) >= forwardDrain {
			f.log.Warn("the daemon did not close the connection after "+after, "waited", forwardDrain)
			return
		}
	}
}

// end waits for the first way the relay ends and returns Forward's exit
// code and error for it (see Forward).
func (f *forwarder) end(ctx context.Context) (int, error) {
	select {
	case u := <-f.upDone:
		if u.writeErr != nil {
			if code, exited := f.st.exitCode(); exited {
				return code, nil
			}
			return 1, daemonLost(u.writeErr)
		}
		if u.readErr != nil {
			f.log.Warn("reading the client's input failed", "err", u.readErr)
		}
		f.settle("the client's input ended")
		if code, exited := f.st.exitCode(); exited {
			return code, nil
		}
		return 0, nil
	case d := <-f.downDone:
		if d.writeErr != nil {
			f.log.Info("the client's output is closed; ending", "err", d.writeErr)
			f.settle("the client's output closed")
			return 1, nil
		}
		if code, exited := f.st.exitCode(); exited {
			return code, nil
		}
		return 1, daemonLost(d.readErr)
	case <-f.parentGone:
		f.settle("the client's process ended")
		return 1, nil
	case <-f.silent:
		return 1, &client.SilentError{What: "initialize", Wait: forwardInitWait}
	case <-ctx.Done():
		f.settle("agentd was told to stop")
		return 1, nil
	}
}

// daemonLost is the error for a connection to the daemon that ended with
// err: a plain end says the daemon closed it.
func daemonLost(err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		return errors.New("the daemon closed the connection")
	}
	return err
}

// link is Forward's way to the daemon: the client's bytes are written to
// it, and it holds the connection they go to. While that connection may
// still be replaced (replayable: the daemon has sent nothing, and the
// client nothing but initialize, at most maxReplay bytes) it keeps every
// byte written (journal), for reconnect to send again.
type link struct {
	redial Redial
	log    *slog.Logger

	mu         sync.Mutex
	conn       *net.UnixConn // nil while reconnect dials
	journal    []byte        // replayable: all the client sent; while dialling also what is not sent yet
	replayable bool
	writeShut  bool // closeWrite was called: a new connection is closed for writing too
	init       bool // a whole initialize went to the daemon
	closed     bool // close was called: no new connection
	redials    int
}

// Write sends p to the daemon. While the connection may be replaced, a
// failed write is no error: the reader sees that connection end too, and
// reconnect sends p again.
func (l *link) Write(p []byte) (int, error) {
	l.mu.Lock()
	c := l.conn
	if l.closed {
		l.mu.Unlock()
		return 0, net.ErrClosed
	}
	if c == nil { // reconnect sends it once it has a connection
		l.journal = append(l.journal, p...)
		l.mu.Unlock()
		return len(p), nil
	}
	if l.replayable {
		if len(l.journal)+len(p) > maxReplay {
			l.replayable, l.journal = false, nil
		} else {
			l.journal = append(l.journal, p...)
		}
	}
	replayable := l.replayable
	l.mu.Unlock()
	// Not under mu: a daemon that does not read must not keep the reader,
	// which takes mu, from draining what it writes.
	n, err := c.Write(p)
	if err != nil && replayable {
		return len(p), nil
	}
	return n, err
}

// noReplay marks the connection as final: the daemon has spoken, or the
// client is sending more than initialize, which a replay could run twice.
func (l *link) noReplay() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.replayable = false
	if l.conn != nil {
		l.journal = nil
	}
}

// reconnect replaces the connection that ended with cause (before the
// daemon sent anything): when it is replayable and redials are left, it
// dials with redial and sends the journal. It returns the new connection,
// or nil and nil when it may not replace it, or nil and an error naming
// cause and why connecting again failed.
func (l *link) reconnect(ctx context.Context, cause error) (*net.UnixConn, error) {
	l.mu.Lock()
	// A client whose input ended before a whole initialize gave the daemon
	// nothing to answer: its end is why the daemon ended, and another
	// daemon would end the same way.
	if !l.replayable || l.closed || l.redials >= maxRedials || l.writeShut && !l.init {
		l.mu.Unlock()
		return nil, nil
	}
	l.redials++
	attempt, old := l.redials, l.conn
	l.conn = nil
	l.mu.Unlock()
	old.Close()
	l.log.Info("the daemon ended the connection before it answered; connecting again", "err", cause, "attempt", attempt)
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(time.Duration(attempt-1) * 100 * time.Millisecond):
	}
	c, err := l.redial(ctx)
	if err != nil {
		return nil, fmt.Errorf("the daemon ended the connection before it answered (%v), and connecting again failed: %w", cause, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		c.Close()
		return nil, net.ErrClosed
	}
	// A failed write is seen as an end of c by the next read.
	if _, err := c.Write(l.journal); err == nil && l.writeShut {
		c.CloseWrite()
	}
	if !l.replayable {
		l.journal = nil
	}
	l.conn = c
	return c, nil
}

// sentInit notes that a whole initialize went to the daemon.
func (l *link) sentInit() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.init = true
}

// closeWrite closes the client's side of the connection.
func (l *link) closeWrite() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writeShut = true
	if l.conn != nil {
		l.conn.CloseWrite()
	}
}

// close closes the connection, and keeps reconnect from making another.
func (l *link) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.conn != nil {
		l.conn.Close()
	}
}

// clientState is what Forward learns from the client's messages.
type clientState struct {
	mu       sync.Mutex
	shutdown bool // a shutdown request went to the daemon
	exit     bool // an exit notification went to the daemon
}

// saw records a client message before it is sent on, and returns the
// processId of an initialize request (0 if none).
func (s *clientState) saw(method string, params json.RawMessage) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch method {
	case "shutdown":
		s.shutdown = true
	case "exit":
		s.exit = true
	case "initialize":
		var p struct {
			ProcessID *int64 `json:"processId"`
		}
		if json.Unmarshal(params, &p) == nil && p.ProcessID != nil && *p.ProcessID > 0 {
			return int(*p.ProcessID)
		}
	}
	return 0
}

// exitCode is the code after the client's exit, like a stdio server's.
func (s *clientState) exitCode() (code int, exited bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.exit {
		return 0, false
	}
	if s.shutdown {
		return 0, true
	}
	return 1, true
}

// maxSniffBytes is the largest message body relayClient reads whole to see
// its method; larger bodies pass through unread.
const maxSniffBytes = 1 << 20

// relayClient copies src to dst unchanged while following the
// Content-Length framing with the daemon's own reader (jsonrpc.Reader), so
// that it sees the same messages as the daemon after any input, and hands
// each whole message body (up to maxSniffBytes) to seen before it is
// written. Each message goes to dst in one write, its header block with
// its body (a body over maxSniffBytes in pieces of at most 64 KiB), so the
// daemon is woken once per message (docs/performance.md, "What the ratios
// mean, and the verdict").
// Nothing is held back while waiting for input: what has arrived is
// written before src is read again, even in the middle of a line, so input
// that breaks the framing (a length counted in characters, garbage, an
// endless header line) never keeps the next message from the daemon.
// Broken framing only blinds it: every byte still goes through, and the
// daemon answers the error. It returns at the end of src: readErr nil at a
// clean end, writeErr when dst failed.
func relayClient(dst io.Writer, src io.Reader, seen func(method string, params json.RawMessage)) (readErr, writeErr error) {
	w := &heldWriter{w: dst}
	r := jsonrpc.NewReader(flushingReader{r: src, w: w}, jsonrpc.ReaderOptions{Echo: w})
	end := func(err error) (readErr, writeErr error) {
		switch {
		case w.err != nil:
			return nil, w.err
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return nil, nil
		}
		return err, nil
	}
	for {
		n, err := r.ReadHeader()
		var fe *jsonrpc.FramingError
		if errors.As(err, &fe) {
			continue // the reader skips to the next header, as the daemon's does
		}
		if err != nil {
			return end(err)
		}
		if n > maxSniffBytes {
			if err := r.CopyBody(w, n); err != nil {
				return end(err)
			}
			if w.flush() != nil {
				return nil, w.err
			}
			continue
		}
		body, err := r.ReadBody(n)
		if err == nil {
			var m struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if json.Unmarshal(body, &m) == nil && m.Method != "" {
				seen(m.Method, m.Params)
			}
		}
		w.Write(body)
		if w.flush() != nil {
			return nil, w.err
		}
		if err != nil {
			return end(err)
		}
	}
}

// heldWriter holds what is written to it until flush, which writes it to
// w in one Write, and keeps the first error of w.
type heldWriter struct {
	w    io.Writer
	held []byte
	err  error
}

// Write holds p; it never fails (flush reports w's error).
func (h *heldWriter) Write(p []byte) (int, error) {
	h.held = append(h.held, p...)
	return len(p), nil
}

// flush writes what is held, if anything, and returns the first error of
// w, now or before (nothing is written after one).
func (h *heldWriter) flush() error {
	if len(h.held) == 0 || h.err != nil {
		return h.err
	}
	_, h.err = h.w.Write(h.held)
	if cap(h.held) > 64<<10 { // keep a buffer for headers and small bodies only
		h.held = nil
	} else {
		h.held = h.held[:0]
	}
	return h.err
}

// flushingReader reads r after writing what w holds: nothing read is held
// back while more input is awaited. A failed flush is its read error.
type flushingReader struct {
	r io.Reader
	w *heldWriter
}

func (f flushingReader) Read(p []byte) (int, error) {
	if err := f.w.flush(); err != nil {
		return 0, err
	}
	return f.r.Read(p)
}
