package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sync"
)

// maxIdleWorkers is how many handler goroutines a Conn keeps for the next
// handlers once theirs have returned. A handler's goroutine grows its stack
// as deep as the handler goes (encoding/json, bbolt); a new goroutine for
// every request grew it again, copying the stack each time it doubled (a
// quarter of a GetGoal read's CPU, docs/performance.md "Handler
// goroutines"). Handlers beyond these run in new goroutines, as before.
const maxIdleWorkers = 2

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

// workerPool holds the workers waiting for a handler, the last idle
// first; idle is guarded by mu.
type workerPool struct {
	mu   sync.Mutex
	idle []chan task
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
	c.workers.mu.Lock()
	if n := len(c.workers.idle); n > 0 {
		w := c.workers.idle[n-1]
		c.workers.idle = c.workers.idle[:n-1]
		c.workers.mu.Unlock()
		w <- t // buffered: never waits
		return
	}
	c.workers.mu.Unlock()
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
		c.workers.mu.Lock()
		keep := len(c.workers.idle) < maxIdleWorkers
		if keep {
			c.workers.idle = append(c.workers.idle, w)
		}
		c.workers.mu.Unlock()
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
	c.calls.mu.Lock()
	_, dup := c.calls.inflight[key]
	if !dup {
		c.calls.inflight[key] = cancel
	}
	c.calls.mu.Unlock()
	if dup {
		cancel()
		c.send(rpcReplyBody(req.ID, nil, NewError(CodeInvalidRequest, "invalid request: id %s is already in use", req.ID)))
		return
	}
	done := func() {
		c.calls.mu.Lock()
		delete(c.calls.inflight, key) // before replying, so the peer may reuse the id at once
		c.calls.mu.Unlock()
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
