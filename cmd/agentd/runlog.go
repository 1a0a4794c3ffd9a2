package main

import (
	"errors"
	"io/fs"
	"os"
)

// openRunLog opens the run's log at path for appending the agent's
// output, which its model writes, as a file of its own: the state
// directory is one an agent's shell may write, so a name there that is a
// symbolic link, a second name of another file (a hard link), a FIFO or
// anything but a regular file is removed and the log made anew, never
// written through, as the run's record is not (docs/security.md, "agentd
// run starts only the agent you named").
func openRunLog(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY|logOpenFlags, 0o600)
	if err == nil {
		fi, serr := f.Stat()
		if serr == nil && fi.Mode().IsRegular() && oneName(fi) {
			return f, nil
		}
		f.Close()
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_APPEND|os.O_WRONLY|logOpenFlags, 0o600)
}
