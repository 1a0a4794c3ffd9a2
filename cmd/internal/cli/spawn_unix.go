//go:build unix

package cli

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
)

// startDetached starts the command newCmd makes in a session of its own,
// so that it outlives the process that started it and no terminal's
// signals reach it.
func startDetached(newCmd func() *exec.Cmd) (*exec.Cmd, error) {
	cmd := newCmd()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd, cmd.Start()
}

// fdDir lists this process's open descriptors: Linux's /proc, else the
// /dev/fd of Darwin and the BSDs.
func fdDir() string {
	if runtime.GOOS == "linux" {
		return "/proc/self/fd"
	}
	return "/dev/fd"
}

// closeInheritedOnExec marks every descriptor above stderr close-on-exec
// (Go opens its own so; those this process inherited may not be), so that
// a process started next inherits none of them. A pipe the forwarder's
// caller waits on, such as the output of `$(… | agentd --remote=auto)`
// passed on as another descriptor, then ends when the forwarder does, not
// when the daemon does.
func closeInheritedOnExec() error {
	entries, err := os.ReadDir(fdDir())
	if err != nil {
		return fmt.Errorf("cannot list the open descriptors: %w", err)
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
	return nil
}
