// Package lsp is agentd's protocol boundary (PROTOCOL.md): over the JSON-RPC
// 2.0 transport of package lsp/jsonrpc, the LSP lifecycle gate, cancellation, per-connection state, notifications out, the
// shared daemon and its stdio forwarder, and the client side of a session
// (Session, for the shell commands and the adapters beside this package such
// as package mcpserver, docs/mcp.md).
//
// Concurrency of one connection (docs/behaviour.md, "Order of requests"):
// one goroutine reads and routes the messages in arrival order; lifecycle
// messages and notifications are handled there, inline. Each command is
// resolved there too, and then runs in its own goroutine: a command on the
// state of a session waits first for the earlier commands of the connection
// on that session (or, for a folder-wide one, on that folder), in arrival
// order (order.go), while waits and commands on other state run alongside.
// shutdown drains: it answers only after every request before it.
//
// It imports lsp/jsonrpc, commands, workspace and go.lsp.dev/protocol (for
// the LSP types); never bbolt, fsnotify, or the internals of todo and goal. Domain
// errors become JSON-RPC errors here and only here.
package lsp
