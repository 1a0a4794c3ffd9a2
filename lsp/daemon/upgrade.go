package daemon

// This file is the daemon side of the upgrade of the shared daemon
// (docs/shared-daemon.md, "Upgrades"): a forwarder of a newer agentd
// replaces a daemon of an older one (client.DialCurrent), which hands over
// on request (agentd/handover): it tells its clients, stops accepting, ends
// its connections as on a disconnect, closes every state file and releases
// its lock, so that the new daemon opens the same state.

import (
	"context"
	"encoding/json"

	"github.com/agentd/agentd/lsp/daemon/client"
	"github.com/agentd/agentd/lsp/jsonrpc"
)

// serveHandover answers agentd/handover on a daemon connection
// (lsp.ConnOptions.Ungated) and passes its params to the daemon's Serve,
// which then stops; a second request while one is pending is answered
// alike and dropped.
func serveHandover(handover chan<- client.HandoverParams) jsonrpc.Handler {
	return func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		var p client.HandoverParams
		if err := json.Unmarshal(req.Params, &p); err != nil || p.Version == "" {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "%s needs params {version: string, pid: number}", client.HandoverMethod)
		}
		select {
		case handover <- p:
		default: // already handing over
		}
		return nil, nil
	}
}
