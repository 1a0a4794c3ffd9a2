// Package protocol is agentd's wire protocol in Go (docs/protocol.md): the
// command ids, one Args and one Result struct per command, made of wire
// values only (the session's State with its goal snapshot and queue, the
// history events, the turn, step and tool results), the enums those carry,
// the notification methods and their params, the limits a client must
// respect, the error codes and the one coded error type, and the command
// table's metadata (id, args, result, doc, scope) from which
// the command reference (docs/commands.md) and the clients' generated
// protocol files come (commands/protocolgen).
//
// It sits under commands because it is the commands' contract: package
// commands implements it, and every client of the commands (agentd-hook,
// agentd mcp, the agent loop, the CLI) speaks it without linking the
// command table, the service or the store. It imports the standard library
// only, so that agentd-hook, run once per agent event, pays for nothing
// else at each exec (docs/performance.md).
package protocol
