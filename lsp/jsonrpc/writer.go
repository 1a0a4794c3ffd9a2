package jsonrpc

import (
	"errors"
	"fmt"
	"syscall"
	"time"
)

// writeLoop writes what is queued, one Write per message, in queue order,
// whenever no worker is writing its reply itself (writeReply). After a
// write fails the transport is closed and the rest dropped.
func (c *Conn) writeLoop() {
	defer close(c.writerDone)
	for {
		select {
		case <-c.out.ready:
			c.writeQueued()
		case <-c.stopping:
			c.writeQueued()
			return
		}
	}
}

// write writes one framed message; only the goroutine that set c.writing
// calls it.
func (c *Conn) write(f []byte) {
	if c.writeErr != nil {
		return
	}
	var err error
	for len(f) > 0 && err == nil {
		n := min(len(f), writeChunk)
		c.wrote.Store(time.Now().UnixNano())
		_, err = c.rwc.Write(f[:n])
		f = f[n:]
	}
	if err != nil {
		c.writeErr = err
		c.end.mu.Lock()
		closed := c.end.closed
		c.end.mu.Unlock()
		switch {
		case closed:
		case errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET):
			// The peer closed its end, as a client that runs once per
			// event does after its answer (docs/hooks.md): what was left
			// to write, such as a notification that followed the answer,
			// had no one to read it.
			c.log.Debug("jsonrpc: the peer closed the connection; dropping what is left to write", "err", err)
			c.closeTransport(errPeerClosed)
			return
		default:
			c.log.Error("jsonrpc: write failed; closing the connection", "err", err)
		}
		c.closeTransport(fmt.Errorf("jsonrpc: writing message: %w", err))
	}
}

// writeQueued writes what the queue holds until it is empty, unless
// another goroutine is writing (it empties the queue itself). A message
// counts against the queue's bounds until it has been written.
func (c *Conn) writeQueued() {
	c.out.mu.Lock()
	if c.out.writing {
		c.out.mu.Unlock()
		return
	}
	c.out.writing = true
	c.drainLocked()
}

// drainLocked writes the queue until it is empty, then gives up the
// writing; it is called with c.out.mu held and c.out.writing set, and
// returns with c.out.mu released.
func (c *Conn) drainLocked() {
	for len(c.out.frames) > 0 {
		batch := c.out.frames
		c.out.frames = nil
		c.out.mu.Unlock()
		for i, f := range batch {
			c.write(f)
			batch[i] = nil
			c.out.mu.Lock()
			c.out.msgs--
			c.out.bytes -= len(f)
			c.out.mu.Unlock()
		}
		c.out.mu.Lock()
	}
	c.out.writing = false
	c.out.mu.Unlock()
}

// writeReply is send for a worker: when nothing is queued or being
// written, the worker writes its reply itself, without waking the writer
// (docs/performance.md "Replies written by their worker"), and then what
// was queued meanwhile; otherwise the reply is queued. Only a worker may
// call it: it may wait for the peer to read, and the read goroutine must
// never wait for that. The worker's handler counts in c.handlers until
// this returns, so Run lets that write end (while the peer takes it,
// within its 2 s) before it closes the transport, and in c.unanswered
// until the reply is queued or its write has begun (Settle: the peer may
// be waiting for this Conn to read before it reads).
func (c *Conn) writeReply(body []byte) {
	select {
	case <-c.stopping:
		c.unanswered.Done()
		return // the connection has ended: dropped, as send drops it
	default:
	}
	c.out.mu.Lock()
	if c.out.writing || len(c.out.frames) > 0 {
		c.out.mu.Unlock()
		c.send(body)
		c.unanswered.Done()
		return
	}
	f := framed(body)
	c.out.writing = true
	c.out.msgs++
	c.out.bytes += len(f)
	c.out.mu.Unlock()
	// Being written: what is sent from now on is queued behind it, so it
	// counts as answered (Settle) before the peer has read it.
	c.unanswered.Done()
	c.write(f)
	c.out.mu.Lock()
	c.out.msgs--
	c.out.bytes -= len(f)
	c.drainLocked()
}
