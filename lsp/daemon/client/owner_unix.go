//go:build unix

package client

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// runtimeBase is where the login manager (systemd-logind, elogind) makes
// each user's runtime directory, runtimeBase/<uid>, which XDG_RUNTIME_DIR
// names in a login session. It is a variable so that an end-to-end test
// can build agentd with a folder of its own here (-ldflags -X), as no test
// may make /run/user/<uid>.
var runtimeBase = "/run/user"

// defaultSocketDir is the auto socket's folder without XDG_RUNTIME_DIR:
// when the login manager's /run/user/<uid> is a directory of this user
// with mode 0700 (SecureDir), /run/user/<uid>/agentd, the same folder as in
// the login session, for a process whose agent passed it no XDG variables;
// else <os.TempDir()>/agentd-<uid>.
func defaultSocketDir() string {
	if dir := filepath.Join(runtimeBase, strconv.Itoa(os.Getuid())); SecureDir(dir, false) == nil {
		return filepath.Join(dir, "agentd")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("agentd-%d", os.Getuid()))
}

// makePrivateDir makes dir, and missing parents, with mode 0700.
func makePrivateDir(dir string) error { return os.MkdirAll(dir, 0o700) }

// privateDir checks that the directory dir (fi) belongs to this user and
// has mode 0700.
func privateDir(dir string, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !ok:
		return fmt.Errorf("socket directory %s: cannot read its owner, so no socket in it can be kept private; run agentd with --remote=off", dir)
	case int(st.Uid) != os.Getuid():
		return fmt.Errorf("socket directory %s belongs to uid %d, not to you (uid %d): refusing to use it; remove it, or set XDG_RUNTIME_DIR to a private directory", dir, st.Uid, os.Getuid())
	case fi.Mode().Perm() != 0o700:
		return fmt.Errorf("socket directory %s has mode %#o, want 0700 so that only you can reach the socket: refusing to use it; run `chmod 700 %s`", dir, fi.Mode().Perm(), dir)
	}
	return nil
}

// CurrentUser is this process's user as PeerCred names a peer's: the uid,
// in decimal.
func CurrentUser() (string, error) { return strconv.Itoa(os.Getuid()), nil }

// terminate sends process pid SIGTERM.
func terminate(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }
