package client

import (
	"net"
	"strconv"
	"syscall"
)

// PeerCred returns the user (its uid in decimal, as CurrentUser names
// this process's) and pid of the process at the other end of c,
// as the kernel recorded them when it connected.
func PeerCred(c *net.UnixConn) (user string, pid int, err error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return "", 0, err
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return "", 0, err
	}
	if credErr != nil {
		return "", 0, credErr
	}
	return strconv.Itoa(int(cred.Uid)), int(cred.Pid), nil
}
