// Package lsp is agentd's LSP server (docs/protocol.md): on a connection of
// package lsp/jsonrpc it owns the LSP lifecycle gate, the per-connection
// state (folders, settings, the client handle of commands), the order of
// requests (order.go), notifications out with work-done progress, and the
// mapping of domain errors to JSON-RPC errors, here and only here. A stdio
// process serves one connection (ServeConn); the shared daemon, its
// forwarder and the client side of a session are package lsp/daemon, which
// serves its connections with this package.
//
// Concurrency of one connection (docs/protocol.md §2.2):
// one goroutine reads and routes the messages in arrival order; lifecycle
// messages and notifications are handled there, inline. Each command is
// resolved there too, and then runs in its own goroutine: a command on the
// state of a session waits first for the earlier commands of the connection
// on that session (or, for a folder-wide one, on that folder), in arrival
// order (order.go), while waits and commands on other state run alongside.
// shutdown drains: it answers only after every request before it.
//
// Of go.lsp.dev it uses the protocol types only: initialize is decoded
// leniently (capabilities of any shape) and shutdown and exit take any
// params, where go.lsp.dev/jsonrpc2 v0.10.0 refuses {} (one of its known
// faults, docs/architecture.md, "Library pins").
//
// It imports lsp/jsonrpc, commands, workspace and go.lsp.dev/protocol (for
// the LSP types); never lsp/daemon (which imports it), bbolt, fsnotify, or
// the internals of todo and goal.
package lsp
