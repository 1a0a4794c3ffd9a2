package lsp

import "os"

// processExists says whether process pid is seen from here: Windows
// opens a handle to it.
func processExists(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
