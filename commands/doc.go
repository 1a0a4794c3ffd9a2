// Package commands declares agentd's commands (PROTOCOL.md §3) and tools
// (RUNTIME.md §1, §2.8) once, decodes their arguments into typed structs that
// reject unknown fields, resolves the workspace folder and session, and runs
// the rules of todo, goal and reminder on state held by workspace.
//
// It imports todo, goal, reminder and workspace; never go.lsp.dev, bbolt or
// fsnotify (ARCHITECTURE.md). Errors carry stable codes (RUNTIME.md §3)
// through an ErrorCode() method; the lsp package maps them to JSON-RPC.
package commands

// The clients' copy of the protocol (vscode-extension/src/protocol.gen.ts,
// nvim/lua/agentd/protocol.lua) is generated from this package's
// declarations; commands/protocolgen's test fails when it is stale.
//go:generate go run ./protocolgen
