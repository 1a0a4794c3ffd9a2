package main

import (
	"os"
	"syscall"
	"unsafe"
)

// agentProcAttr makes the agent `agentd run` starts die with it: a run
// that is killed leaves no agent working unwatched.
func agentProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// terminalWidth is the width in cells of the terminal f is, read at each
// call (the window may have been resized); 0 when it cannot be read.
func terminalWidth(f *os.File) int {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	var ws struct{ rows, cols, x, y uint16 }
	var errno syscall.Errno = 1
	rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCGWINSZ, uintptr(unsafe.Pointer(&ws)))
	})
	if errno != 0 {
		return 0
	}
	return int(ws.cols)
}
