//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package wsfolder

import (
	"errors"
	"os"
	"syscall"
)

// TryLock takes an flock on f without waiting, shared or exclusive; false
// when another open file holds a lock that excludes it. bbolt locks a
// state file the same way, so a probe here sees its lock.
func TryLock(f *os.File, shared bool) (bool, error) {
	how := syscall.LOCK_EX
	if shared {
		how = syscall.LOCK_SH
	}
	err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		return false, nil
	}
	return false, err
}

// Lock takes an exclusive flock on f, waiting for it; closing f lets go.
func Lock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }
