package wsfolder

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockRange is the one byte that a lock covers: the last offset a file
// can have, far past its end, so that a lock keeps no one from reading or
// writing the file. bbolt locks a state file at this byte too, so a probe
// here sees its lock, as flock does on Unix (lock_flock.go).
func lockRange() *windows.Overlapped {
	return &windows.Overlapped{Offset: ^uint32(0), OffsetHigh: ^uint32(0)}
}

// TryLock takes a lock on f without waiting (LockFileEx), shared or
// exclusive; false when another open file holds a lock that excludes it.
func TryLock(f *os.File, shared bool) (bool, error) {
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if !shared {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, lockRange())
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION):
		return false, nil
	}
	return false, err
}

// Lock takes an exclusive lock on f, waiting for it; closing f lets go.
func Lock(f *os.File) error {
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, lockRange())
}
