package mcpserver

// This file is what lineReader decides about a message it hands to the SDK
// (docs/mcp.md, "Framing"): backpressure and the MCP lifecycle. The SDK
// handles every request on a goroutine of its own whose reply then waits
// for the writer, so a client that writes and never reads would grow the
// process without end; and it answers a request before initialize, or a
// second initialize, with JSON-RPC code 0. lineReader therefore stops
// reading while MaxInFlight requests, or MaxUnwrittenBytes of replies, wait
// for their answers to be written, and answers those requests itself with
// -32002 (lsprpc.CodeServerNotInitialized) and -32600, as agentd's LSP
// server does (docs/protocol.md §2).

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	lsprpc "github.com/agentd/agentd/lsp/jsonrpc"
)

// MaxInFlight is how many requests `agentd mcp` has taken in and not yet
// answered (the answer written on stdout) before it stops reading stdin.
const MaxInFlight = 64

// MaxUnwrittenBytes is how many bytes of messages may wait to be written on
// stdout before `agentd mcp` stops reading stdin (4 MiB).
const MaxUnwrittenBytes = 4 << 20

// newProtocol is the first MCP revision whose requests carry their own
// protocol version in _meta and need no initialize (the SDK's rule).
const newProtocol = "2026-07-28"

// flow is the state lineReader and replyWriter share.
type flow struct {
	mu        sync.Mutex
	cond      sync.Cond
	inFlight  map[any]bool // ids (float64 or string) of requests handed to the SDK and not yet answered
	writing   int          // writes of the SDK under way
	unwritten int          // their bytes
	closed    bool

	initialized bool
	initID      any // the id of the initialize handed to the SDK, while it is not answered
	initWaiting bool
}

func newFlow() *flow {
	f := &flow{inFlight: map[any]bool{}}
	f.cond.L = &f.mu
	return f
}

// admit waits until the message m, whose raw id is id, may be handed to the
// SDK, and records it; or returns the error that answers it instead, and
// the id to answer with (nil is null; code 0 when none). A request waits
// while MaxInFlight are unanswered or MaxUnwrittenBytes wait to be written;
// any other message while the SDK writes; everything while an initialize
// is not answered, so that what follows it is judged by its outcome.
func (f *flow) admit(m jsonrpc.Message, id json.RawMessage) (json.RawMessage, int64, string) {
	req, _ := m.(*jsonrpc.Request)
	call := req != nil && req.IsCall()
	f.mu.Lock()
	defer f.mu.Unlock()
	for !f.closed && (f.initWaiting || f.unwritten >= MaxUnwrittenBytes || call && len(f.inFlight) >= MaxInFlight || !call && f.writing > 0) {
		f.cond.Wait()
	}
	if !call {
		return nil, 0, ""
	}
	key := idKey(id)
	sessionless := carriesVersion(req.Params)
	switch {
	case f.inFlight[key]:
		return nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: the id %s is already in use by a request not yet answered", short(id))
	case sessionless:
		f.initialized = true // the SDK takes such a request as the session's start
	case req.Method == "initialize" && f.initialized:
		return id, jsonrpc.CodeInvalidRequest, "invalid request: initialize was already received on this connection"
	case req.Method == "initialize":
		f.initID, f.initWaiting = key, true
	case !f.initialized && req.Method != "ping" && req.Method != "server/discover":
		return id, lsprpc.CodeServerNotInitialized, "server not initialized: send initialize first"
	}
	f.inFlight[key] = true
	return nil, 0, ""
}

// close lets a waiting admit go: the session has ended.
func (f *flow) close() {
	f.mu.Lock()
	f.closed = true
	f.cond.Broadcast()
	f.mu.Unlock()
}

// carriesVersion says whether a request's params carry the protocol version
// in _meta (newProtocol or later), which the SDK serves without initialize.
func carriesVersion(params json.RawMessage) bool {
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	v, ok := p.Meta[mcp.MetaKeyProtocolVersion].(string)
	return ok && v >= newProtocol
}

// idKey is a JSON-RPC id as a map key: the string, or the number as a
// float64 (check admits only integers a float64 holds exactly).
func idKey(id json.RawMessage) any {
	var v any
	json.Unmarshal(id, &v)
	return v
}

// replyWriter is the Writer the SDK writes its messages on, one per Write:
// each reply written answers its request in flow.
type replyWriter struct {
	w *lockedWriter
	f *flow
}

func (r *replyWriter) Write(p []byte) (int, error) {
	f := r.f
	f.mu.Lock()
	f.writing++
	f.unwritten += len(p)
	f.mu.Unlock()
	n, err := r.w.Write(p)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
		Error  *struct{}       `json:"error"`
	}
	reply := json.Unmarshal(p, &m) == nil && m.Method == nil && len(m.ID) > 0
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writing--
	f.unwritten -= len(p)
	if reply {
		key := idKey(m.ID)
		delete(f.inFlight, key)
		if f.initWaiting && key == f.initID {
			f.initWaiting, f.initialized = false, m.Error == nil
		}
	}
	f.cond.Broadcast()
	return n, err
}

func (r *replyWriter) Close() error { return r.w.Close() }
