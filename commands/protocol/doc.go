// Package protocol is agentd's wire protocol in Go (docs/protocol.md): the
// command ids, one Args struct per command, the result types that are made
// of wire values only, the enums those carry, the notification methods,
// the limits a client must respect, the error codes and the one coded error
// type, and the command table's metadata (id, args, doc, scope) from which
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
