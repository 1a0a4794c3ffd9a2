//go:build !linux && !darwin && !windows

package client

import (
	"errors"
	"net"
	"runtime"
)

// errNoPeerCred is PeerCred's answer where agentd does not read a Unix
// socket's peer credentials: the daemon then refuses every connection, as
// it refuses one of another user (docs/shared-daemon.md).
var errNoPeerCred = errors.New("the peer's credentials of a Unix socket are read on Linux, macOS and Windows only, not on " + runtime.GOOS + ": the shared daemon cannot tell who connected, so it serves no one here; run agentd with --remote=off")

// PeerCred would return the user and pid of the process at the other end
// of c; this system is not one agentd reads them on (peercred_linux.go,
// peercred_darwin.go, peercred_windows.go).
func PeerCred(c *net.UnixConn) (user string, pid int, err error) { return "", 0, errNoPeerCred }
