//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd || windows)

package wsfolder

import (
	"errors"
	"os"
)

// ErrNoFileLocks is what the file locks answer on a system with neither
// flock (lock_flock.go) nor LockFileEx (lock_windows.go): what needs one
// (the shared daemon's lock, the approvals of checks) is refused there
// rather than run unguarded.
var ErrNoFileLocks = errors.New("file locks (flock) are not available on this system")

// TryLock would take an flock on f without waiting; this system has none.
func TryLock(f *os.File, shared bool) (bool, error) { return false, ErrNoFileLocks }

// Lock would take an exclusive flock on f; this system has none.
func Lock(f *os.File) error { return ErrNoFileLocks }
