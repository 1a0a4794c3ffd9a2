package taskfile

import (
	"io/fs"
	"syscall"
)

// stampOf is the stamp of a stat: device and inode, size, modification
// and change times.
func stampOf(fi fs.FileInfo) stamp {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return portableStamp(fi)
	}
	return stamp{fileID{uint64(st.Dev), st.Ino}, st.Size, st.Mtim.Nano(), st.Ctim.Nano()}
}
