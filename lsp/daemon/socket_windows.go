package daemon

import (
	"errors"
	"net"
)

// errNoSharedDaemon is why `agentd serve` does not listen on Windows: the
// shared daemon's socket is kept private by a umask and its connections
// are told apart by peer credentials, neither of which Windows has
// (docs/shared-daemon.md). Editors and agents run agentd with
// --remote=off there.
var errNoSharedDaemon = errors.New("the shared daemon is not available on Windows (it needs a private Unix socket and its peer's credentials): run agentd with --remote=off")

// listenPrivate refuses: see errNoSharedDaemon.
func listenPrivate(string) (*net.UnixListener, error) { return nil, errNoSharedDaemon }

// socketInode refuses: see errNoSharedDaemon.
func socketInode(string) (uint64, error) { return 0, errNoSharedDaemon }
