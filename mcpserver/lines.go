package mcpserver

// This file is the stdio framing in front of the SDK's IOTransport: one
// JSON-RPC message per line (docs/mcp.md, "Framing"). The SDK's reader ends
// the session on the first line it cannot decode; lineReader checks every
// line first, passes only JSON-RPC objects the SDK decodes, and answers any
// other line itself with a JSON-RPC error, so that one bad line costs only
// its own answer. What it hands on passes flow first (flow.go).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// MaxLineBytes is the longest line, in bytes without its newline, that
// `agentd mcp` reads as a message (16 MiB, the SDK's own default). A longer
// line is discarded as it is read, never held whole, and answered -32600.
const MaxLineBytes = 16 << 20

// lockedWriter makes each Write whole on w: the SDK writes one message per
// Write, and lineReader's answers go through the same lock, so lines never
// interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return l.w.Close() }

// lineReader is the Reader the SDK decodes: the lines of in that hold a
// JSON-RPC message, each with its newline. A line that does not is answered
// on out and left out: -32700 (id null) for one that is not JSON (including
// JSON nested deeper than the decoder allows), -32600 for a JSON value that
// is not an object, a batch (not supported), an object that is not a
// JSON-RPC request or response (with its id when it has a usable one), and
// a line over max bytes, and a numeric id that is not an integer it can
// echo exactly. A message then passes flow.admit, which may hold it back
// (backpressure) or answer it (the lifecycle). Blank lines are skipped.
type lineReader struct {
	in   io.ReadCloser
	r    *bufio.Reader
	out  io.Writer
	max  int
	flow *flow
	line []byte // the current message line
	rest []byte // what of line is not yet read
}

func newLineReader(in io.ReadCloser, out io.Writer, max int, f *flow) *lineReader {
	return &lineReader{in: in, r: bufio.NewReaderSize(in, 64<<10), out: out, max: max, flow: f}
}

func (l *lineReader) Read(p []byte) (int, error) {
	for len(l.rest) == 0 {
		if err := l.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, l.rest)
	l.rest = l.rest[n:]
	return n, nil
}

func (l *lineReader) Close() error {
	l.flow.close()
	return l.in.Close()
}

// next reads lines until one holds a message, which it makes l.rest. It
// returns the read error that ends input (a last line without newline is
// still taken).
func (l *lineReader) next() error {
	line, long, err := l.readLine()
	if len(line) == 0 && !long {
		return err
	}
	if long {
		l.answer(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: a line over the limit of %d bytes; it was discarded", l.max))
		return err
	}
	m, id, code, msg := check(line)
	if code == 0 {
		id, code, msg = l.flow.admit(m, id)
	}
	if code != 0 {
		l.answer(id, code, msg)
		return err
	}
	l.line = append(line, '\n')
	l.rest = l.line
	return nil
}

// readLine returns the next line without "\n" or "\r\n", trimmed of
// surrounding white space, in a buffer reused by the next call. A line over
// l.max bytes is read to its end and dropped: long is true and line empty.
func (l *lineReader) readLine() (line []byte, long bool, err error) {
	line = l.line[:0]
	for {
		chunk, err := l.r.ReadSlice('\n')
		if !long {
			if len(line)+len(chunk) > l.max+2 { // room for "\r\n"
				long, line = true, line[:0]
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if long {
			return nil, true, err
		}
		line = bytes.TrimSpace(line)
		if err == nil && len(line) > l.max {
			return nil, true, nil
		}
		return line, false, err
	}
}

// maxDepth is the deepest nesting of arrays and objects the SDK's decoder
// takes (its internal limit); a deeper line is answered as not JSON.
const maxDepth = 1000

// check decodes a line: the message and its raw id, or the JSON-RPC error
// that answers a line the SDK would not take (with the id to answer with,
// nil for null).
func check(line []byte) (m jsonrpc.Message, id json.RawMessage, code int64, msg string) {
	if !json.Valid(line) {
		var v any
		return nil, nil, jsonrpc.CodeParseError, "parse error: " + json.Unmarshal(line, &v).Error()
	}
	if tooDeep(line) {
		return nil, nil, jsonrpc.CodeParseError, fmt.Sprintf("parse error: JSON nested deeper than %d levels", maxDepth)
	}
	switch line[0] {
	case '{':
	case '[':
		return nil, nil, jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported; send one message per line"
	default:
		return nil, nil, jsonrpc.CodeInvalidRequest, "invalid request: a message must be a JSON object"
	}
	id, bad := messageID(line)
	if bad != nil {
		return nil, nil, jsonrpc.CodeInvalidRequest, notExact("the id", bad)
	}
	m, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		if len(id) > 0 && id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9') {
			id = nil
		}
		return nil, id, jsonrpc.CodeInvalidRequest, "invalid request: " + err.Error()
	}
	if req, ok := m.(*jsonrpc.Request); ok && req.Method == "notifications/cancelled" {
		var p map[string]json.RawMessage
		if json.Unmarshal(req.Params, &p) == nil && !exactInteger(p["requestId"]) {
			return nil, nil, jsonrpc.CodeInvalidRequest, notExact("notifications/cancelled: the requestId", p["requestId"])
		}
	}
	return m, id, 0, ""
}

// notExact is the message refusing a numeric id that is not exactInteger.
func notExact(what string, id json.RawMessage) string {
	return fmt.Sprintf("invalid request: %s %s is not an integer from -%d to %d; send a string id, or such an integer, which is answered exactly as sent", what, short(id), maxID, maxID)
}

// short is an id as a message shows it: its first 40 bytes.
func short(id json.RawMessage) json.RawMessage {
	if len(id) > 40 {
		return append(id[:40:40], "..."...)
	}
	return id
}

// maxID is the largest integer id the SDK, which decodes ids as float64,
// answers exactly (2^53-1).
const maxID = 1<<53 - 1

// messageID is the "id" of a JSON object (the last one, as decoders take
// it; nil when none) and the first "id" that is not exactInteger, which the
// SDK would answer under another id.
func messageID(object []byte) (id, bad json.RawMessage) {
	d := json.NewDecoder(bytes.NewReader(object))
	d.Token() // {
	for d.More() {
		key, err := d.Token()
		if err != nil {
			return id, bad
		}
		if key != "id" {
			d.Decode(&skipValue{})
			continue
		}
		var v json.RawMessage
		d.Decode(&v)
		id = v
		if bad == nil && !exactInteger(v) {
			bad = v
		}
	}
	return id, bad
}

// exactInteger says whether a JSON value is no number, or a number the SDK,
// which reads ids as float64 and answers them as int64, keeps as written: an
// integer from -maxID to maxID written plainly (not 7.5, 1e2, 7.0, -0, 2^53).
func exactInteger(v json.RawMessage) bool {
	if len(v) == 0 || v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return true
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return err == nil && n <= maxID && n >= -maxID && strconv.FormatInt(n, 10) == string(v)
}

// skipValue is a JSON value decoded to nothing.
type skipValue struct{}

func (*skipValue) UnmarshalJSON([]byte) error { return nil }

// tooDeep reports whether valid JSON nests arrays and objects deeper than
// maxDepth.
func tooDeep(data []byte) bool {
	depth, inString, escaped := 0, false, false
	for _, b := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			if depth++; depth > maxDepth {
				return true
			}
		case b == '}' || b == ']':
			depth--
		}
	}
	return false
}

// answer writes one error response line; id nil is null.
func (l *lineReader) answer(id json.RawMessage, code int64, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	l.out.Write(append(b, '\n')) // a failed write ends the session through the SDK's own next write
}
