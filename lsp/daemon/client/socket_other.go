//go:build !linux

package client

import "fmt"

// maxSocketPath is the longest Unix socket path every other system agentd
// builds for accepts (Darwin's and the BSDs' sun_path of 104 bytes less
// its terminating NUL).
const maxSocketPath = 103

// SocketAddr is the address to bind or dial for the socket at path, and a
// release to call once that is done. A path of up to maxSocketPath bytes
// is its own address; a longer one, which Linux reaches through /proc
// (socket_linux.go), is refused here.
func SocketAddr(path string) (addr string, release func(), err error) {
	if len(path) <= maxSocketPath {
		return path, func() {}, nil
	}
	return "", nil, fmt.Errorf("socket path %s is %d bytes long, more than the %d of a Unix socket address on this system: choose a shorter path", path, len(path), maxSocketPath)
}
