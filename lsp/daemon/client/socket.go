package client

// This file is the files of the shared daemon's socket PATH that its clients
// read (docs/shared-daemon.md): where the auto socket lives, the private
// directory it must be in, the address of a long path, and PATH.lock's Info.

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"
)

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
	uid, ok := ownerUID(fi)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("socket directory %s is a symbolic link: refusing to use it; remove it, or set XDG_RUNTIME_DIR to a private directory", dir)
	case !fi.IsDir():
		return fmt.Errorf("socket directory %s is not a directory: refusing to use it; remove it", dir)
	case !ok:
		return fmt.Errorf("socket directory %s: cannot read its owner on %s, so no socket in it can be kept private: the shared daemon is not available here; run agentd with --remote=off", dir, runtime.GOOS)
	case uid != os.Getuid():
		return fmt.Errorf("socket directory %s belongs to uid %d, not to you (uid %d): refusing to use it; remove it, or set XDG_RUNTIME_DIR to a private directory", dir, uid, os.Getuid())
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
