package client

// This file dials the shared daemon, starting one under daemon.lock when
// none answers (DialOrStart), and the file locks of agentd's processes.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/agentd/agentd/workspace/wsfolder"
)

// ErrNoDaemon is wrapped by the errors of Dial and Call when no
// daemon answers on the socket (no socket file, a stale one, or a daemon
// that ended before the session began): a shell command may then open the
// state itself.
var ErrNoDaemon = errors.New("no daemon answers")

// Dial connects to the daemon socket at path (of any length, see
// SocketAddr).
func Dial(path string) (*net.UnixConn, error) {
	addr, release, err := SocketAddr(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w at %s", ErrNoDaemon, path)
	}
	if err != nil {
		return nil, err
	}
	defer release()
	c, err := net.DialTimeout("unix", addr, 2*time.Second)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("%w at %s", ErrNoDaemon, path)
		}
		var opErr *net.OpError
		if errors.As(err, &opErr) { // its text names addr, which may not be path
			err = fmt.Errorf("connect: %w", opErr.Err)
		}
		return nil, err
	}
	return c.(*net.UnixConn), nil
}

// DefaultIdleTimeout is how long a daemon waits with no connection before it
// exits (`--listen.timeout`, docs/protocol.md §1), the one a client passes
// to the daemon it starts.
const DefaultIdleTimeout = time.Minute

// StartFunc starts a daemon for DialOrStart. exited, when not nil, yields
// the daemon process's end should it end.
type StartFunc func() (exited <-chan error, err error)

// startWait bounds how long DialOrStart waits for a daemon it started.
const startWait = 5 * time.Second

// SpawnLockName is the lock file, beside the auto socket, that forwarders
// hold while they dial or start the daemon.
const SpawnLockName = "daemon.lock"

// DialOrStart connects to the daemon at path. When none answers, it takes
// the lock file daemon.lock beside the socket (so that forwarders racing
// each other end with one daemon), dials again, calls start, and dials
// with backoff until the new daemon answers (at most about 5 s).
func DialOrStart(ctx context.Context, path string, start StartFunc) (*net.UnixConn, error) {
	if c, err := Dial(path); !errors.Is(err, ErrNoDaemon) {
		return c, err
	}
	unlock, err := LockFile(ctx, filepath.Join(filepath.Dir(path), SpawnLockName), 2*startWait)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return dialOrStartLocked(ctx, path, start)
}

// dialOrStartLocked is DialOrStart once daemon.lock is held.
func dialOrStartLocked(ctx context.Context, path string, start StartFunc) (*net.UnixConn, error) {
	if c, err := Dial(path); !errors.Is(err, ErrNoDaemon) {
		return c, err // started by another forwarder while this one waited
	}
	exited, err := start()
	if err != nil {
		return nil, fmt.Errorf("cannot start the shared daemon: %w", err)
	}
	deadline := time.NewTimer(startWait)
	defer deadline.Stop()
	backoff := 10 * time.Millisecond
	for {
		c, err := Dial(path)
		if !errors.Is(err, ErrNoDaemon) {
			return c, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case werr := <-exited:
			if c, err := Dial(path); err == nil { // it found another daemon serving
				return c, nil
			}
			return nil, fmt.Errorf("the shared daemon ended as it started (%v); see daemon.log in %s", werr, filepath.Dir(path))
		case <-deadline.C:
			return nil, fmt.Errorf("the shared daemon did not answer at %s within %v; see daemon.log in %s", path, startWait, filepath.Dir(path))
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 200*time.Millisecond)
	}
}

// LockFile takes an exclusive flock on path, waiting at most wait; the
// returned func releases it. daemon.lock is taken so, and so are the
// small files adapters keep beside the state (agentd hook's cursors).
func LockFile(ctx context.Context, path string, wait time.Duration) (unlock func(), err error) {
	f, err := WaitFlock(ctx, path, wait, nil)
	if errors.Is(err, ErrLockHeld) {
		return nil, fmt.Errorf("another agentd or agentd-hook process has held %s for over %v", path, wait)
	}
	if err != nil {
		return nil, err
	}
	return func() { f.Close() }, nil // closing the file releases the lock
}

// ErrLockHeld: another process kept the lock for the whole wait.
var ErrLockHeld = errors.New("lock held by another process")

// WaitFlock opens path and takes an exclusive flock on it, retrying until
// wait has passed, ctx ends, or giveUp (may be nil) says to stop; then the
// error is ErrLockHeld. The lock lasts until the returned file is closed.
func WaitFlock(ctx context.Context, path string, wait time.Duration, giveUp func() bool) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		locked, err := tryFlock(f)
		switch {
		case err != nil:
			f.Close()
			return nil, err
		case locked:
			return f, nil
		case time.Now().After(deadline) || giveUp != nil && giveUp():
			f.Close()
			return nil, ErrLockHeld
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// tryFlock takes an exclusive flock on f without waiting; false when
// another open file holds it.
func tryFlock(f *os.File) (bool, error) {
	got, err := wsfolder.TryLock(f, false)
	if err != nil {
		return false, fmt.Errorf("cannot lock %s: %w", f.Name(), err)
	}
	return got, nil
}
