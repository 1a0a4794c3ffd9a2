package lsp

import (
	"context"
	"log/slog"
	"time"
)

// WatchProcess calls gone, once, when the client process pid (the
// processId of initialize) is gone, unless ctx ends first. A pid that is
// not a process seen from here when the client initializes is not watched
// but logged: it is most likely the pid of a client in another PID
// namespace (a container, a sandbox), alive but invisible, not a dead
// client (docs/reliability.md, "Signals and descriptors"). It polls every
// 300 ms. ServeConn uses it for ConnOptions.WatchParent, and the
// forwarder of package lsp/daemon for its client.
func WatchProcess(ctx context.Context, log *slog.Logger, pid int, gone func()) {
	if !processExists(pid) {
		log.Warn("the client's processId is no process seen from here (a client in another PID namespace?): not watching it", "processId", pid)
		return
	}
	go func() {
		if waitProcessGone(ctx, pid) {
			log.Info("client process is gone; ending the connection", "pid", pid)
			gone()
		}
	}()
}

// waitProcessGone polls until process pid is gone (true) or ctx ends.
func waitProcessGone(ctx context.Context, pid int) bool {
	t := time.NewTicker(300 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			if !processExists(pid) {
				return true
			}
		}
	}
}
