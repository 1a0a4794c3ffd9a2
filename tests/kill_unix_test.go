//go:build unix

package tests

import "syscall"

// kill sends sig to process pid, or to the group -pid leads when pid is
// negative.
func kill(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }
