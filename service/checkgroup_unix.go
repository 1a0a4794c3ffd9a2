//go:build unix

package service

import (
	"os/exec"
	"syscall"
)

// inNewGroup makes cmd lead a process group of its own, so that the check
// and whatever it starts are killed together (killGroup). nil: every Unix
// system has process groups.
func inNewGroup(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return nil
}

// killGroup kills the process group pgid with SIGKILL.
func killGroup(pgid int) error { return syscall.Kill(-pgid, syscall.SIGKILL) }
