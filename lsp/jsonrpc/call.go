package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
)

// callTable holds the ids of the calls in flight both ways; its maps are
// guarded by mu.
type callTable struct {
	mu       sync.Mutex
	inflight map[string]context.CancelFunc // the peer's calls being answered: their cancel ($/cancelRequest)
	pending  map[string]chan rpcResult     // this side's Calls waiting for their response
}

type rpcResult struct {
	result json.RawMessage
	err    *Error
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
	c.calls.mu.Lock()
	c.calls.pending[key] = ch
	c.calls.mu.Unlock()
	defer func() {
		c.calls.mu.Lock()
		delete(c.calls.pending, key)
		c.calls.mu.Unlock()
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

// deliver hands a response to the Call waiting for its id.
func (c *Conn) deliver(m *rpcIncoming) {
	c.calls.mu.Lock()
	ch, ok := c.calls.pending[string(m.req.ID)]
	c.calls.mu.Unlock()
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
