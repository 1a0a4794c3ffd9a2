//go:build unix

package lsp

import (
	"errors"
	"syscall"
)

// processExists says whether process pid is seen from here: a signal 0
// to it does not fail with ESRCH (one of another user fails with EPERM,
// and exists).
func processExists(pid int) bool { return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }
