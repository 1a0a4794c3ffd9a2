package jsonrpc

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"strconv"
)

const (
	maxHeaderLine = 1024 // bytes of one header line kept; the rest of a longer line is dropped
	headerName    = "content-length:"
)

// framed returns body after its header block: "Content-Length: N\r\n\r\n".
func framed(body []byte) []byte {
	f := fmt.Appendf(make([]byte, 0, len(body)+32), "Content-Length: %d\r\n\r\n", len(body))
	return append(f, body...)
}

// Frame returns body framed as one message, as Conn writes it: its header
// block "Content-Length: N\r\n\r\n", then body. For a peer that writes
// the odd message itself (the shared daemon's control messages, package
// lsp/daemon).
func Frame(body []byte) []byte { return framed(body) }

// FramingError is a broken header block: no Content-Length header, a
// length that is not a decimal number of bytes, or a line that is not a
// header. Conn answers it with -32700 (id null); the Reader skips to the
// next Content-Length header.
type FramingError struct{ msg string }

func (e *FramingError) Error() string { return "parse error: " + e.msg }

// ReaderOptions configure a Reader. The zero value is ready to use.
type ReaderOptions struct {
	// Echo, when not nil, gets every byte the Reader takes from its input
	// outside bodies (header blocks, blank lines, bytes skipped after
	// broken framing) as soon as it has arrived, before it is parsed, even
	// in the middle of a line. Bodies are the caller's (ReadBody, CopyBody).
	Echo io.Writer
	// Logger gets a warning for bytes dropped before a Content-Length
	// header; nil discards it.
	Logger *slog.Logger
}

// Reader reads messages framed with Content-Length headers: ReadHeader,
// then ReadBody or CopyBody with the length it returned. It is the one
// framing reader of agentd: Conn reads with it, and so does the shared
// daemon's forwarder (package lsp/daemon), which must follow the same
// messages as the daemon through any input. Not safe for concurrent use.
type Reader struct {
	br      *bufio.Reader
	line    []byte // header line buffer, reused by readLine
	resync  bool   // the last ReadHeader returned a *FramingError
	echo    io.Writer
	echoErr error // the first failed write to echo
	log     *slog.Logger
}

// NewReader returns a Reader of r with a 64 KiB buffer.
func NewReader(r io.Reader, opts ReaderOptions) *Reader {
	rd := &Reader{br: bufio.NewReaderSize(r, 64<<10), line: make([]byte, 0, maxHeaderLine), echo: opts.Echo, log: opts.Logger}
	if rd.log == nil {
		rd.log = slog.New(slog.DiscardHandler)
	}
	return rd
}

// ReadHeader reads the header block of the next message and returns the
// length of its body in bytes. Blank lines between messages are skipped;
// Content-Type and unknown headers are ignored; of several Content-Length
// headers (any case) the last counts. "Content-Length:" found inside a
// line drops what came before it on that line: this finds the next header
// after leftover bytes of a body whose length was miscounted. A line keeps
// at most its first 1024 bytes (after such a header name).
//
// It returns io.EOF at a clean end of input (between messages); an error
// wrapping io.ErrUnexpectedEOF when input ends inside a header block or
// while skipping; a *FramingError for a block without a length, a bad
// length or a line without a colon, after which the next call first skips
// input up to the next line with a Content-Length header; an error writing
// to ReaderOptions.Echo as it is; else the read error.
func (r *Reader) ReadHeader() (int64, error) {
	resync := r.resync
	r.resync = false
	n, err := r.readHeader(resync)
	if _, ok := err.(*FramingError); ok {
		r.resync = true
	}
	return n, err
}

func (r *Reader) readHeader(resync bool) (int64, error) {
	length := int64(-1)
	started := resync // whether any part of this message has been read
	for {
		line, skipped, err := r.readLine()
		switch {
		case err == nil:
		case r.echoErr != nil:
			return 0, r.echoErr
		case err == io.EOF && !started:
			return 0, io.EOF
		default:
			return 0, unexpectedEOF(err)
		}
		isLength := len(line) >= len(headerName) && bytes.EqualFold(line[:len(headerName)], []byte(headerName))
		if resync && !isLength {
			continue
		}
		resync = false
		if len(line) == 0 {
			if !started {
				continue // blank lines between messages
			}
			if length < 0 {
				return 0, &FramingError{"missing Content-Length header"}
			}
			return length, nil
		}
		started = true
		if !isLength {
			if !bytes.Contains(line, []byte(":")) {
				return 0, &FramingError{fmt.Sprintf("malformed header line %q", line)}
			}
			continue // Content-Type and unknown headers
		}
		if skipped > 0 {
			r.log.Warn("jsonrpc: discarded bytes before a Content-Length header", "bytes", skipped)
		}
		value := bytes.TrimSpace(line[len(headerName):])
		n, err := strconv.ParseInt(string(value), 10, 64)
		if err != nil || n < 0 {
			return 0, &FramingError{fmt.Sprintf("invalid Content-Length %q", value)}
		}
		length = n
	}
}

// readLine reads one line without its "\r\n" or "\n", keeping at most
// maxHeaderLine bytes. If "Content-Length:" (any case) occurs inside the line,
// everything before it is dropped and counted in skipped. What has arrived
// of the line goes to echo before it is parsed. It returns io.EOF only when
// input ends before the line's first byte.
func (r *Reader) readLine() (line []byte, skipped int64, err error) {
	line = r.line[:0]
	var n int64
	matched := 0 // length of the prefix of headerName just read
	for {
		if _, err := r.br.Peek(1); err != nil {
			if err == io.EOF && n > 0 {
				err = io.ErrUnexpectedEOF
			}
			return nil, 0, err
		}
		chunk, _ := r.br.Peek(r.br.Buffered())
		end := bytes.IndexByte(chunk, '\n')
		if end >= 0 {
			chunk = chunk[:end+1]
		}
		if r.echo != nil {
			if _, err := r.echo.Write(chunk); err != nil {
				r.echoErr = err
				return nil, 0, err
			}
		}
		text := chunk
		if end >= 0 {
			text = chunk[:end]
		}
		for _, b := range text {
			n++
			if len(line) < maxHeaderLine {
				line = append(line, b)
			}
			lb := b
			if 'A' <= lb && lb <= 'Z' {
				lb += 'a' - 'A'
			}
			// headerName has no proper prefix that is also its suffix, so a
			// mismatch can only restart the match at this byte.
			switch {
			case lb == headerName[matched]:
				matched++
			case lb == headerName[0]:
				matched = 1
			default:
				matched = 0
			}
			if matched == len(headerName) {
				skipped = n - int64(len(headerName))
				line = append(line[:0], headerName...)
				matched = 0
			}
		}
		r.br.Discard(len(chunk))
		if end >= 0 {
			r.line = line[:0]
			return bytes.TrimSuffix(line, []byte("\r")), skipped, nil
		}
	}
}

// ReadBody reads a body of n bytes, the length ReadHeader returned, into
// one new slice of n bytes: the caller bounds n first (Conn by
// MaxMessageBytes) and passes larger bodies with CopyBody. When input ends
// first it returns the bytes that came and an error wrapping
// io.ErrUnexpectedEOF.
func (r *Reader) ReadBody(n int64) ([]byte, error) {
	body := make([]byte, n)
	got, err := io.ReadFull(r.br, body)
	if err != nil {
		return body[:got], unexpectedEOF(err)
	}
	return body, nil
}

// CopyBody copies a body of n bytes, the length ReadHeader returned, to w
// (io.Discard drops it) without holding it whole. Its error is w's, or an
// error wrapping io.ErrUnexpectedEOF when input ends first, or the read
// error.
func (r *Reader) CopyBody(w io.Writer, n int64) error {
	for n > 0 {
		if _, err := r.br.Peek(1); err != nil {
			return unexpectedEOF(err)
		}
		chunk, _ := r.br.Peek(int(min(int64(r.br.Buffered()), n)))
		if _, err := w.Write(chunk); err != nil {
			return err
		}
		r.br.Discard(len(chunk))
		n -= int64(len(chunk))
	}
	return nil
}

// unexpectedEOF wraps a read error; io.EOF, which comes inside a message
// here, becomes io.ErrUnexpectedEOF.
func unexpectedEOF(err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("jsonrpc: reading message: %w", err)
}
