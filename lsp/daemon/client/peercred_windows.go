package client

import (
	"fmt"
	"net"
	"unsafe"

	"golang.org/x/sys/windows"
)

// sioAfUnixGetPeerPid is SIO_AF_UNIX_GETPEERPID, _WSAIOR(IOC_VENDOR, 256):
// the pid of an AF_UNIX socket's peer, as Windows recorded it when the
// peer connected.
const sioAfUnixGetPeerPid = windows.IOC_OUT | windows.IOC_VENDOR | 256

// PeerCred returns the user (the SID of its process token's user, as
// CurrentUser names this process's) and pid of the process at the other
// end of c. Windows gives the pid (SIO_AF_UNIX_GETPEERPID); the user is
// read from that process's token, which this user can open only for a
// process of its own (one of another user is an error, and refused).
func PeerCred(c *net.UnixConn) (user string, pid int, err error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return "", 0, err
	}
	var peer, n uint32
	var ioErr error
	if err := raw.Control(func(fd uintptr) {
		ioErr = windows.WSAIoctl(windows.Handle(fd), sioAfUnixGetPeerPid, nil, 0, (*byte)(unsafe.Pointer(&peer)), uint32(unsafe.Sizeof(peer)), &n, nil, 0)
	}); err != nil {
		return "", 0, err
	}
	if ioErr != nil {
		return "", 0, fmt.Errorf("cannot read the peer's pid (SIO_AF_UNIX_GETPEERPID): %w", ioErr)
	}
	user, err = processUser(peer)
	if err != nil {
		return "", int(peer), fmt.Errorf("cannot read the user of the peer, pid %d: %w", peer, err)
	}
	return user, int(peer), nil
}

// processUser is the SID of the user of process pid's token.
func processUser(pid uint32) (string, error) {
	p, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return "", err
	}
	defer windows.CloseHandle(p)
	var token windows.Token
	if err := windows.OpenProcessToken(p, windows.TOKEN_QUERY, &token); err != nil {
		return "", err
	}
	defer token.Close()
	u, err := token.GetTokenUser()
	if err != nil {
		return "", err
	}
	return u.User.Sid.String(), nil
}
