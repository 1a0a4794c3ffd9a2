// Package lsp is agentd's protocol boundary (PROTOCOL.md): JSON-RPC 2.0 with
// Content-Length framing (our own connection, see jsonrpc.go, because
// go.lsp.dev/jsonrpc2 v0.10.0 has faults listed in ARCHITECTURE.md), the LSP
// lifecycle gate, cancellation, per-connection state, notifications out, the
// shared daemon and its stdio forwarder, and the client side of a session
// (Session, for the shell commands and the adapters beside this package such
// as package mcpserver, docs/mcp.md).
//
// It imports commands, workspace and go.lsp.dev/protocol (for the LSP
// types); never bbolt, fsnotify, or the internals of todo and goal. Domain
// errors become JSON-RPC errors here and only here.
package lsp
