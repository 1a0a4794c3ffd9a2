package client

// This file is the files of the shared daemon's socket PATH that its clients
// read (docs/shared-daemon.md): where the auto socket lives, the private
// directory it must be in, the address of a long path, and PATH.lock's Info.

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// maxSocketPath is the longest Unix socket path Linux accepts (sun_path less
// its terminating NUL).
const maxSocketPath = 107

// SocketAddr is the address to bind or dial for the socket at path, and a
// release to call once that is done (for a listener: after it is closed,
// since closing it removes the socket file by that address). A path of up
// to maxSocketPath bytes is its own address. A longer one is reached
// through its directory: it is opened, and the address is
// /proc/self/fd/N/NAME, the same socket file by a short name. That
// directory's error (fs.ErrNotExist when it is missing) is returned as it
// is.
func SocketAddr(path string) (addr string, release func(), err error) {
	if len(path) <= maxSocketPath {
		return path, func() {}, nil
	}
	fd, err := syscall.Open(filepath.Dir(path), syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return "", nil, &fs.PathError{Op: "open", Path: filepath.Dir(path), Err: err}
	}
	release = func() { syscall.Close(fd) }
	dirAddr := fmt.Sprintf("/proc/self/fd/%d", fd)
	addr = dirAddr + "/" + filepath.Base(path)
	if _, err := os.Stat(dirAddr); err != nil || len(addr) > maxSocketPath {
		release()
		return "", nil, fmt.Errorf("socket path %s is %d bytes long, more than the %d of a Unix socket address, and cannot be reached by a shorter name (%s, through /proc): choose a shorter path", path, len(path), maxSocketPath, addr)
	}
	return addr, release, nil
}

// runtimeBase is where the login manager (systemd-logind, elogind) makes
// each user's runtime directory, runtimeBase/<uid>, which XDG_RUNTIME_DIR
// names in a login session. It is a variable so that an end-to-end test
// can build agentd with a folder of its own here (-ldflags -X), as no test
// may make /run/user/<uid>.
var runtimeBase = "/run/user"

// AutoSocketPath is the socket of the user's shared daemon (`--remote=auto`):
// $XDG_RUNTIME_DIR/agentd/daemon.sock when XDG_RUNTIME_DIR is an absolute
// path; else, when the login manager's /run/user/<uid> is a directory of
// this user with mode 0700 (SecureDir), /run/user/<uid>/agentd/daemon.sock,
// the same socket as in the login session, for a process whose agent
// passed it no XDG variables (docs/shared-daemon.md, "Where the socket
// lives, and who may use it"); else <os.TempDir()>/agentd-<uid>/daemon.sock.
func AutoSocketPath() string {
	if x := os.Getenv("XDG_RUNTIME_DIR"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "agentd", "daemon.sock")
	}
	if dir := filepath.Join(runtimeBase, strconv.Itoa(os.Getuid())); SecureDir(dir, false) == nil {
		return filepath.Join(dir, "agentd", "daemon.sock")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("agentd-%d", os.Getuid()), "daemon.sock")
}

// RunningStateDir is the state dir of the daemon that runs on the auto
// socket, as its PATH.lock records it, when that socket's directory is
// private (SecureDir); "" when no daemon records one there. It is for a
// process with no state dir of its own (no --state-dir, no
// XDG_STATE_HOME), which then keeps to the user's daemon instead of
// opening another state dir (docs/shared-daemon.md).
func RunningStateDir() string {
	path := AutoSocketPath()
	if SecureDir(filepath.Dir(path), false) != nil {
		return ""
	}
	info, err := ReadInfo(path)
	if err != nil || !filepath.IsAbs(info.StateDir) {
		return ""
	}
	return info.StateDir
}

// SecureDir checks that dir is a directory (not a symbolic link) owned by
// the current user with mode 0700, so that no other user can reach a socket
// in it. With create it first makes dir (and missing parents) with mode
// 0700.
func SecureDir(dir string, create bool) error {
	if create {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("cannot create the socket directory: %w", err)
		}
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("socket directory %s is a symbolic link: refusing to use it; remove it, or set XDG_RUNTIME_DIR to a private directory", dir)
	case !fi.IsDir():
		return fmt.Errorf("socket directory %s is not a directory: refusing to use it; remove it", dir)
	case !ok:
		return fmt.Errorf("socket directory %s: cannot read its owner", dir)
	case int(st.Uid) != os.Getuid():
		return fmt.Errorf("socket directory %s belongs to uid %d, not to you (uid %d): refusing to use it; remove it, or set XDG_RUNTIME_DIR to a private directory", dir, st.Uid, os.Getuid())
	case fi.Mode().Perm() != 0o700:
		return fmt.Errorf("socket directory %s has mode %#o, want 0700 so that only you can reach the socket: refusing to use it; run `chmod 700 %s`", dir, fi.Mode().Perm(), dir)
	}
	return nil
}

// Info is what a running daemon records in PATH.lock. Read it with
// ReadInfo once connected: while a daemon answers on PATH, the file
// is its own.
type Info struct {
	Pid       int       `json:"pid"`
	StateDir  string    `json:"stateDir"`
	StartedAt time.Time `json:"startedAt"`
	// Version is the daemon's agentd version (`agentd version`); "" for a
	// daemon older than this field.
	Version string `json:"version,omitempty"`
}

// ReadInfo reads the Info of the daemon at socket path.
func ReadInfo(path string) (Info, error) {
	var info Info
	data, err := os.ReadFile(path + ".lock")
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(data, &info); err != nil || info.Pid <= 0 {
		return info, fmt.Errorf("%s.lock holds no daemon record", path)
	}
	return info, nil
}

// PeerCred returns the uid and pid of the process at the other end of c,
// as the kernel recorded them when it connected.
func PeerCred(c *net.UnixConn) (uid, pid int, err error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return 0, 0, err
	}
	if credErr != nil {
		return 0, 0, credErr
	}
	return int(cred.Uid), int(cred.Pid), nil
}
