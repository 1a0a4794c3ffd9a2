// Package client is the client side of agentd's shared daemon
// (docs/protocol.md §1, docs/shared-daemon.md): the auto socket and its
// private directory (AutoSocketPath, SecureDir), PATH.lock's record
// (ReadInfo), dialing a daemon and starting one when none answers, under
// daemon.lock (Dial, DialOrStart), replacing one of an older agentd
// (DialCurrent), the one-shot client of the shell commands (Call), the
// Session client that agentd mcp and agentd hook keep open, and the file
// locks of agentd's processes (LockFile). None of it opens a state file.
//
// It is apart from package daemon, which serves connections with an
// lsp.Server and so links the command table, the runtime and the store, so
// that a program that only talks to the daemon (agentd-hook, run once per
// agent event, docs/hooks.md) links none of them: every package a program
// links costs each exec its initialisation and page faults
// (docs/performance.md). package daemon, the forwarder and the daemon side,
// builds on it.
//
// It imports lsp/jsonrpc (the connection), commands/protocol (command ids, and to rebuild
// command errors as protocol.Error) and workspace/wsfolder (folder URIs); never lsp,
// commands, workspace, go.lsp.dev, bbolt or fsnotify.
package client
