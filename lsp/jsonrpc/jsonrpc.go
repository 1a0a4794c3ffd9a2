package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
)

// DefaultMaxMessageBytes is the largest message body, in bytes, a Conn accepts
// when Options.MaxMessageBytes is 0 (8 MiB).
const DefaultMaxMessageBytes int64 = 8 << 20

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
