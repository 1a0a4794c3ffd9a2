package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentd/agentd/jsonin"
)

// DefaultMaxMessageBytes is the largest message body, in bytes, a Conn accepts
// when Options.MaxMessageBytes is 0 (8 MiB).
const DefaultMaxMessageBytes int64 = 8 << 20

// Bounds of a connection's outgoing queue (docs/reliability.md, Limits). The
// queue counts every message from the moment it is queued until the writer
// has written it. A notification sent with TryNotify is dropped when the
// queue already holds maxQueuedNotes messages or the notification would take
// it over maxNoteBytes; replies, requests and Notify go in while the queue
// stays within maxQueueBytes (an empty queue takes any message). One that
// would take it beyond means the peer has stopped reading even its own
// replies: the connection is closed, since neither dropping a reply nor
// waiting for an unbounded number of them is right.
const (
	maxQueuedNotes = 4096     // messages
	maxNoteBytes   = 8 << 20  // 8 MiB
	maxQueueBytes  = 16 << 20 // 16 MiB
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
)

// maxIdleWorkers is how many handler goroutines a Conn keeps for the next
// handlers once theirs have returned. A handler's goroutine grows its stack
// as deep as the handler goes (encoding/json, bbolt); a new goroutine for
// every request grew it again, copying the stack each time it doubled (a
// quarter of a GetGoal read's CPU, docs/performance.md "Handler
// goroutines"). Handlers beyond these run in new goroutines, as before.
const maxIdleWorkers = 2

// JSON-RPC and LSP error codes.
const (
	CodeParseError           = -32700
	CodeInvalidRequest       = -32600
	CodeMethodNotFound       = -32601
	CodeInvalidParams        = -32602
	CodeInternalError        = -32603
	CodeServerNotInitialized = -32002
	CodeRequestCancelled     = -32800
	CodeContentModified      = -32801
	CodeRequestFailed        = -32803
)

// ErrConnClosed is returned by Notify and Call once the connection has ended.
var ErrConnClosed = errors.New("jsonrpc: connection closed")

// errRPCCloseCalled is the close reason recorded by Close; Run then returns nil.
var errRPCCloseCalled = errors.New("jsonrpc: Close called")

// errNotReading is wrapped by the close reason, and Run's error, when the
// outgoing queue overflowed maxQueueBytes.
var errNotReading = errors.New("jsonrpc: the peer is not reading what is sent to it")

var rpcNull = json.RawMessage("null")

// Request is an incoming call (ID != nil) or notification (ID == nil).
type Request struct {
	// ID is the verbatim JSON of the id, trimmed of whitespace: a number of any
	// size as written (1, 1e20, 12345678901234567890) or a string; nil for notifications.
	ID     json.RawMessage
	Method string
	Params json.RawMessage // verbatim; nil when absent ("null" when sent as null)
}

// IsCall reports whether r expects a response.
func (r *Request) IsCall() bool { return r.ID != nil }

// Handler answers a call; for notifications its result is ignored.
// An error is sent as described for Error; a result is encoded with encoding/json.
type Handler func(ctx context.Context, req *Request) (result any, err error)

// Ignore is a Handler that does nothing: a call gets the result null, a
// notification is dropped.
func Ignore(context.Context, *Request) (any, error) { return nil, nil }

// Router is called on the read goroutine, in arrival order, for every request and
// notification except $/cancelRequest, which Conn handles itself, and a call whose id
// is already in use, which Conn refuses; every Handler it returns is run. It may change
// connection state synchronously and returns the Handler to run; a nil Handler
// answers a call with -32601 and ignores a notification. Handlers run in their own
// goroutine, or on the read goroutine when inline is true (then the next message is
// not read until the Handler returns). Handlers in their own goroutines run
// concurrently; a Router that needs some of them in arrival order takes their place
// in a queue here, where the order is known, and the Handler waits for its turn.
type Router func(req *Request) (h Handler, inline bool)

// Error is a JSON-RPC error. A Handler may return it directly or wrapped
// (fmt.Errorf("...: %w", e)); the reply then carries e's Code and Data and the
// full text of the returned error as its message. Any other error is sent as -32603
// with its text, and any error returned after the call was cancelled as -32800.
type Error struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// Error returns the message alone, so that wrapping errors read naturally.
func (e *Error) Error() string { return e.Message }

// NewError returns an *Error with the given code and a fmt.Sprintf message.
func NewError(code int64, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Options configures a Conn. The zero value is ready to use.
type Options struct {
	MaxMessageBytes int64        // largest accepted body in bytes; 0 means DefaultMaxMessageBytes
	Logger          *slog.Logger // nil discards logs
}

// Conn is one JSON-RPC connection. Create it with NewConn and start it with Run.
type Conn struct {
	rwc   io.ReadWriteCloser
	r     *Reader
	route Router
	max   int64
	log   *slog.Logger

	qmu         sync.Mutex
	queue       [][]byte      // framed messages for the writer, in issue order
	queuedMsgs  int           // messages queued or being written; guarded by qmu
	queuedBytes int           // their bytes; guarded by qmu
	queueReady  chan struct{} // 1-buffered: the queue has messages
	writing     bool          // a goroutine is writing: the writer, or a worker writing its reply (writeReply); guarded by qmu
	overflowed  bool          // a reply overflowed the queue, which closed the connection (logged once); guarded by qmu

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

	wmu  sync.Mutex
	idle []chan task // workers waiting for a handler, the last idle first; guarded by wmu

	closeOnce sync.Once
	closeErr  error

	mu          sync.Mutex
	closed      bool  // transport closed by us
	closeReason error // why: errRPCCloseCalled, ctx.Err(), a write error, or nil (Run ending)
	inflight    map[string]context.CancelFunc
	pending     map[string]chan rpcResult
}

type rpcResult struct {
	result json.RawMessage
	err    *Error
}

// NewConn returns a connection over rwc that routes incoming messages with route.
func NewConn(rwc io.ReadWriteCloser, route Router, opts Options) *Conn {
	c := &Conn{
		rwc:        rwc,
		r:          NewReader(rwc, ReaderOptions{Logger: opts.Logger}),
		route:      route,
		max:        opts.MaxMessageBytes,
		log:        opts.Logger,
		queueReady: make(chan struct{}, 1),
		stopping:   make(chan struct{}),
		writerDone: make(chan struct{}),
		readDone:   make(chan struct{}),
		done:       make(chan struct{}),
		inflight:   make(map[string]context.CancelFunc),
		pending:    make(map[string]chan rpcResult),
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
	c.mu.Lock()
	closed, reason := c.closed, c.closeReason
	c.mu.Unlock()
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
	case closed && reason == errRPCCloseCalled:
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
// or the peer has taken nothing for endStall while something waits to be
// written (drainStalled, logged): a handler that is merely slow, with
// nothing to write, is waited for until wait. With writes, wait ends it
// only once nothing is being written: output the peer takes goes on.
func (c *Conn) drain(wait, done <-chan struct{}, writes bool) int {
	tick := time.NewTicker(endStall / 16)
	defer tick.Stop()
	timedOut := false
	var waiting int64 // since when (UnixNano) something waits to be written, or the peer last took some of it, as this wait saw it; 0 while nothing waits
	lastUnread := -1
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
		c.qmu.Lock()
		msgs, size, pending := c.queuedMsgs, c.queuedBytes, c.writing || c.queuedMsgs > 0
		c.qmu.Unlock()
		now := time.Now().UnixNano()
		unread, known := c.unread()
		switch {
		case !pending:
			waiting = 0
		// Any change of what the pipe or socket holds, while a write
		// waits, is the peer reading: more in it is the blocked write
		// going on into the room the peer made, which a wait that saw
		// neither (a busy machine delaying this goroutine) would miss.
		case waiting == 0, known && lastUnread >= 0 && unread != lastUnread:
			waiting = now
		}
		lastUnread = -1
		if known {
			lastUnread = unread
		}
		switch {
		case pending && time.Duration(now-max(waiting, c.wrote.Load())) >= endStall:
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

// Notify sends a notification that must not be dropped; params nil omits
// "params". Messages are written in the order they were issued. Notify never
// waits: when the peer has stopped reading (16 MiB already wait to be
// written) the connection is closed instead. It fails when params cannot be
// encoded or the connection has ended.
func (c *Conn) Notify(method string, params any) error {
	body, err := rpcRequestBody(nil, method, params)
	if err != nil {
		return err
	}
	return c.enqueue(body, false)
}

// ErrQueueFull is returned by TryNotify when the peer is not reading: 4096
// messages, or 8 MiB, already wait to be written.
var ErrQueueFull = errors.New("jsonrpc: outgoing queue full: the peer is not reading")

// TryNotify is Notify for a notification that may be lost: when 4096
// messages, or 8 MiB with it, would wait to be written, it drops the
// notification and returns ErrQueueFull.
func (c *Conn) TryNotify(method string, params any) error {
	body, err := rpcRequestBody(nil, method, params)
	if err != nil {
		return err
	}
	return c.enqueue(body, true)
}

// Notification is a notification encoded and framed once, to be queued
// on any number of connections with TryNotifyEncoded: the shared daemon's
// fan-out encodes each change once for all its clients (docs/performance.md,
// "What the ratios mean, and the verdict"). Its bytes are those TryNotify
// would write for the same method and params, and are never modified.
type Notification struct {
	method string
	frame  []byte // header block and body
}

// EncodeNotification encodes a notification as TryNotify sends it; params
// nil omits "params". It fails when params cannot be encoded.
func EncodeNotification(method string, params any) (*Notification, error) {
	body, err := rpcRequestBody(nil, method, params)
	if err != nil {
		return nil, err
	}
	return &Notification{method: method, frame: framed(body)}, nil
}

// Method is the notification's method.
func (n *Notification) Method() string { return n.method }

// TryNotifyEncoded is TryNotify for a notification encoded beforehand:
// the connection queues n's bytes themselves, not a copy, under the same
// bounds (dropped with ErrQueueFull when 4096 messages, or 8 MiB with it,
// would wait to be written).
func (c *Conn) TryNotifyEncoded(n *Notification) error {
	return c.enqueueFrame(n.frame, true)
}

// ErrMessageTooLarge is wrapped by Call's error for a request whose body
// is over the connection's MaxMessageBytes: the peer (an agentd server has
// the same limit) would refuse it with an error it cannot tie to the call.
var ErrMessageTooLarge = errors.New("jsonrpc: message too large")

// Call sends a request with a fresh numeric id and waits for its response. It
// returns the raw result, an *Error for an error response, ctx.Err() when ctx ends
// first (after sending $/cancelRequest for the id), or ErrConnClosed when the
// connection ends first. A request body over MaxMessageBytes is not sent:
// the error wraps ErrMessageTooLarge and names both sizes.
func (c *Conn) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	key := strconv.FormatInt(c.nextID.Add(1), 10)
	body, err := rpcRequestBody(json.RawMessage(key), method, params)
	if err != nil {
		return nil, err
	}
	if n := int64(len(body)); n > c.max {
		return nil, fmt.Errorf("%w: the %s request of %d bytes exceeds the limit of %d bytes on one message", ErrMessageTooLarge, method, n, c.max)
	}
	ch := make(chan rpcResult, 1)
	c.mu.Lock()
	c.pending[key] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, key)
		c.mu.Unlock()
	}()
	if err := c.enqueue(body, false); err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		return r.result, nil
	case <-ctx.Done():
		if cancel, err := rpcRequestBody(nil, "$/cancelRequest", map[string]json.RawMessage{"id": json.RawMessage(key)}); err == nil {
			c.enqueue(cancel, true) // best effort, like any notification
		}
		return nil, ctx.Err()
	case <-c.readDone:
		return nil, ErrConnClosed
	}
}

// closeTransport closes rwc once, recording why; it returns rwc.Close's error.
func (c *Conn) closeTransport(reason error) error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed, c.closeReason = true, reason
		c.mu.Unlock()
		c.closeErr = c.rwc.Close()
	})
	return c.closeErr
}

func (c *Conn) stopOutput() { c.stopOnce.Do(func() { close(c.stopping) }) }

// enqueue hands a message body to the writer without waiting. An optional
// message (a notification that may be lost) is refused with ErrQueueFull
// when maxQueuedNotes messages are queued or it would take the queue over
// maxNoteBytes. Any other message that would take a non-empty queue over
// maxQueueBytes closes the connection (see maxQueueBytes).
func (c *Conn) enqueue(body []byte, optional bool) error {
	return c.enqueueFrame(framed(body), optional)
}

// enqueueFrame is enqueue of a message already framed; the writer only
// reads frame, which may be queued on other connections too.
func (c *Conn) enqueueFrame(frame []byte, optional bool) error {
	select {
	case <-c.stopping:
		return ErrConnClosed
	default:
	}
	c.qmu.Lock()
	msgs, size := c.queuedMsgs, c.queuedBytes+len(frame)
	switch {
	case optional && (msgs >= maxQueuedNotes || size > maxNoteBytes):
		c.qmu.Unlock()
		return ErrQueueFull
	case !optional && msgs > 0 && size > maxQueueBytes:
		first := !c.overflowed
		c.overflowed = true
		c.qmu.Unlock()
		err := fmt.Errorf("%w: %d messages of %d bytes wait to be written, and %d more bytes would exceed the limit of %d bytes",
			errNotReading, msgs, size-len(frame), len(frame), maxQueueBytes)
		if first { // the replies of the handlers still running overflow too
			c.log.Warn("jsonrpc: the peer is not reading; closing the connection", "err", err)
		}
		c.closeTransport(err)
		return err
	}
	c.queue = append(c.queue, frame)
	c.queuedMsgs, c.queuedBytes = msgs+1, size
	c.qmu.Unlock()
	select {
	case c.queueReady <- struct{}{}:
	default:
	}
	return nil
}

// writeLoop writes what is queued, one Write per message, in queue order,
// whenever no worker is writing its reply itself (writeReply). After a
// write fails the transport is closed and the rest dropped.
func (c *Conn) writeLoop() {
	defer close(c.writerDone)
	for {
		select {
		case <-c.queueReady:
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
		c.mu.Lock()
		closed := c.closed
		c.mu.Unlock()
		switch {
		case closed:
		case errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET):
			// The peer closed its end, as a client that runs once per
			// event does after its answer (docs/hooks.md): what was left
			// to write, such as a notification that followed the answer,
			// had no one to read it.
			c.log.Debug("jsonrpc: the peer closed the connection; dropping what is left to write", "err", err)
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
	c.qmu.Lock()
	if c.writing {
		c.qmu.Unlock()
		return
	}
	c.writing = true
	c.drainLocked()
}

// drainLocked writes the queue until it is empty, then gives up the
// writing; it is called with qmu held and c.writing set, and returns
// with qmu released.
func (c *Conn) drainLocked() {
	for len(c.queue) > 0 {
		batch := c.queue
		c.queue = nil
		c.qmu.Unlock()
		for i, f := range batch {
			c.write(f)
			batch[i] = nil
			c.qmu.Lock()
			c.queuedMsgs--
			c.queuedBytes -= len(f)
			c.qmu.Unlock()
		}
		c.qmu.Lock()
	}
	c.writing = false
	c.qmu.Unlock()
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
	c.qmu.Lock()
	if c.writing || len(c.queue) > 0 {
		c.qmu.Unlock()
		c.send(body)
		c.unanswered.Done()
		return
	}
	f := framed(body)
	c.writing = true
	c.queuedMsgs++
	c.queuedBytes += len(f)
	c.qmu.Unlock()
	// Being written: what is sent from now on is queued behind it, so it
	// counts as answered (Settle) before the peer has read it.
	c.unanswered.Done()
	c.write(f)
	c.qmu.Lock()
	c.queuedMsgs--
	c.queuedBytes -= len(f)
	c.drainLocked()
}

func (c *Conn) readLoop(ctx context.Context) error {
	for {
		n, err := c.r.ReadHeader()
		var fe *FramingError
		if errors.As(err, &fe) {
			c.log.Warn("jsonrpc: bad framing; skipping to the next Content-Length header", "err", err)
			c.send(rpcReplyBody(nil, nil, &Error{Code: CodeParseError, Message: fe.Error()}))
			continue
		}
		if err != nil {
			return err
		}
		if n > c.max {
			c.log.Warn("jsonrpc: message too large; discarding it", "bytes", n, "limit", c.max)
			c.send(rpcReplyBody(nil, nil, NewError(CodeInvalidRequest,
				"message of %d bytes exceeds the limit of %d bytes", n, c.max)))
			if err := c.r.CopyBody(io.Discard, n); err != nil {
				return err
			}
			continue
		}
		body, err := c.r.ReadBody(n)
		if err != nil {
			return err
		}
		c.handle(ctx, body)
	}
}

// rpcMarshal encodes v without HTML escaping, so ids and strings go out as written.
func rpcMarshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// rpcEncode is rpcMarshal for params and results: a json.RawMessage that
// is compact JSON already goes out as it is (encoding/json would only have
// checked and copied it, docs/performance.md); anything else is encoded
// once.
func rpcEncode(v any) (json.RawMessage, error) {
	if raw, ok := v.(json.RawMessage); ok && jsonin.Compact(raw) {
		return raw, nil
	}
	return rpcMarshal(v)
}

// rpcEnvelope builds an outgoing message around parts that are JSON
// already (id, params, result: valid and compact), with the members in the
// order {"jsonrpc","id","method","params","result","error"}; an empty part
// is left out, as is a nil e. These are the bytes encoding/json writes for
// the same message without HTML escaping, built without passing the parts
// through it again. It fails only when e's Data cannot be encoded.
func rpcEnvelope(id json.RawMessage, method string, params, result json.RawMessage, e *Error) ([]byte, error) {
	var errJSON json.RawMessage
	if e != nil {
		var err error
		if errJSON, err = rpcMarshal(e); err != nil {
			return nil, err
		}
	}
	b := make([]byte, 0, 64+len(id)+len(method)+len(params)+len(result)+len(errJSON))
	b = append(b, `{"jsonrpc":"2.0"`...)
	if len(id) > 0 {
		b = append(append(b, `,"id":`...), id...)
	}
	if method != "" {
		b = append(b, `,"method":`...)
		if plainString(method) {
			b = append(append(append(b, '"'), method...), '"')
		} else {
			m, _ := rpcMarshal(method) // a string always encodes
			b = append(b, m...)
		}
	}
	if len(params) > 0 {
		b = append(append(b, `,"params":`...), params...)
	}
	if len(result) > 0 {
		b = append(append(b, `,"result":`...), result...)
	}
	if errJSON != nil {
		b = append(append(b, `,"error":`...), errJSON...)
	}
	return append(b, '}'), nil
}

// plainString reports whether s is printable ASCII without '"' or '\\':
// a JSON string of it is s in quotes.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func rpcRequestBody(id json.RawMessage, method string, params any) ([]byte, error) {
	var raw json.RawMessage
	if params != nil {
		var err error
		if raw, err = rpcEncode(params); err != nil {
			return nil, fmt.Errorf("jsonrpc: encoding params of %s: %w", method, err)
		}
	}
	return rpcEnvelope(id, method, raw, nil, nil)
}

// rpcReplyBody encodes a response; id nil is sent as null, result nil as
// null. id and result are valid compact JSON: an id as the request wrote
// it (rpcDecode), a result as rpcEncode wrote it.
func rpcReplyBody(id, result json.RawMessage, e *Error) []byte {
	if id == nil {
		id = rpcNull
	}
	if e == nil && result == nil {
		result = rpcNull
	}
	body, err := rpcEnvelope(id, "", nil, result, e)
	if err != nil { // Data cannot be encoded: send the error without it
		e = &Error{Code: e.Code, Message: e.Message + " (error data not encodable: " + err.Error() + ")"}
		body, err = rpcEnvelope(id, "", nil, result, e)
	}
	if err != nil { // not expected: an Error without Data always encodes
		return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error: cannot encode a reply"}}`)
	}
	return body
}

// send queues a reply; it is dropped when the connection has ended, or ends
// it when the peer has stopped reading (enqueue).
func (c *Conn) send(body []byte) {
	if err := c.enqueue(body, false); err != nil {
		c.log.Debug("jsonrpc: reply dropped", "err", err)
	}
}

// rpcIncoming is a decoded request, notification or response.
type rpcIncoming struct {
	req        Request
	isResponse bool
	result     json.RawMessage
	err        *Error
}

// rpcDecode checks a body against JSON-RPC 2.0. On failure it returns the
// error to answer and the id to answer it with (nil when the id is unusable).
//
// The body is scanned once (jsonin.Members); the members keep pointing into
// it, so Params is a slice of body, not a copy. Of a key given twice the
// last counts, as json.Unmarshal into a map would have it.
func rpcDecode(body []byte) (m *rpcIncoming, replyID json.RawMessage, e *Error) {
	members, ok := jsonin.Members(body)
	if !ok {
		var fields map[string]json.RawMessage
		err := json.Unmarshal(body, &fields)
		trimmed := bytes.TrimSpace(body)
		switch {
		case !json.Valid(trimmed):
			return nil, nil, NewError(CodeParseError, "parse error: %v", err)
		case trimmed[0] == '[':
			return nil, nil, NewError(CodeInvalidRequest, "invalid request: batches are not supported")
		default:
			return nil, nil, NewError(CodeInvalidRequest, "invalid request: message is not a JSON object")
		}
	}
	fields := make(map[string]json.RawMessage, len(members))
	for _, mb := range members {
		fields[mb.Key] = mb.Value
	}
	id, hasID := fields["id"]
	id = bytes.TrimSpace(id)
	if hasID && len(id) > 0 && (id[0] == '"' || id[0] == '-' || '0' <= id[0] && id[0] <= '9') {
		replyID = id
	}
	var version string
	if json.Unmarshal(fields["jsonrpc"], &version) != nil || version != "2.0" {
		return nil, replyID, NewError(CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	if rawMethod, ok := fields["method"]; ok {
		var method string
		if rawMethod = bytes.TrimSpace(rawMethod); len(rawMethod) == 0 || rawMethod[0] != '"' || json.Unmarshal(rawMethod, &method) != nil {
			return nil, replyID, NewError(CodeInvalidRequest, `invalid request: "method" must be a string`)
		}
		if hasID && replyID == nil {
			return nil, nil, NewError(CodeInvalidRequest, `invalid request: "id" must be a number or a string`)
		}
		return &rpcIncoming{req: Request{ID: replyID, Method: method, Params: fields["params"]}}, nil, nil
	}
	result, hasResult := fields["result"]
	rawErr, hasErr := fields["error"]
	if !hasResult && !hasErr {
		return nil, replyID, NewError(CodeInvalidRequest, `invalid request: "method" is missing`)
	}
	m = &rpcIncoming{isResponse: true, req: Request{ID: replyID}, result: result}
	if hasErr && !bytes.Equal(bytes.TrimSpace(rawErr), rpcNull) {
		var we struct {
			Code    int64           `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		m.err = &Error{Code: CodeInternalError, Message: "malformed error response: " + string(rawErr)}
		if json.Unmarshal(rawErr, &we) == nil {
			m.err = &Error{Code: we.Code, Message: we.Message}
			if we.Data != nil {
				m.err.Data = we.Data
			}
		}
	}
	return m, nil, nil
}

// handle dispatches one message body; it runs on the read goroutine.
func (c *Conn) handle(ctx context.Context, body []byte) {
	m, replyID, e := rpcDecode(body)
	switch {
	case e != nil:
		c.log.Warn("jsonrpc: bad message", "err", e.Message)
		c.send(rpcReplyBody(replyID, nil, e))
	case m.isResponse:
		c.deliver(m)
	case m.req.Method == "$/cancelRequest":
		c.cancelRequest(m.req.Params)
		if m.req.IsCall() {
			c.send(rpcReplyBody(m.req.ID, nil, nil))
		}
	default:
		c.dispatch(ctx, &m.req)
	}
}

// deliver hands a response to the Call waiting for its id.
func (c *Conn) deliver(m *rpcIncoming) {
	c.mu.Lock()
	ch, ok := c.pending[string(m.req.ID)]
	c.mu.Unlock()
	if !ok || m.req.ID == nil {
		attrs := []any{"id", string(m.req.ID)}
		if m.err != nil {
			attrs = append(attrs, "error", m.err.Message)
		}
		c.log.Warn("jsonrpc: dropping a response with an unknown id", attrs...)
		return
	}
	select {
	case ch <- rpcResult{result: m.result, err: m.err}:
	default: // a second response for the same id
	}
}

// maxLoggedParams bounds the bytes of a bad $/cancelRequest's params that
// its log line holds: params may be as large as a message (8 MiB).
const maxLoggedParams = 256

// cancelRequest cancels the call params names. One without a number or
// string id is ignored: the first on a connection is logged as a warning,
// those after it at debug level, so that a client that repeats the mistake
// does not flood the log (docs/protocol.md §2); the line holds at most
// maxLoggedParams bytes of the params, and their size when they are longer.
func (c *Conn) cancelRequest(params json.RawMessage) {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	err := json.Unmarshal(params, &p)
	id := bytes.TrimSpace(p.ID)
	if err != nil || len(id) == 0 || id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9') {
		level := slog.LevelDebug
		if c.badCancels.Add(1) == 1 {
			level = slog.LevelWarn
		}
		if !c.log.Enabled(context.Background(), level) {
			return
		}
		attrs := []any{"params", string(params)}
		if len(params) > maxLoggedParams {
			attrs = []any{"params", string(bytes.ToValidUTF8(params[:maxLoggedParams], nil)) + "…", "bytes", len(params)}
		}
		c.log.Log(context.Background(), level, "jsonrpc: $/cancelRequest without a number or string id; ignored (logged once per connection, later ones at debug level)", attrs...)
		return
	}
	c.mu.Lock()
	cancel := c.inflight[string(id)]
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// task runs one handler and returns the reply to send, nil for none.
type task func() (reply []byte)

// goHandler runs t outside the read goroutine, on an idle worker when
// there is one, else on a new one. t counts in c.handlers until its reply
// is queued or written, and in c.unanswered until it is queued or being
// written (writeReply).
func (c *Conn) goHandler(t task) {
	c.handlers.Add(1)
	c.unanswered.Add(1)
	c.wmu.Lock()
	if n := len(c.idle); n > 0 {
		w := c.idle[n-1]
		c.idle = c.idle[:n-1]
		c.wmu.Unlock()
		w <- t // buffered: never waits
		return
	}
	c.wmu.Unlock()
	w := make(chan task, 1)
	w <- t
	go c.worker(w)
}

// worker runs the tasks given on w. Once a task has returned it is idle
// again before the task's reply is queued, so a peer that sends its next
// request on the reply finds it idle, unless maxIdleWorkers others are:
// then it ends. It ends too when the read loop has ended (no task comes
// after that).
func (c *Conn) worker(w chan task) {
	for {
		var t task
		select {
		case t = <-w:
		case <-c.readDone:
			select {
			case t = <-w: // given just before the read loop ended
			default:
				return
			}
		}
		reply := t()
		c.wmu.Lock()
		keep := len(c.idle) < maxIdleWorkers
		if keep {
			c.idle = append(c.idle, w)
		}
		c.wmu.Unlock()
		if reply != nil {
			c.writeReply(reply)
		} else {
			c.unanswered.Done()
		}
		c.handlers.Done()
		if !keep {
			return
		}
	}
}

func (c *Conn) dispatch(ctx context.Context, req *Request) {
	start := func(inline bool, t task) {
		if !inline {
			c.goHandler(t)
		} else if reply := t(); reply != nil {
			c.send(reply)
		}
	}
	if !req.IsCall() {
		if h, inline := c.routeSafe(req); h != nil {
			start(inline, func() []byte { c.runNotification(ctx, h, req); return nil })
		}
		return
	}
	// The id is claimed before routing: a call refused for its id is never
	// routed, so every Handler the Router returns runs (a Router may have
	// queued it).
	key := string(req.ID)
	hctx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	_, dup := c.inflight[key]
	if !dup {
		c.inflight[key] = cancel
	}
	c.mu.Unlock()
	if dup {
		cancel()
		c.send(rpcReplyBody(req.ID, nil, NewError(CodeInvalidRequest, "invalid request: id %s is already in use", req.ID)))
		return
	}
	done := func() {
		c.mu.Lock()
		delete(c.inflight, key) // before replying, so the peer may reuse the id at once
		c.mu.Unlock()
		cancel()
	}
	h, inline := c.routeSafe(req)
	if h == nil {
		done()
		c.send(rpcReplyBody(req.ID, nil, NewError(CodeMethodNotFound, "method not found: %s", req.Method)))
		return
	}
	start(inline, func() []byte {
		body := c.answer(hctx, h, req)
		done()
		return body
	})
}

// routeSafe calls the Router; a panic in it becomes a handler that answers -32603.
func (c *Conn) routeSafe(req *Request) (h Handler, inline bool) {
	if c.route == nil {
		return nil, false
	}
	defer func() {
		if p := recover(); p != nil {
			c.logPanic("router", req, p)
			e := NewError(CodeInternalError, "internal error: panic routing %s: %v", req.Method, p)
			h, inline = func(context.Context, *Request) (any, error) { return nil, e }, true
		}
	}()
	return c.route(req)
}

// answer runs a call's handler and encodes its reply. A panic in the handler, in
// its error's Error method or in encoding its result becomes a -32603 reply.
func (c *Conn) answer(ctx context.Context, h Handler, req *Request) (body []byte) {
	defer func() {
		if p := recover(); p != nil {
			c.logPanic("handler", req, p)
			body = rpcReplyBody(req.ID, nil, NewError(CodeInternalError, "internal error: panic in %s: %v", req.Method, p))
		}
	}()
	res, err := h(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return rpcReplyBody(req.ID, nil, NewError(CodeRequestCancelled, "request cancelled"))
		}
		var e *Error
		if errors.As(err, &e) && e != nil {
			return rpcReplyBody(req.ID, nil, &Error{Code: e.Code, Message: err.Error(), Data: e.Data})
		}
		return rpcReplyBody(req.ID, nil, &Error{Code: CodeInternalError, Message: err.Error()})
	}
	raw, err := rpcEncode(res)
	if err != nil {
		c.log.Error("jsonrpc: cannot encode a result", "method", req.Method, "err", err)
		return rpcReplyBody(req.ID, nil, NewError(CodeInternalError, "internal error: encoding the result of %s: %v", req.Method, err))
	}
	return rpcReplyBody(req.ID, raw, nil)
}

func (c *Conn) runNotification(ctx context.Context, h Handler, req *Request) {
	defer func() {
		if p := recover(); p != nil {
			c.logPanic("handler", req, p)
		}
	}()
	if _, err := h(ctx, req); err != nil {
		c.log.Warn("jsonrpc: notification handler failed", "method", req.Method, "err", err)
	}
}

func (c *Conn) logPanic(where string, req *Request, p any) {
	c.log.Error("jsonrpc: "+where+" panicked", "method", req.Method, "id", string(req.ID),
		"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
}
