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
