//go:build unix

package client

import (
	"io/fs"
	"syscall"
)

// ownerUID is the uid that owns the file fi; false when the stat does not
// say.
func ownerUID(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// terminate sends process pid SIGTERM.
func terminate(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }
