package cli

import "io/fs"

// agentdProgram is the file name of the agentd program.
const agentdProgram = "agentd.exe"

// executable says whether the file fi may be run: Windows keeps no
// execute bit, and a regular .exe file is.
func executable(fs.FileInfo) bool { return true }
