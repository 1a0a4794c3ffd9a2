package daemon

// This file is the shared daemon (docs/protocol.md §1, `agentd serve
// --listen=unix:PATH`): many LSP connections on a Unix socket, each served by
// lsp.Server.ServeConn on the one workspace registry of the Server's
// service.Service, so that a change made through one connection reaches
// every connection that has the folder open.
//
// Files beside the socket PATH:
//
//	PATH        the socket, mode 0600 (Windows: a DACL for the user alone), removed when the daemon ends, made
//	            again by the daemon when something else removed it
//	PATH.lock   held (flock) by the running daemon for its whole life;
//	            holds client.Info as JSON (pid, state dir, version)
//
// A PATH longer than a Unix socket address holds is bound and dialled
// through its directory (client.SocketAddr), so that any runtime dir works.
//
// The auto socket (client.AutoSocketPath) lives in a directory that only
// the user can enter (client.SecureDir); connections from another user id
// are refused all the same (client.PeerCred).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentd/agentd/caller"
	"github.com/agentd/agentd/lsp"
	"github.com/agentd/agentd/lsp/daemon/client"
	"github.com/agentd/agentd/lsp/jsonrpc"
)

// RunningError is returned by Listen when another daemon
// already serves the socket.
type RunningError struct {
	Path string
	Pid  int // 0 when unknown
}

func (e *RunningError) Error() string {
	who := "another daemon"
	if e.Pid > 0 {
		who = fmt.Sprintf("another daemon (pid %d)", e.Pid)
	}
	return fmt.Sprintf("%s already serves %s; connect to it with `agentd --remote=unix:%s`, or stop it first", who, e.Path, e.Path)
}

// Options configure Listen.
type Options struct {
	Path        string        // socket path, absolute
	IdleTimeout time.Duration // exit after this long without connections; 0 never
	StateDir    string        // recorded in Info for forwarders and shell commands
	Version     string        // the agentd version, recorded in Info
	Logger      *slog.Logger  // nil discards logs
}

// Daemon is a claimed daemon socket: Listen returns it listening,
// Serve serves it, Close releases it.
type Daemon struct {
	path    string
	idle    time.Duration
	version string
	log     *slog.Logger
	user    string // this process's user (client.CurrentUser)
	ln      *net.UnixListener
	lnAddr  func() // releases the listener's address (client.SocketAddr)
	ino     uint64 // the inode of ln's socket file
	foreign bool   // the socket path names another file than ln's (keepSocket)
	lock    *os.File

	closeOnce sync.Once
}

// lockWait bounds how long Listen waits for PATH.lock while its holder
// does not answer on the socket (a daemon finishing its exit, or one just
// starting that will answer soon).
const lockWait = 3 * time.Second

// Listen claims the socket at opts.Path: it takes PATH.lock, refuses
// when another daemon already answers there (*RunningError), removes a
// stale socket file left by a daemon that died, and listens with mode 0600
// (the directory, when missing, is created with mode 0700; the auto socket's
// directory must pass client.SecureDir).
func Listen(opts Options) (*Daemon, error) {
	path := opts.Path
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("socket path %q is not absolute", path)
	}
	dir := filepath.Dir(path)
	if path == client.AutoSocketPath() {
		if err := client.SecureDir(dir, true); err != nil {
			return nil, err
		}
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create the socket directory: %w", err)
	}
	user, err := client.CurrentUser()
	if err != nil {
		return nil, err
	}
	d := &Daemon{path: path, idle: opts.IdleTimeout, version: opts.Version, log: opts.Logger, user: user}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	lock, err := d.claimLock()
	if err != nil {
		return nil, err
	}
	d.lock = lock
	if err := d.listen(opts.StateDir); err != nil {
		d.releaseLock()
		return nil, err
	}
	d.log.Info("daemon listening", "socket", path, "pid", os.Getpid(), "version", opts.Version, "idleTimeout", opts.IdleTimeout)
	return d, nil
}

// claimLock takes PATH.lock. While another process holds it and nothing
// answers on the socket, it waits up to lockWait.
func (d *Daemon) claimLock() (*os.File, error) {
	f, err := client.WaitFlock(context.Background(), d.path+".lock", lockWait, func() bool { return answers(d.path) })
	if errors.Is(err, client.ErrLockHeld) {
		info, _ := client.ReadInfo(d.path)
		return nil, &RunningError{Path: d.path, Pid: info.Pid}
	}
	if err != nil {
		return nil, fmt.Errorf("cannot take the daemon lock: %w", err)
	}
	return f, nil
}

// answers reports whether something accepts connections on the socket.
func answers(path string) bool {
	addr, release, err := client.SocketAddr(path)
	if err != nil {
		return false
	}
	defer release()
	c, err := net.DialTimeout("unix", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// listen records the daemon's info, clears a stale socket file and listens.
// It runs with PATH.lock held.
func (d *Daemon) listen(stateDir string) error {
	data, _ := json.Marshal(client.Info{Pid: os.Getpid(), StateDir: stateDir, StartedAt: time.Now().UTC(), Version: d.version})
	if err := d.lock.Truncate(0); err != nil {
		return fmt.Errorf("cannot write %s: %w", d.lock.Name(), err)
	}
	if _, err := d.lock.WriteAt(data, 0); err != nil {
		return fmt.Errorf("cannot write %s: %w", d.lock.Name(), err)
	}
	if answers(d.path) { // a daemon that does not take PATH.lock, or another program
		return &RunningError{Path: d.path}
	}
	if fi, err := os.Lstat(d.path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return fmt.Errorf("%s exists and is not a socket: refusing to replace it; remove it or choose another path", d.path)
		}
		d.log.Info("removing a stale socket left by a daemon that ended", "socket", d.path)
		if err := os.Remove(d.path); err != nil {
			return fmt.Errorf("cannot remove the stale socket: %w", err)
		}
	}
	ln, release, ino, err := d.bind()
	if err != nil {
		return err
	}
	d.ln, d.lnAddr, d.ino = ln, release, ino
	return nil
}

// bind listens on the socket path, which must be free, with mode 0600, and
// returns the listener, the release of its address (client.SocketAddr) and the
// inode of the socket file it made.
func (d *Daemon) bind() (*net.UnixListener, func(), uint64, error) {
	addr, release, err := client.SocketAddr(d.path)
	if err != nil {
		return nil, nil, 0, err
	}
	// listenPrivate makes the socket private from the moment it exists
	// (its directory is private anyway when agentd made it); makePrivate
	// makes sure.
	ln, err := listenPrivate(addr)
	if err != nil {
		release()
		return nil, nil, 0, err
	}
	ino, err := socketInode(d.path)
	if err == nil {
		err = makePrivate(d.path)
	}
	if err != nil {
		ln.Close()
		release()
		return nil, nil, 0, err
	}
	return ln, release, ino, nil
}

// socketCheckInterval is how often a serving daemon checks that its socket
// path still names its listener (keepSocket).
const socketCheckInterval = time.Second

// keepSocket, called every socketCheckInterval while the daemon serves,
// binds the socket path again when its socket file was removed (by a
// cleaner of /tmp, say), so that new clients reach this daemon, which
// still holds PATH.lock, instead of finding no socket and a lock no new
// daemon can take. It returns the new listener, or nil when the old one
// stays: its file is in place, or the path now names something else (left
// alone, and no longer removed when the daemon stops).
func (d *Daemon) keepSocket() *net.UnixListener {
	ino, err := socketInode(d.path)
	switch {
	case err == nil && ino == d.ino:
		return nil
	case err == nil || !errors.Is(err, fs.ErrNotExist):
		if !d.foreign {
			d.foreign = true
			d.ln.SetUnlinkOnClose(false)
			d.log.Warn("the socket path no longer names this daemon's socket: leaving it alone; new clients cannot reach this daemon", "socket", d.path, "err", err)
		}
		return nil
	}
	ln, release, ino, err := d.bind()
	if err != nil {
		d.log.Warn("the socket file was removed and cannot be made again", "socket", d.path, "err", err)
		return nil
	}
	d.log.Warn("the socket file was removed while the daemon ran: listening on it again", "socket", d.path)
	d.foreign = false
	old, oldRelease := d.ln, d.lnAddr
	d.ln, d.lnAddr, d.ino = ln, release, ino
	old.SetUnlinkOnClose(false) // its path is the new socket's now
	old.Close()
	oldRelease()
	return ln
}

// Path is the socket path.
func (d *Daemon) Path() string { return d.path }

// Serve accepts connections and serves each with srv.ServeConn until ctx is
// done, the daemon has had no connection for its idle timeout, or a
// forwarder of a newer agentd asked it to hand over (agentd/handover, see
// DialCurrent: every ready client is then told with window/showMessage). It then
// stops listening (removing the socket file), ends the open connections and
// waits for them. PATH.lock stays held until Close, so that the caller can
// close the workspace registry before another daemon may start. While it
// serves, a socket file removed from under it is made again within about a
// second (keepSocket, docs/shared-daemon.md, "Troubleshooting"). The error
// is always nil.
func (d *Daemon) Serve(ctx context.Context, srv *lsp.Server) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &serving{
		d:           d,
		srv:         srv,
		idleSince:   time.Now(),
		idle:        make(chan struct{}, 1),
		handover:    make(chan client.HandoverParams, 1),
		acceptEnded: make(chan struct{}, 1),
	}
	s.opts = lsp.ConnOptions{Ungated: map[string]jsonrpc.Handler{client.HandoverMethod: serveHandover(s.handover)}}
	if d.idle > 0 {
		s.timer = time.AfterFunc(d.idle, func() {
			select {
			case s.idle <- struct{}{}:
			default:
			}
		})
		defer s.timer.Stop()
	}
	s.accepting.Add(1)
	go s.accept(ctx, d.ln)
	s.wait(ctx)
	s.mu.Lock()
	s.stopping = true
	s.mu.Unlock()
	d.ln.Close() // removes the socket file
	cancel()
	s.conns.Wait()
	s.accepting.Wait()
	return nil
}

// serving is one run of Serve: the listeners accepting connections, the
// connections being served, and their count, which drives the idle
// timeout.
type serving struct {
	d    *Daemon
	srv  *lsp.Server
	opts lsp.ConnOptions // of every connection: the handover method, ungated

	mu        sync.Mutex // guards the fields below, and d.ln while Serve runs (keepSocket)
	active    int        // connections being served
	idleSince time.Time  // when active last fell to 0
	stopping  bool       // Serve is stopping: no connection is served from now on
	timer     *time.Timer

	conns       sync.WaitGroup             // connections being served
	accepting   sync.WaitGroup             // accept loops
	idle        chan struct{}              // a tick of the idle timer; re-checked under mu
	handover    chan client.HandoverParams // a newer agentd asked for the socket
	acceptEnded chan struct{}              // the current listener was closed
}

// accept serves the connections of ln until it is closed: by Serve when it
// stops, or by keepSocket, which replaced it (d.ln, under mu).
func (s *serving) accept(ctx context.Context, ln *net.UnixListener) {
	defer s.accepting.Done()
	backoff := 5 * time.Millisecond
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || ctx.Err() != nil {
				s.mu.Lock()
				current := ln == s.d.ln
				s.mu.Unlock()
				if current {
					select {
					case s.acceptEnded <- struct{}{}:
					default:
					}
				}
				return
			}
			s.d.log.Warn("accept failed; retrying", "err", err, "in", backoff)
			time.Sleep(backoff)
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		pid, ok := s.d.peerAllowed(c)
		if !ok || !s.admit() {
			c.Close()
			continue
		}
		go s.serve(ctx, c, pid)
	}
}

// admit counts a new connection as served, unless Serve is stopping.
func (s *serving) admit() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return false
	}
	s.active++
	s.conns.Add(1) // under mu: Serve's Wait comes after stopping is set
	if s.timer != nil {
		s.timer.Stop()
	}
	return true
}

// serve serves one admitted connection of process pid, then closes it; the
// last connection to end starts the idle timer again.
func (s *serving) serve(ctx context.Context, c *net.UnixConn, pid int) {
	defer s.conns.Done()
	s.d.serveConn(ctx, s.srv, c, s.d.callerOf(pid, s.opts))
	c.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active--
	if s.active == 0 && s.timer != nil {
		s.idleSince = time.Now()
		s.timer.Reset(s.d.idle)
	}
}

// wait returns when Serve is to stop: ctx is done, the listener was
// closed, a newer agentd asked for the socket (every ready client is told
// why its connection ends), or no connection came for the idle timeout.
// Meanwhile it makes the socket file again when it was removed.
func (s *serving) wait(ctx context.Context) {
	check := time.NewTicker(socketCheckInterval)
	defer check.Stop()
	for {
		select {
		case <-ctx.Done():
			s.d.log.Info("daemon stopping", "reason", context.Cause(ctx))
			return
		case <-s.acceptEnded:
			return
		case <-check.C:
			s.mu.Lock()
			if ln := s.d.keepSocket(); ln != nil {
				s.accepting.Add(1)
				go s.accept(ctx, ln)
			}
			s.mu.Unlock()
		case p := <-s.handover:
			s.d.log.Info("daemon stopping: handing over to a newer agentd", "version", p.Version, "forwarderPid", p.Pid)
			s.srv.TellReady(fmt.Sprintf("agentd: agentd %s replaces this shared daemon (agentd %s): this connection ends now, "+
				"and agentd started again reaches the new daemon (your editor restarts it; if it does not, restart agentd)", p.Version, s.d.version))
			return
		case <-s.idle:
			if s.quiet() {
				s.d.log.Info("daemon stopping: no connection", "for", s.d.idle)
				return
			}
		}
	}
}

// quiet reports, on a tick of the idle timer, whether no connection has
// been open for the idle timeout; then Serve is stopping. A tick sent just
// before a connection came and went is stale.
func (s *serving) quiet() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	quiet := s.active == 0 && time.Since(s.idleSince) >= s.d.idle
	if quiet {
		s.stopping = true
	}
	return quiet
}

// closeLater is a daemon connection as ServeConn sees it: its Close only
// ends reading (which stops the connection's read loop) and leaves the
// socket open until ServeConn has returned, having released the client's
// folders and settled its turns. A forwarder that sees the socket close can
// then count on that cleanup, as an editor can on a stdio process's exit.
// Reading returns first the bytes the daemon read to see the connection's
// first message (serveConn).
type closeLater struct {
	*net.UnixConn
	first []byte
}

func (c *closeLater) Read(p []byte) (int, error) {
	if len(c.first) > 0 {
		n := copy(p, c.first)
		c.first = c.first[n:]
		return n, nil
	}
	return c.UnixConn.Read(p)
}

func (c *closeLater) Close() error { return c.CloseRead() }

// peerAllowed refuses a connection from another user (client.PeerCred:
// the uid on Unix, the SID of the peer process's token on Windows); pid
// is the peer's process.
func (d *Daemon) peerAllowed(c *net.UnixConn) (pid int, ok bool) {
	user, pid, err := client.PeerCred(c)
	if err != nil {
		d.log.Warn("refused a connection: cannot read its credentials", "err", err)
		return 0, false
	}
	if user != d.user {
		d.log.Warn("refused a connection from another user", "user", user, "pid", pid, "daemonUser", d.user)
		return 0, false
	}
	return pid, true
}

// callerOf is opts for a connection whose peer is process pid: its Caller
// is who pid acts for, looked at once, as the connection starts. The
// editor's pipes a forwarder hands over are served as the forwarder's
// (serveConn): the editor started the forwarder.
func (d *Daemon) callerOf(pid int, opts lsp.ConnOptions) lsp.ConnOptions {
	opts.Caller = caller.Of(pid)
	d.log.Debug("connection accepted", "pid", pid, "caller", opts.Caller.String())
	return opts
}

// Close stops listening (removing the socket file) and releases PATH.lock.
// Call it after Serve has returned and the registry is closed; it may be
// called more than once.
func (d *Daemon) Close() error {
	d.closeOnce.Do(func() {
		if d.ln != nil {
			d.ln.Close()
			d.lnAddr()
		}
		d.releaseLock()
	})
	return nil
}

// releaseLock empties PATH.lock (its pid is no longer running a daemon) and
// releases it. The file itself stays: removing a lock file that another
// process may be opening would let two daemons lock two different files.
func (d *Daemon) releaseLock() {
	if d.lock == nil {
		return
	}
	_ = d.lock.Truncate(0)
	d.lock.Close()
	d.lock = nil
}
