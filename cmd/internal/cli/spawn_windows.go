package cli

import (
	"errors"
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"
)

// detachFlags start a process with no console (so that closing the
// terminal or a console's Ctrl-C does not reach it, and no window opens)
// in a process group of its own.
const detachFlags = windows.DETACHED_PROCESS | windows.CREATE_NEW_PROCESS_GROUP

// startDetached starts the command newCmd makes, detached (detachFlags)
// and, where the job object of this process allows, out of that job, so
// that the daemon outlives an agent whose job kills its processes when it
// ends. Where the job allows no breakaway, Windows refuses the flag
// (access denied), and a second command starts in the job: the daemon
// then ends with the agent, and the next hook starts another.
func startDetached(newCmd func() *exec.Cmd) (*exec.Cmd, error) {
	cmd := newCmd()
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: detachFlags | windows.CREATE_BREAKAWAY_FROM_JOB}
	err := cmd.Start()
	if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		cmd = newCmd()
		cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: detachFlags}
		err = cmd.Start()
	}
	return cmd, err
}

// closeInheritedOnExec has nothing to do: Windows handles are inherited
// only when marked so, and Go marks none but the child's stdio.
func closeInheritedOnExec() error { return nil }
