//go:build unix

package main

import (
	"io/fs"
	"syscall"
)

// logOpenFlags makes opening the run's log refuse a symbolic link, and a
// FIFO with no reader instead of waiting for one (openRunLog).
const logOpenFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// oneName says whether the file fi has no other name (hard link).
func oneName(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || st.Nlink == 1
}
