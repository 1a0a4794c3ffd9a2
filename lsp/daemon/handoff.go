//go:build unix

package daemon

// This file is the handoff of an editor's pipes to the shared daemon
// (docs/shared-daemon.md, "Handoff"). A forwarder whose stdin and stdout
// are pipes or sockets sends both descriptors to the daemon (SCM_RIGHTS)
// with the request agentd/adopt, the first message on its connection,
// before it has read a byte of stdin. The daemon answers {"adopted":
// true} and serves the editor's LSP session on those descriptors itself,
// as it serves a socket connection; the connection stays open as the
// control channel, on which the daemon sends the session's exit code
// (agentd/adoptedEnded) when it ends, and whose end from the forwarder's
// side ends the session. A daemon that refuses (an error answer, which
// is also what an agentd without the request answers) serves the
// connection as an ordinary one, and the forwarder relays on it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentd/agentd/lsp"
	"github.com/agentd/agentd/lsp/daemon/client"
	"github.com/agentd/agentd/lsp/jsonrpc"
)

// adoptMethod is the request a forwarder sends, as the first message on
// its connection and with its stdin and stdout as SCM_RIGHTS, to have the
// daemon serve them.
const adoptMethod = "agentd/adopt"

// adoptedEndedMethod is the notification the daemon sends on the control
// connection when the adopted session has ended; the forwarder exits with
// its code.
const adoptedEndedMethod = "agentd/adoptedEnded"

// adoptParams are the params of agentd/adopt.
type adoptParams struct {
	Pid int `json:"pid"` // the forwarder's pid, as it sees itself
}

// adoptResult is the answer to agentd/adopt when the daemon serves the
// descriptors.
type adoptResult struct {
	Adopted bool `json:"adopted"`
}

// adoptedEndedParams are the params of agentd/adoptedEnded.
type adoptedEndedParams struct {
	Code int `json:"code"` // the forwarder's exit code: 0 or 1
}

// adoptFds is the number of descriptors agentd/adopt carries: stdin, then
// stdout.
const adoptFds = 2

// maxFirstBytes is the most the daemon reads of a connection to see
// whether its first message is agentd/adopt; a first message that is
// longer is none.
const maxFirstBytes = 4 << 10

// firstMessage is what the daemon read of a connection before serving it
// (readFirst).
type firstMessage struct {
	read      []byte          // every byte read, to be served first when the message is not taken
	used      int             // of read, the bytes of an agentd/adopt request; 0 when the first message is none
	id        json.RawMessage // that request's id
	params    json.RawMessage // and params
	fds       []int           // descriptors received with the bytes read
	truncated bool            // the kernel dropped descriptors (MSG_CTRUNC): more were sent than fit, or the daemon has too many open
}

// errFirstTooLong ends readFirst after maxFirstBytes.
var errFirstTooLong = errors.New("first message too long for agentd/adopt")

// rightsReader reads a connection with recvmsg, keeping every byte read
// and the descriptors sent with them, at most maxFirstBytes in all.
type rightsReader struct {
	c   *net.UnixConn
	m   *firstMessage
	oob []byte
}

func (r *rightsReader) Read(p []byte) (int, error) {
	room := maxFirstBytes - len(r.m.read)
	if room <= 0 {
		return 0, errFirstTooLong
	}
	p = p[:min(len(p), room)]
	n, oobn, flags, _, err := r.c.ReadMsgUnix(p, r.oob)
	n, oobn = max(n, 0), max(oobn, 0) // -1 on some errors
	if oobn > 0 {
		r.m.fds = append(r.m.fds, parseRights(r.oob[:oobn])...)
	}
	if flags&syscall.MSG_CTRUNC != 0 {
		r.m.truncated = true
	}
	r.m.read = append(r.m.read, p[:n]...)
	return n, err
}

// parseRights returns the descriptors of the SCM_RIGHTS messages in oob.
func parseRights(oob []byte) []int {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for i := range msgs {
		if got, err := syscall.ParseUnixRights(&msgs[i]); err == nil {
			fds = append(fds, got...)
		}
	}
	return fds
}

// byteCounter counts the bytes written to it.
type byteCounter struct{ n int }

func (b *byteCounter) Write(p []byte) (int, error) {
	b.n += len(p)
	return len(p), nil
}

// readFirst reads the first message of c, with the descriptors sent with
// it, with the framing reader every connection is read with, and says
// whether it is an agentd/adopt request (m.id set). It reads no further
// than that message and at most maxFirstBytes, and ends when ctx does.
func readFirst(ctx context.Context, c *net.UnixConn) *firstMessage {
	m := &firstMessage{}
	stop := context.AfterFunc(ctx, func() { c.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	var header byteCounter
	r := jsonrpc.NewReader(&rightsReader{c: c, m: m, oob: make([]byte, syscall.CmsgSpace(4*(adoptFds+2)))}, jsonrpc.ReaderOptions{Echo: &header})
	n, err := r.ReadHeader()
	if err != nil || n > maxFirstBytes {
		return m
	}
	body, err := r.ReadBody(n)
	if err != nil {
		return m
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != adoptMethod || len(msg.ID) == 0 || string(msg.ID) == "null" {
		return m
	}
	m.used, m.id, m.params = header.n+int(n), msg.ID, msg.Params
	return m
}

// closeFds closes descriptors the daemon received and does not keep.
func closeFds(fds []int) {
	for _, fd := range fds {
		syscall.Close(fd)
	}
}

// serveConn serves one accepted connection: the editor's own pipes when
// its first message is agentd/adopt and the daemon takes them (adopt),
// else the connection itself with srv.ServeConn, beginning with the bytes
// read to see its first message. Descriptors it was sent and does not
// keep are closed.
func (d *Daemon) serveConn(ctx context.Context, srv *lsp.Server, c *net.UnixConn, opts lsp.ConnOptions) {
	m := readFirst(ctx, c)
	if m.id == nil {
		closeFds(m.fds)
		srv.ServeConn(ctx, &closeLater{UnixConn: c, first: m.read}, opts)
		return
	}
	rest := m.read[m.used:]
	p, err := d.adopt(ctx, c, m, rest)
	if err != nil {
		d.log.Info("not serving a forwarder's stdin and stdout itself; it relays them", "err", err)
		if writeControl(c, m.id, nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "%v", err)) != nil {
			return
		}
		srv.ServeConn(ctx, &closeLater{UnixConn: c, first: rest}, opts)
		return
	}
	if err := writeControl(c, m.id, adoptResult{Adopted: true}, nil); err != nil {
		d.log.Info("the forwarder left before its stdin and stdout were adopted", "err", err)
		p.finish()
		return
	}
	d.serveAdopted(ctx, srv, c, p, opts)
}

// adopt checks an agentd/adopt request and takes its descriptors: the
// daemon is not stopping, exactly two descriptors arrived, nothing
// followed the request, the forwarder is the process the socket says (so
// the processId its editor sends means the same process here), and the
// first descriptor is a pipe or socket open for reading, the second one
// open for writing. Every descriptor is closed when it refuses.
func (d *Daemon) adopt(ctx context.Context, c *net.UnixConn, m *firstMessage, rest []byte) (*adoptedPipes, error) {
	refuse := func(format string, args ...any) (*adoptedPipes, error) {
		closeFds(m.fds)
		return nil, fmt.Errorf(format, args...)
	}
	var params adoptParams
	switch {
	case ctx.Err() != nil:
		return refuse("the daemon is stopping")
	case m.truncated:
		return refuse("%s: the daemon could not receive every descriptor sent (more than %d, or the daemon has too many open)", adoptMethod, adoptFds)
	case len(m.fds) != adoptFds:
		return refuse("%s carries %d descriptors, want %d (stdin, then stdout)", adoptMethod, len(m.fds), adoptFds)
	case len(rest) > 0:
		return refuse("%d bytes followed %s before its answer", len(rest), adoptMethod)
	case json.Unmarshal(m.params, &params) != nil || params.Pid <= 0:
		return refuse("%s needs params {pid: number}", adoptMethod)
	}
	_, pid, err := client.PeerCred(c)
	if err != nil {
		return refuse("cannot read the forwarder's credentials: %v", err)
	}
	if pid != params.Pid {
		return refuse("the forwarder is pid %d here and pid %d to itself: it runs in another PID namespace, where its editor's processId is another process", pid, params.Pid)
	}
	for i, fd := range m.fds {
		if err := checkStdio(fd, i == 0); err != nil {
			return refuse("%s: %v", []string{"stdin", "stdout"}[i], err)
		}
		if toDaemon(fd, c) {
			return refuse("%s: a connection to this daemon's own socket, not an editor's", []string{"stdin", "stdout"}[i])
		}
	}
	p := &adoptedPipes{}
	for i, fd := range m.fds {
		f, wasBlocking, err := pollable(fd, i == 0, []string{"stdin", "stdout"}[i])
		if err != nil {
			closeFds(m.fds[i:])
			p.finish()
			return nil, err
		}
		p.files[i], p.blocking[i] = f, wasBlocking
	}
	return p, nil
}

// checkStdio checks that fd is a pipe or a socket open for reading (in)
// or writing.
func checkStdio(fd int, in bool) error {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return err
	}
	if t := st.Mode & syscall.S_IFMT; t != syscall.S_IFIFO && t != syscall.S_IFSOCK {
		return errors.New("not a pipe or a socket")
	}
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
	if errno != 0 {
		return errno
	}
	switch mode := flags & syscall.O_ACCMODE; {
	case in && mode == syscall.O_WRONLY:
		return errors.New("not open for reading")
	case !in && mode == syscall.O_RDONLY:
		return errors.New("not open for writing")
	}
	return nil
}

// toDaemon reports whether fd is a socket connected to the daemon's own
// socket, the one c was accepted on (its peer address is the daemon's
// address): served as an editor's stdin or stdout, the daemon would hold
// both ends of one of its connections, and the session would never see
// its client go.
func toDaemon(fd int, c *net.UnixConn) bool {
	sa, err := syscall.Getpeername(fd)
	peer, ok := sa.(*syscall.SockaddrUnix)
	return err == nil && ok && peer.Name != "" && peer.Name == c.LocalAddr().String()
}

// pollable makes fd an *os.File on the runtime's poller, non-blocking, so
// that closing it ends a read or write waiting on it (a blocking one would
// keep the session, and the daemon's stop, waiting for the editor). The
// mode belongs to the open file description, which the forwarder's own
// descriptor shares (and maybe the editor's other children): a pipe is
// opened anew (/proc/self/fd/N, for reading when in, else for writing), so
// that the mode is set on a description of the daemon's own, and fd is
// closed; a socket, which cannot be opened anew, is switched to
// non-blocking, and wasBlocking says to switch it back (finish). On error
// fd is left open.
func pollable(fd int, in bool, name string) (f *os.File, wasBlocking bool, err error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, false, err
	}
	if st.Mode&syscall.S_IFMT == syscall.S_IFIFO {
		mode := syscall.O_WRONLY
		if in {
			mode = syscall.O_RDONLY
		}
		own, err := syscall.Open(fmt.Sprintf("/proc/self/fd/%d", fd), mode|syscall.O_NONBLOCK|syscall.O_CLOEXEC|syscall.O_NOCTTY, 0)
		if err != nil { // ENXIO for stdout: the editor has closed its end already
			return nil, false, fmt.Errorf("%s: cannot open the pipe anew: %w", name, err)
		}
		syscall.Close(fd)
		return os.NewFile(uintptr(own), name), false, nil
	}
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
	if errno != 0 {
		return nil, false, errno
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		return nil, false, err
	}
	return os.NewFile(uintptr(fd), name), flags&syscall.O_NONBLOCK == 0, nil
}

// adoptedPipes are the editor's stdin and stdout as the daemon serves
// them: the io.ReadWriteCloser of the session's ServeConn, noting how the
// session's input and output ended.
type adoptedPipes struct {
	files       [adoptFds]*os.File // stdin, stdout; nil until made
	blocking    [adoptFds]bool     // a socket that was blocking when received
	closed      [adoptFds]sync.Once
	dups        [adoptFds]int // of a blocking socket, kept past its close to switch it back (finish); 0 none
	inputEnded  atomic.Bool   // reading stdin reached its end
	writeFailed atomic.Bool   // writing stdout failed (the editor closed it)
}

func (p *adoptedPipes) Read(b []byte) (int, error) {
	n, err := p.files[0].Read(b)
	if err == io.EOF {
		p.inputEnded.Store(true)
	}
	return n, err
}

func (p *adoptedPipes) Write(b []byte) (int, error) {
	n, err := p.files[1].Write(b)
	if err != nil {
		p.writeFailed.Store(true)
	}
	return n, err
}

// SetWriteDeadline sets the deadline of writes to stdout: the session's
// end releases a write blocked on an editor that does not read (jsonrpc's
// Conn.Run).
func (p *adoptedPipes) SetWriteDeadline(t time.Time) error { return p.files[1].SetWriteDeadline(t) }

// SyscallConn is stdout's: the session's end sees the editor read what is
// left (jsonrpc's Conn.Run).
func (p *adoptedPipes) SyscallConn() (syscall.RawConn, error) { return p.files[1].SyscallConn() }

// Close ends reading, which ends the session's read loop; stdout stays
// open for what is still queued, until finish.
func (p *adoptedPipes) Close() error {
	p.close(0)
	return nil
}

// close closes descriptor i, once; of a socket to switch back to blocking
// it first keeps a duplicate (the daemon's stdin is /dev/null, so a
// duplicate is never descriptor 0).
func (p *adoptedPipes) close(i int) {
	p.closed[i].Do(func() {
		f := p.files[i]
		if f == nil {
			return
		}
		if p.blocking[i] {
			if raw, err := f.SyscallConn(); err == nil {
				raw.Control(func(fd uintptr) {
					if dup, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_DUPFD_CLOEXEC, 0); errno == 0 {
						p.dups[i] = int(dup)
					}
				})
			}
		}
		f.Close()
	})
}

// finish closes both descriptors, once the session has ended, and then,
// when every read and write on them has stopped, switches a socket that
// was blocking when received back to blocking (through its duplicate: the
// mode is the file description's, shared with the forwarder's own
// descriptor).
func (p *adoptedPipes) finish() {
	for i := range p.files {
		p.close(i)
	}
	for _, fd := range p.dups {
		if fd > 0 {
			syscall.SetNonblock(fd, false)
			syscall.Close(fd)
		}
	}
}

// serveAdopted serves the editor's session on p, as on a socket connection
// and watching the processId of its initialize, while c is its control
// connection: anything the forwarder sends on it, or its end, ends the
// session (the forwarder was stopped, or died). When the session has
// ended, c is sent its exit code, that of the forwarder before the
// handoff: after exit, 0 when shutdown came first, else 1; 0 when the
// editor's input ended; 1 when writing to the editor failed or the session
// ended otherwise. When the daemon stops, c is closed without a code: the
// forwarder says it lost the daemon.
func (d *Daemon) serveAdopted(ctx context.Context, srv *lsp.Server, c *net.UnixConn, p *adoptedPipes, opts lsp.ConnOptions) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	controlEnded := make(chan struct{})
	go func() {
		defer close(controlEnded)
		var b [512]byte
		n, err := c.Read(b[:])
		switch {
		case n > 0:
			d.log.Warn("the forwarder of an adopted session sent bytes on its control connection; ending the session", "bytes", n)
		case sctx.Err() == nil:
			d.log.Debug("the forwarder of an adopted session ended it", "err", err)
		}
		cancel()
	}()
	var exited atomic.Bool
	opts.WatchParent = true
	opts.OnExit = func() { exited.Store(true) }
	code := srv.ServeConn(sctx, p, opts)
	switch {
	case exited.Load(): // ServeConn's code: 0 after shutdown, else 1
	case p.writeFailed.Load():
		code = 1
	case p.inputEnded.Load():
		code = 0
	default:
		code = 1
	}
	p.finish()
	if ctx.Err() == nil {
		if err := writeControl(c, nil, adoptedEndedParams{Code: code}, nil); err != nil {
			d.log.Debug("the exit code of an adopted session was not sent", "err", err)
		}
	}
	c.Close()
	<-controlEnded
}

// writeControl writes one message on a control connection: the answer to
// the request id (result or rpcErr), or, with id nil, the notification
// agentd/adoptedEnded with params result. It never waits long: a control
// connection carries one or two small messages.
func writeControl(c *net.UnixConn, id json.RawMessage, result any, rpcErr *jsonrpc.Error) error {
	msg := map[string]any{"jsonrpc": "2.0"}
	switch {
	case id == nil:
		msg["method"], msg["params"] = adoptedEndedMethod, result
	case rpcErr != nil:
		msg["id"], msg["error"] = id, rpcErr
	default:
		msg["id"], msg["result"] = id, result
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	c.SetWriteDeadline(time.Now().Add(forwardDrain))
	defer c.SetWriteDeadline(time.Time{})
	_, err = c.Write(jsonrpc.Frame(body))
	return err
}

// Adoptable reports whether f, the forwarder's stdin or stdout, is a pipe
// or a socket, which the daemon may serve itself (Handoff): a terminal,
// a regular file or /dev/null is relayed.
func Adoptable(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0
}

// Handoff asks the daemon on conn to serve the editor's stdin and stdout
// itself (in and out: pipes or sockets, see Adoptable; not read yet), and,
// when it does, waits until the session it serves has ended. It returns:
//   - relay not nil: the daemon refused (it is stopping, cannot take them,
//     or is an agentd from before the handoff, which does not know the
//     request), or answered something else: nothing of in was read, and
//     the forwarder relays on relay with Forward as before;
//   - the daemon adopted them and sent the session's exit code: that code
//     and nil;
//   - the daemon adopted them and closed the connection without a code
//     (it was killed or stopped, or handed over to a newer agentd): 1 and
//     an error that says so;
//   - ctx ends (a signal): Handoff ends the control connection, which ends
//     the session, waits (at most 3 s) until the daemon has closed it, and
//     returns 1 and nil;
//   - the daemon ended the connection before it answered (it was dying,
//     stopping on its idle timeout, or handing over when dialled: it
//     adopted nothing): Handoff connects again with redial (when not nil;
//     at most 3 times, 0.1 s apart and more) and asks again;
//   - no answer within 10 s (the daemon is stopped or stuck): 1 and a
//     *client.SilentError.
//
// Handoff closes conn, and the connections redial made, unless it returns
// one as relay.
func Handoff(ctx context.Context, in, out *os.File, conn *net.UnixConn, redial Redial, log *slog.Logger) (code int, relay *net.UnixConn, err error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	for attempt := 1; ; attempt++ {
		a := askAdopt(conn, in, out)
		select {
		case ans := <-a.answer:
			switch {
			case ans.adopted:
				log.Debug("the shared daemon serves this editor's stdin and stdout itself")
				return a.control(ctx, log)
			case ans.err == nil:
				log.Debug("the shared daemon does not serve this editor's stdin and stdout itself; relaying them", "reason", ans.refused)
				return 0, conn, nil
			}
			a.silent.Stop()
			conn.Close()
			if redial == nil || attempt > maxRedials {
				return 1, nil, fmt.Errorf("the daemon ended the connection before it answered %s: %w", adoptMethod, ans.err)
			}
			log.Info("the daemon ended the connection before it answered; connecting again", "err", ans.err, "attempt", attempt)
			select {
			case <-ctx.Done():
				return 1, nil, nil
			case <-time.After(time.Duration(attempt-1) * 100 * time.Millisecond):
			}
			next, rerr := redial(ctx)
			if rerr != nil {
				return 1, nil, fmt.Errorf("the daemon ended the connection before it answered %s (%v), and connecting again failed: %w", adoptMethod, ans.err, rerr)
			}
			conn = next
		case <-a.silent.C:
			conn.Close()
			return 1, nil, &client.SilentError{What: adoptMethod, Wait: forwardInitWait}
		case <-ctx.Done():
			// The daemon may adopt them yet: the control connection's end
			// then ends the session at once.
			a.silent.Stop()
			return a.end(log, "agentd was told to stop", false)
		}
	}
}

// adoption is one agentd/adopt request on a connection and what follows.
type adoption struct {
	conn   *net.UnixConn
	r      *jsonrpc.Reader // reads conn a byte at a time: nothing past the answer is read
	answer chan adoptAnswer
	ended  chan adoptAnswer // the control connection's last word after adoption
	silent *time.Timer
}

// adoptAnswer is the daemon's answer to agentd/adopt: adopted, refused
// with a reason, or err when the connection ended before an answer; later
// on ended, the session's code, or err when the connection ended without
// one.
type adoptAnswer struct {
	adopted bool
	refused string
	code    int
	err     error
}

// oneByte reads a byte at a time, so that a reader on it never takes more
// than the messages it returns.
type oneByte struct{ r io.Reader }

func (o oneByte) Read(p []byte) (int, error) { return o.r.Read(p[:min(len(p), 1)]) }

// askAdopt sends agentd/adopt with in and out on conn and reads the
// answer (then, once adopted, the exit code) in the background.
func askAdopt(conn *net.UnixConn, in, out *os.File) *adoption {
	a := &adoption{conn: conn, r: jsonrpc.NewReader(oneByte{conn}, jsonrpc.ReaderOptions{}),
		answer: make(chan adoptAnswer, 1), ended: make(chan adoptAnswer, 1), silent: time.NewTimer(forwardInitWait)}
	id := json.RawMessage(`"adopt"`)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": adoptMethod, "params": adoptParams{Pid: os.Getpid()}})
	fds, err := descriptors(in, out)
	if err == nil {
		_, _, err = conn.WriteMsgUnix(jsonrpc.Frame(body), syscall.UnixRights(fds...), nil)
	}
	if err != nil {
		a.answer <- adoptAnswer{err: err}
		return a
	}
	go func() {
		ans := a.readAnswer(id)
		a.answer <- ans
		if ans.adopted {
			a.ended <- a.readEnd()
		}
	}()
	return a
}

// descriptors returns the descriptor numbers of files, without changing
// their mode (as File.Fd would).
func descriptors(files ...*os.File) ([]int, error) {
	fds := make([]int, 0, len(files))
	for _, f := range files {
		raw, err := f.SyscallConn()
		if err != nil {
			return nil, err
		}
		if err := raw.Control(func(fd uintptr) { fds = append(fds, int(fd)) }); err != nil {
			return nil, err
		}
	}
	return fds, nil
}

// readAnswer reads the daemon's answer to the request id.
func (a *adoption) readAnswer(id json.RawMessage) adoptAnswer {
	body, err := a.next()
	if err != nil {
		return adoptAnswer{err: err}
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Result *adoptResult    `json:"result"`
		Error  *jsonrpc.Error  `json:"error"`
	}
	switch {
	case json.Unmarshal(body, &m) != nil || string(m.ID) != string(id):
		return adoptAnswer{refused: "an unexpected answer"}
	case m.Error != nil:
		return adoptAnswer{refused: m.Error.Message}
	case m.Result == nil || !m.Result.Adopted:
		return adoptAnswer{refused: "an answer other than adopted"}
	}
	return adoptAnswer{adopted: true}
}

// readEnd reads the control connection until agentd/adoptedEnded or its
// end.
func (a *adoption) readEnd() adoptAnswer {
	for {
		body, err := a.next()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				err = errors.New("the daemon closed the connection")
			}
			return adoptAnswer{err: err}
		}
		var m struct {
			Method string             `json:"method"`
			Params adoptedEndedParams `json:"params"`
		}
		if json.Unmarshal(body, &m) == nil && m.Method == adoptedEndedMethod {
			return adoptAnswer{code: m.Params.Code}
		}
	}
}

// next reads the next message body on the connection, skipping broken
// framing.
func (a *adoption) next() ([]byte, error) {
	for {
		n, err := a.r.ReadHeader()
		var fe *jsonrpc.FramingError
		if errors.As(err, &fe) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n > maxFirstBytes {
			if err := a.r.CopyBody(io.Discard, n); err != nil {
				return nil, err
			}
			continue
		}
		return a.r.ReadBody(n)
	}
}

// control waits, once the daemon has adopted the editor's stdin and
// stdout, for the session's end (Handoff).
func (a *adoption) control(ctx context.Context, log *slog.Logger) (int, *net.UnixConn, error) {
	a.silent.Stop()
	select {
	case e := <-a.ended:
		a.conn.Close()
		if e.err != nil {
			return 1, nil, e.err
		}
		return e.code, nil, nil
	case <-ctx.Done():
		return a.end(log, "agentd was told to stop", true)
	}
}

// end ends the control connection from the forwarder's side, which ends
// an adopted session, and waits at most forwardDrain for the daemon to
// close it: by then the daemon has finished the session (released the
// editor's folders, paused a goal-driven turn left open). answered: the
// answer to agentd/adopt was adopted; else it is still to come.
func (a *adoption) end(log *slog.Logger, after string, answered bool) (int, *net.UnixConn, error) {
	defer a.conn.Close()
	a.conn.CloseWrite()
	wait := time.NewTimer(forwardDrain)
	defer wait.Stop()
	if !answered {
		select {
		case ans := <-a.answer:
			if !ans.adopted {
				return 1, nil, nil
			}
		case <-wait.C:
			log.Warn("the daemon did not close the connection after "+after, "waited", forwardDrain)
			return 1, nil, nil
		}
	}
	select {
	case <-a.ended:
	case <-wait.C:
		log.Warn("the daemon did not close the connection after "+after, "waited", forwardDrain)
	}
	return 1, nil, nil
}
