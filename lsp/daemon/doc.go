// Package daemon is agentd's shared daemon (docs/protocol.md §1,
// docs/shared-daemon.md): the daemon side (Listen claims a socket and its
// lock file, Serve serves each connection with an lsp.Server, the upgrade
// handover of agentd/handover), Handoff, which hands the editor's pipes to
// the daemon (agentd/adopt, docs/shared-daemon.md "Handoff"), and Forward,
// the stdio relay of `agentd --remote` when the daemon does not take them,
// which watches the editor's process as the server does. The rest of the
// client side (Dial, DialOrStart and DialCurrent, which spawn or replace a
// daemon under the spawn lock; Call, the one-shot client of the shell
// commands; Session, the client that agentd mcp and agentd hook keep open)
// is package lsp/daemon/client, which links no server. None of it opens a
// state file.
//
// The forwarder follows the client's messages with lsp/jsonrpc's framing
// reader, the one the daemon reads with, so that both see the same
// messages whatever the input.
//
// It imports lsp (the server it serves connections with), lsp/jsonrpc and
// lsp/daemon/client; never go.lsp.dev, bbolt or fsnotify. Nothing below it
// imports it: the arrows go daemon → lsp → lsp/jsonrpc.
package daemon
