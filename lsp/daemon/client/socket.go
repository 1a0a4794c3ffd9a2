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
	"time"
)

// AutoSocketPath is the socket of the user's shared daemon (`--remote=auto`):
// $XDG_RUNTIME_DIR/agentd/daemon.sock when XDG_RUNTIME_DIR is an absolute
// path, else daemon.sock in the system's own folder for it
// (defaultSocketDir: owner_unix.go, owner_windows.go; docs/shared-daemon.md,
// "Where the socket lives, and who may use it").
func AutoSocketPath() string {
	if x := os.Getenv("XDG_RUNTIME_DIR"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "agentd", "daemon.sock")
	}
	return filepath.Join(defaultSocketDir(), "daemon.sock")
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

// SecureDir checks that dir is a directory (not a symbolic link) that only
// the current user can open (privateDir: owned by the user with mode 0700
// on Unix; owned by the user's SID with a protected DACL that grants only
// that SID on Windows), so that no other user can reach a socket in it.
// With create it first makes dir (and missing parents) so (makePrivateDir).
func SecureDir(dir string, create bool) error {
	if create {
		if err := makePrivateDir(dir); err != nil {
			return fmt.Errorf("cannot create the socket directory: %w", err)
		}
	}
	fi, err := os.Lstat(dir)
	switch {
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("socket directory %s is a symbolic link: refusing to use it; remove it, or set XDG_RUNTIME_DIR to a private directory", dir)
	case !fi.IsDir():
		return fmt.Errorf("socket directory %s is not a directory: refusing to use it; remove it", dir)
	}
	return privateDir(dir, fi)
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
