//go:build unix

package daemon

import (
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"
)

// listenPrivate listens on the Unix socket addr under the umask 0177, so
// that the socket is 0600 from the moment it exists.
func listenPrivate(addr string) (*net.UnixListener, error) {
	old := syscall.Umask(0o177)
	defer syscall.Umask(old)
	return net.ListenUnix("unix", &net.UnixAddr{Name: addr, Net: "unix"})
}

// socketInode is the inode of the socket file at path; fs.ErrNotExist when
// there is none, an error when path names something else.
func socketInode(path string) (uint64, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if fi.Mode().Type() != fs.ModeSocket || !ok {
		return 0, fmt.Errorf("%s is not a socket", path)
	}
	return st.Ino, nil
}

// makePrivate gives the socket file at path mode 0600.
func makePrivate(path string) error { return os.Chmod(path, 0o600) }
