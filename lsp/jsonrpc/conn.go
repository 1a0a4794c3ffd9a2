package jsonrpc

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// drainTimeout bounds how long Run, when the connection ends, waits for
// its handlers to return and for what is left to be written.
var drainTimeout = 2 * time.Second

// Writing what is left when the connection ends (docs/protocol.md §2.5):
// it goes on while the peer takes it, past drainTimeout, a chunk of at most
// writeChunk bytes at a time; a peer that takes no chunk, and no byte the
// kernel holds for it (Conn.unread), for endStall is not reading, and what
// is left is dropped (the write blocked on it is released). endStall stays
// below drainTimeout, so that a peer that stopped reading before the end is
// found so before the handlers' bound passes. writeChunk is small enough
// that a peer reading a few KiB at a time, with pauses, completes a chunk
// well within endStall where the kernel does not say (Conn.unread).
const (
	endStall   = 1500 * time.Millisecond
	writeChunk = 16 << 10 // bytes: four pages of a pipe's buffer
	// stallLooks is how many looks in a row, a tick of endStall/16
	// apart, must each find the peer took nothing before it is taken for
	// not reading: endStall of wall time alone would also pass while this
	// process was not run at all (a loaded machine), and take a peer that
	// was reading, but not run either, for one that is not.
	stallLooks = 16
)

// errRPCCloseCalled is the close reason recorded by Close; Run then returns nil.
var errRPCCloseCalled = errors.New("jsonrpc: Close called")

// errPeerClosed is the close reason recorded when a write fails because the
// peer closed its end (EPIPE, ECONNRESET), as a client that runs once per
// event does after its answer (docs/hooks.md): the peer gone, not a fault,
// so Run returns nil whether its reader or a writer saw it first.
var errPeerClosed = errors.New("jsonrpc: the peer closed the connection")

// Conn is one JSON-RPC connection. Create it with NewConn and start it with Run.
//
// Its state is grouped by what guards it: the outgoing queue (out, under
// its own mutex), the idle workers (workers, under theirs), the ids of the
// calls in flight both ways (calls, under theirs) and the closing of the
// transport (end, under its own); the rest is set once, atomic, or a
// channel.
type Conn struct {
	rwc   io.ReadWriteCloser
	r     *Reader
	route Router
	max   int64
	log   *slog.Logger

	out     outQueue
	workers workerPool
	calls   callTable
	end     closer

	badCancels atomic.Int64 // $/cancelRequest messages without a usable id: the first is a warning, the rest debug

	stopping   chan struct{} // closed: no more outgoing messages are accepted
	stopOnce   sync.Once
	writerDone chan struct{}
	writeErr   error         // first write failure; touched only by the goroutine that is writing
	wrote      atomic.Int64  // when the last chunk began to be written (UnixNano): the peer took all before it (the end's stall check)
	readDone   chan struct{} // closed when the read loop has ended; waiting Calls fail
	done       chan struct{} // closed when Run has returned
	started    atomic.Bool
	nextID     atomic.Int64
	handlers   sync.WaitGroup
	unanswered sync.WaitGroup // of handlers, those whose reply is neither queued nor being written (Settle)
}

// closer closes the transport once and records why.
type closer struct {
	once sync.Once
	err  error // rwc.Close's, set in once

	mu     sync.Mutex
	closed bool  // transport closed by us; guarded by mu
	reason error // why: errRPCCloseCalled, ctx.Err(), a write error, or nil (Run ending); guarded by mu
}

// NewConn returns a connection over rwc that routes incoming messages with route.
func NewConn(rwc io.ReadWriteCloser, route Router, opts Options) *Conn {
	c := &Conn{
		rwc:        rwc,
		r:          NewReader(rwc, ReaderOptions{Logger: opts.Logger}),
		route:      route,
		max:        opts.MaxMessageBytes,
		log:        opts.Logger,
		stopping:   make(chan struct{}),
		writerDone: make(chan struct{}),
		readDone:   make(chan struct{}),
		done:       make(chan struct{}),
		out:        outQueue{ready: make(chan struct{}, 1)},
		calls:      callTable{inflight: make(map[string]context.CancelFunc), pending: make(map[string]chan rpcResult)},
	}
	if c.max <= 0 {
		c.max = DefaultMaxMessageBytes
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c
}

// Run reads and dispatches messages until end of input, a transport error, ctx
// done, or Close. It must be called once. Before returning it cancels the ctx of
// every running handler and waits up to 2s for them to answer, then writes what
// is left while the peer takes it (past the 2s, as long as it does, unless ctx
// ended the connection with a cause other than ErrPeerEnded), and closes the
// transport. A peer that takes nothing (no 16 KiB chunk, no byte of what the
// transport's pipe or socket holds: Conn.unread) for 1.5 s while something
// waits to be written is not reading (docs/protocol.md §2.5): Run waits no
// longer, neither for the handlers (one may wait behind the blocked
// write) nor for the output, which is dropped; the blocked write is released
// when the transport has a SetWriteDeadline method (an os.File of a pipe, a
// net.Conn), as its Close may close only the input. Inline handlers must not
// block, since they run on the read goroutine.
//
// Run returns nil on end of input at a message boundary and after Close; ctx.Err()
// when ctx ended it; an error wrapping io.ErrUnexpectedEOF when input ends inside
// a message (headers, body, or bytes being skipped after a framing error); an
// error naming the queued bytes when the outgoing queue overflowed (the peer
// stopped reading); otherwise the read or write error that ended the connection.
func (c *Conn) Run(ctx context.Context) error {
	if !c.started.CompareAndSwap(false, true) {
		return errors.New("jsonrpc: Conn.Run called more than once")
	}
	defer close(c.done)
	c.wrote.Store(time.Now().UnixNano())
	go c.writeLoop()
	stopAfter := context.AfterFunc(ctx, func() { c.closeTransport(ctx.Err()) })
	base, cancel := context.WithCancel(ctx)

	err := c.readLoop(base)
	stopAfter()
	c.end.mu.Lock()
	closed, reason := c.end.closed, c.end.reason
	c.end.mu.Unlock()
	close(c.readDone)
	cancel()

	wait, stopWait := context.WithTimeout(context.Background(), drainTimeout)
	defer stopWait()
	// Past the 2 s only when the peer ended the connection: ctx (a signal,
	// the daemon's shutdown) keeps its bound, unless its cause is
	// ErrPeerEnded.
	peerEnded := ctx.Err() == nil || errors.Is(context.Cause(ctx), ErrPeerEnded)
	// The handlers answer, unless the output stalls: a handler given to a
	// worker that is still writing its last reply (a worker is idle again
	// before it writes) runs only once that write ends, so while the peer
	// takes that write the wait goes on past the 2 s too.
	answered := make(chan struct{})
	go func() { c.unanswered.Wait(); close(answered) }()
	end := c.drain(wait.Done(), answered, peerEnded)
	if end == drainTimedOut {
		c.log.Warn("jsonrpc: handlers still running after the connection ended; not waiting for them")
	}
	c.stopOutput()
	written := make(chan struct{}) // the writer has ended, and so have the workers' own writes
	go func() { <-c.writerDone; c.handlers.Wait(); close(written) }()
	if end == drained {
		end = c.drain(wait.Done(), written, peerEnded)
	}
	if end != drained {
		c.closeTransport(nil)
		if c.releaseWrites() {
			select {
			case <-written:
			case <-time.After(endStall):
			}
		}
	}
	c.closeTransport(nil)

	switch {
	case closed && (reason == errRPCCloseCalled || reason == errPeerClosed):
		return nil
	case closed && reason != nil:
		return reason
	case err == io.EOF:
		return nil
	}
	return err
}

// ErrPeerEnded, as the cause of the cancel of Run's ctx
// (context.WithCancelCause), says that the peer ended the connection (an LSP
// exit notification): Run then ends it as it does at the end of input,
// writing what is left while the peer takes it, past the 2 s bound
// (docs/protocol.md §2.5).
var ErrPeerEnded = errors.New("jsonrpc: the peer ended the connection")

// How a wait of drain ended.
const (
	drained       = iota // what it waited for is done
	drainStalled         // the peer takes nothing of what waits to be written
	drainTimedOut        // the bound of the wait passed
)

// drain waits until done is closed (drained), wait is done (drainTimedOut),
// or the peer has taken nothing for endStall, and at stallLooks looks in a
// row, while something waits to be written (drainStalled, logged): a handler that is merely slow, with
// nothing to write, is waited for until wait. With writes, wait ends it
// only once nothing is being written: output the peer takes goes on.
func (c *Conn) drain(wait, done <-chan struct{}, writes bool) int {
	tick := time.NewTicker(endStall / stallLooks)
	defer tick.Stop()
	timedOut := false
	var waiting int64 // since when (UnixNano) something waits to be written, or the peer last took some of it, as this wait saw it; 0 while nothing waits
	lastUnread := -1
	lastWrote := c.wrote.Load()
	quiet := 0 // looks in a row that found something waiting and the peer taking nothing
	for {
		select {
		case <-done:
			return drained
		case <-wait:
			if !writes {
				return drainTimedOut
			}
			timedOut, wait = true, nil
		case <-tick.C:
		}
		c.out.mu.Lock()
		msgs, size, pending := c.out.msgs, c.out.bytes, c.out.writing || c.out.msgs > 0
		c.out.mu.Unlock()
		now := time.Now().UnixNano()
		unread, known := c.unread()
		took := false
		switch {
		case !pending:
			waiting = 0
		// Any change of what the pipe or socket holds, while a write
		// waits, is the peer reading: more in it is the blocked write
		// going on into the room the peer made, which a wait that saw
		// neither (a busy machine delaying this goroutine) would miss.
		case waiting == 0, known && lastUnread >= 0 && unread != lastUnread:
			waiting, took = now, true
		}
		lastUnread = -1
		if known {
			lastUnread = unread
		}
		if w := c.wrote.Load(); w != lastWrote {
			lastWrote, took = w, true
		}
		quiet++
		if !pending || took {
			quiet = 0
		}
		switch {
		case pending && quiet >= stallLooks && time.Duration(now-max(waiting, lastWrote)) >= endStall:
			c.log.Info("jsonrpc: the connection ended and the peer does not read what is left; dropping it", "messages", msgs, "bytes", size)
			return drainStalled
		case timedOut && !pending:
			return drainTimedOut
		}
	}
}

// releaseWrites makes a write blocked on the transport return now, when
// the transport has write deadlines; false when it has none (a blocking
// stdout), whose write stays blocked until the process exits.
func (c *Conn) releaseWrites() bool {
	d, ok := c.rwc.(interface{ SetWriteDeadline(time.Time) error })
	return ok && d.SetWriteDeadline(time.Unix(1, 0)) == nil
}

// Close closes the transport; Run then returns nil. Later Notify and Call calls
// fail with ErrConnClosed.
func (c *Conn) Close() error {
	err := c.closeTransport(errRPCCloseCalled)
	c.stopOutput()
	return err
}

// Settle waits until every handler started so far has returned and its
// reply is queued or being written by its worker, or ctx ends (then it
// returns ctx.Err()). It never waits for the peer to read: a peer that
// pipes more requests before it reads would wait for this Conn to read
// them, and this Conn for the peer. Called from an
// inline Handler, during which no message is read and so no handler starts,
// it puts that handler's reply after the replies of every request received
// before it (shutdown uses it, docs/protocol.md §2.2). Called from a Handler in its own
// goroutine it would wait for that Handler too, until ctx ends.
func (c *Conn) Settle(ctx context.Context) error {
	settled := make(chan struct{})
	go func() { c.unanswered.Wait(); close(settled) }()
	select {
	case <-settled:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Done returns a channel that is closed when Run has returned.
func (c *Conn) Done() <-chan struct{} { return c.done }

// closeTransport closes rwc once, recording why; it returns rwc.Close's error.
func (c *Conn) closeTransport(reason error) error {
	c.end.once.Do(func() {
		c.end.mu.Lock()
		c.end.closed, c.end.reason = true, reason
		c.end.mu.Unlock()
		c.end.err = c.rwc.Close()
	})
	return c.end.err
}

func (c *Conn) stopOutput() { c.stopOnce.Do(func() { close(c.stopping) }) }
