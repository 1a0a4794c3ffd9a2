// Package commands declares agentd's commands (docs/protocol.md §3) and tools
// (docs/runtime.md §1, §2.8) once, decodes their arguments into typed structs that
// reject unknown fields, resolves the workspace folder and session for each
// caller (Client: an LSP connection or a shell command), runs the handlers,
// and renders the notifications of committed changes (docs/protocol.md §4). The
// runtime a handler calls (the registry, the clocks and timers, the restart
// rule, task-file recording, waits for a change) is package service
// (docs/architecture.md).
//
// It implements the wire protocol of package commands/protocol (command
// ids, Args structs, the table's metadata), attaching a handler and a
// result type to each command of its table.
//
// It imports commands/protocol, todo, goal, reminder, workspace and
// service; never lsp, go.lsp.dev, bbolt or fsnotify (docs/architecture.md).
// Errors carry stable codes (docs/runtime.md §3) through an ErrorCode()
// method; the lsp package maps them to JSON-RPC.
package commands

// The clients' copy of the protocol (vscode-extension/src/protocol.gen.ts,
// nvim/lua/agentd/protocol.lua) is generated from this package's
// declarations; commands/protocolgen's test fails when it is stale.
//go:generate go run ./protocolgen
