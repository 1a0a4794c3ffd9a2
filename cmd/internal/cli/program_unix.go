//go:build !windows

package cli

import "io/fs"

// agentdProgram is the file name of the agentd program.
const agentdProgram = "agentd"

// executable says whether the file fi may be run: an execute bit is set.
func executable(fi fs.FileInfo) bool { return fi.Mode().Perm()&0o111 != 0 }
