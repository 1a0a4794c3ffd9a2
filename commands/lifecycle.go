package commands

// lifecycleCommands are the agent-loop commands (PROTOCOL.md §3).
var lifecycleCommands = []Command{}
