package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
)

// maxLoggedParams bounds the bytes of a bad $/cancelRequest's params that
// its log line holds: params may be as large as a message (8 MiB).
const maxLoggedParams = 256

// cancelRequest cancels the call params names. One without a number or
// string id is ignored: the first on a connection is logged as a warning,
// those after it at debug level, so that a client that repeats the mistake
// does not flood the log (docs/protocol.md §2); the line holds at most
// maxLoggedParams bytes of the params, and their size when they are longer.
func (c *Conn) cancelRequest(params json.RawMessage) {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	err := json.Unmarshal(params, &p)
	id := bytes.TrimSpace(p.ID)
	if err != nil || len(id) == 0 || id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9') {
		level := slog.LevelDebug
		if c.badCancels.Add(1) == 1 {
			level = slog.LevelWarn
		}
		if !c.log.Enabled(context.Background(), level) {
			return
		}
		attrs := []any{"params", string(params)}
		if len(params) > maxLoggedParams {
			attrs = []any{"params", string(bytes.ToValidUTF8(params[:maxLoggedParams], nil)) + "…", "bytes", len(params)}
		}
		c.log.Log(context.Background(), level, "jsonrpc: $/cancelRequest without a number or string id; ignored (logged once per connection, later ones at debug level)", attrs...)
		return
	}
	c.calls.mu.Lock()
	cancel := c.calls.inflight[string(id)]
	c.calls.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
