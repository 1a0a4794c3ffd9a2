package jsonrpc

import (
	"errors"
	"fmt"
	"sync"
)

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

// errNotReading is wrapped by the close reason, and Run's error, when the
// outgoing queue overflowed maxQueueBytes.
var errNotReading = errors.New("jsonrpc: the peer is not reading what is sent to it")

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

// outQueue is a connection's outgoing queue: what waits to be written, and
// whether a goroutine is writing. Its fields but ready are guarded by mu.
type outQueue struct {
	mu         sync.Mutex
	frames     [][]byte      // framed messages for the writer, in issue order
	msgs       int           // messages queued or being written
	bytes      int           // their bytes
	writing    bool          // a goroutine is writing: the writer, or a worker writing its reply (writeReply)
	overflowed bool          // a reply overflowed the queue, which closed the connection (logged once)
	ready      chan struct{} // 1-buffered: the queue has messages
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
	c.out.mu.Lock()
	msgs, size := c.out.msgs, c.out.bytes+len(frame)
	switch {
	case optional && (msgs >= maxQueuedNotes || size > maxNoteBytes):
		c.out.mu.Unlock()
		return ErrQueueFull
	case !optional && msgs > 0 && size > maxQueueBytes:
		first := !c.out.overflowed
		c.out.overflowed = true
		c.out.mu.Unlock()
		err := fmt.Errorf("%w: %d messages of %d bytes wait to be written, and %d more bytes would exceed the limit of %d bytes",
			errNotReading, msgs, size-len(frame), len(frame), maxQueueBytes)
		if first { // the replies of the handlers still running overflow too
			c.log.Warn("jsonrpc: the peer is not reading; closing the connection", "err", err)
		}
		c.closeTransport(err)
		return err
	}
	c.out.frames = append(c.out.frames, frame)
	c.out.msgs, c.out.bytes = msgs+1, size
	c.out.mu.Unlock()
	select {
	case c.out.ready <- struct{}{}:
	default:
	}
	return nil
}

// send queues a reply; it is dropped when the connection has ended, or ends
// it when the peer has stopped reading (enqueue).
func (c *Conn) send(body []byte) {
	if err := c.enqueue(body, false); err != nil {
		c.log.Debug("jsonrpc: reply dropped", "err", err)
	}
}
