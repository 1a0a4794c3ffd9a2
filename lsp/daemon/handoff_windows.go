package daemon

import (
	"context"
	"log/slog"
	"net"
	"os"

	"github.com/agentd/agentd/lsp"
)

// Windows passes no descriptors over a socket, so the daemon adopts no
// editor's pipes there (handoff.go is Unix's): every forwarder relays.

// serveConn serves one accepted connection as it is.
func (d *Daemon) serveConn(ctx context.Context, srv *lsp.Server, c *net.UnixConn, opts lsp.ConnOptions) {
	srv.ServeConn(ctx, c, opts)
}

// Adoptable is false: no descriptor can be handed to the daemon.
func Adoptable(*os.File) bool { return false }

// Handoff hands nothing over: the forwarder relays on conn (see the Unix
// Handoff for the contract).
func Handoff(ctx context.Context, in, out *os.File, conn *net.UnixConn, redial Redial, log *slog.Logger) (code int, relay *net.UnixConn, err error) {
	return 0, conn, nil
}
