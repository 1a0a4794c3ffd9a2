package client

import (
	"net"
	"strconv"

	"golang.org/x/sys/unix"
)

// PeerCred returns the user (its uid in decimal, as CurrentUser names
// this process's) and pid of the process at the other end of c,
// as the kernel recorded them when it connected: Darwin's LOCAL_PEERCRED
// (the xucred whose uid getpeereid reads) and LOCAL_PEERPID.
func PeerCred(c *net.UnixConn) (user string, pid int, err error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return "", 0, err
	}
	var cred *unix.Xucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		if credErr == nil {
			pid, credErr = unix.GetsockoptInt(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERPID)
		}
	}); err != nil {
		return "", 0, err
	}
	if credErr != nil {
		return "", 0, credErr
	}
	return strconv.Itoa(int(cred.Uid)), pid, nil
}
