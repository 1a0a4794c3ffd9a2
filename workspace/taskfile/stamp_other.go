//go:build !linux && !darwin

package taskfile

import "io/fs"

// stampOf is the stamp of a stat. Without a Stat_t this package knows
// (stamp_linux.go, stamp_darwin.go) there is no file id, and a write that
// keeps the size and the modification time is not seen by the stat alone.
func stampOf(fi fs.FileInfo) stamp { return portableStamp(fi) }
