package mcpserver

// This file is the stdio framing in front of the SDK's IOTransport: one
// JSON-RPC message per line (docs/mcp.md, "Framing"). The SDK's reader ends
// the session on the first line it cannot decode; lineReader checks every
// line first, passes only JSON-RPC objects the SDK decodes, and answers any
// other line itself with a JSON-RPC error, so that one bad line costs only
// its own answer.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
// a line over max bytes. Blank lines are skipped.
type lineReader struct {
	in   io.ReadCloser
	r    *bufio.Reader
	out  io.Writer
	max  int
	line []byte // the current message line
	rest []byte // what of line is not yet read
}

func newLineReader(in io.ReadCloser, out io.Writer, max int) *lineReader {
	return &lineReader{in: in, r: bufio.NewReaderSize(in, 64<<10), out: out, max: max}
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

func (l *lineReader) Close() error { return l.in.Close() }

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
	if id, code, msg := check(line); code != 0 {
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

// check is the JSON-RPC error for a line that the SDK would not take, or
// code 0.
func check(line []byte) (id json.RawMessage, code int64, msg string) {
	if !json.Valid(line) {
		var v any
		return nil, jsonrpc.CodeParseError, "parse error: " + json.Unmarshal(line, &v).Error()
	}
	if tooDeep(line) {
		return nil, jsonrpc.CodeParseError, fmt.Sprintf("parse error: JSON nested deeper than %d levels", maxDepth)
	}
	switch line[0] {
	case '{':
	case '[':
		return nil, jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported; send one message per line"
	default:
		return nil, jsonrpc.CodeInvalidRequest, "invalid request: a message must be a JSON object"
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(line, &m) == nil && len(m.ID) > 0 && (m.ID[0] == '"' || m.ID[0] == '-' || '0' <= m.ID[0] && m.ID[0] <= '9') {
			id = m.ID
		}
		return id, jsonrpc.CodeInvalidRequest, "invalid request: " + err.Error()
	}
	return nil, 0, ""
}

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
