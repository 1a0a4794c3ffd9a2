package cli

import "io/fs"

// agentdProgram is the file name of the agentd program.
const agentdProgram = "agentd.exe"

// executable says whether the file fi may be run: Windows keeps no
// execute bit, and a regular .exe file is.
func executable(fs.FileInfo) bool { return true }

// SharedDaemon says whether this system has the shared daemon: Windows
// has none (docs/platforms.md), so `agentd mcp` serves the state itself
// unless --remote names a socket.
const SharedDaemon = false

// NoHooksHere is what `agentd setup` warns of on a system without the
// shared daemon: the hooks it writes reach agentd through that daemon,
// so there they do nothing (docs/hooks.md: a hook that cannot reach
// agentd lets the agent go on), and what hooks count does not bind.
const NoHooksHere = "on Windows agentd has no shared daemon, so the agent's hooks cannot reach agentd and do nothing: agentd's tools work, but what the hooks count (a goal's turns and tokens) is not, so those budgets do not bind; run the agent and agentd in WSL (the Linux build) to have them"
