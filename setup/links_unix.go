//go:build unix

package setup

import (
	"io/fs"
	"syscall"
)

// linkCount is how many names (hard links) the file fi of path has; 0
// when the stat does not say.
func linkCount(fi fs.FileInfo, path string) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 0
}
