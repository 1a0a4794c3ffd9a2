package setup

import (
	"io/fs"
	"os"
	"syscall"
)

// linkCount is how many names (hard links) the file fi of path has, as
// Windows counts them for an open handle; 0 when it cannot be read.
func linkCount(fi fs.FileInfo, path string) uint64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	var d syscall.ByHandleFileInformation
	if syscall.GetFileInformationByHandle(syscall.Handle(f.Fd()), &d) != nil {
		return 0
	}
	return uint64(d.NumberOfLinks)
}
