package client

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
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
