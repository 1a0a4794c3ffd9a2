package cli

import (
	"os/exec"
	"syscall"
)

// detach starts cmd in a process group of its own, so that a console's
// Ctrl-C does not reach it.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// closeInheritedOnExec has nothing to do: Windows handles are inherited
// only when marked so, and Go marks none but the child's stdio.
func closeInheritedOnExec() error { return nil }
