// Package cli is what agentd's two programs share of their command line:
// agentd (cmd/agentd, every subcommand) and agentd-hook (cmd/agentd-hook,
// the lean program of `agentd hook AGENT`, docs/hooks.md). It holds the
// flag parser that takes flags before or after the arguments
// (ParseInterspersed), the state directory rule (ResolveStateDir), the
// logger and its never-blocking sink (OpenLog), the version (Version), the
// shell side of reaching the shared daemon (RemoteSocket, Daemon: dial it,
// starting `agentd serve` when none runs), `agentd hook` itself (Hook,
// HookFlags), and the declarations of the flags both take (Globals,
// WorkspaceVar, SessionVar, RemoteVar, Etcd), so that both programs behave
// alike from one copy.
//
// It is apart from cmd/agentd so that agentd-hook, run once per agent
// event, links none of what agentd links for its other subcommands (the
// LSP server, the command table, the store with bbolt, fsnotify and the
// etcd client, the MCP SDK): every package a program links costs each exec
// its initialisation and page faults (docs/performance.md). It imports
// hook, lsp/daemon/client and workspace/wsfolder.
package cli
