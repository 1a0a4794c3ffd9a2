package main

import (
	"io"
	"os"
	"syscall"
	"unsafe"
)

// pollableStdin returns stdin as a file whose Close interrupts a blocked
// Read (which ending a connection needs), and a function to call before
// the process exits. It never leaves the descriptor it inherited changed
// (docs/reliability.md, "Signals and descriptors"):
//   - a pipe or a terminal is opened anew through /proc/self/fd/0: a new
//     open file description of the same pipe, whose non-blocking mode
//     (what Go's poller needs) is agentd's alone;
//   - a socket (which cannot be opened anew), or a pipe without /proc, is
//     switched to non-blocking mode, which every process sharing it sees
//     while agentd runs; the returned function switches it back.
//
// Anything else (a regular file, a reader that is not os.Stdin) is
// returned as it is.
func pollableStdin(stdin io.Reader) (io.Reader, func()) {
	keep := func() {}
	if stdin != os.Stdin {
		return stdin, keep
	}
	fi, err := os.Stdin.Stat()
	if err != nil {
		return stdin, keep
	}
	switch mode := fi.Mode(); {
	case mode&(os.ModeNamedPipe|os.ModeCharDevice) != 0:
		// O_NONBLOCK: opening a pipe whose writers are gone must not wait
		// for a writer; O_NOCTTY: a terminal must not become ours.
		if f, err := os.OpenFile("/proc/self/fd/0", os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0); err == nil {
			return f, keep
		}
		if mode&os.ModeNamedPipe == 0 {
			return stdin, keep
		}
	case mode&os.ModeSocket == 0:
		return stdin, keep
	}
	// A duplicate, so that closing it leaves descriptor 0 open for the
	// restore; both share the one file description and its mode.
	fd, err := syscall.Dup(0)
	if err != nil {
		return stdin, keep
	}
	syscall.CloseOnExec(fd)
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, 0, syscall.F_GETFL, 0)
	if errno != 0 || syscall.SetNonblock(fd, true) != nil {
		syscall.Close(fd)
		return stdin, keep
	}
	restore := keep
	if flags&syscall.O_NONBLOCK == 0 {
		restore = func() { syscall.SetNonblock(0, false) }
	}
	return os.NewFile(uintptr(fd), "/dev/stdin"), restore
}

// isTerminal reports whether f is a terminal: a character device that
// answers the terminal ioctl, which /dev/null and other devices do not.
// It asks through SyscallConn, since File.Fd would switch f to blocking.
func isTerminal(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var errno syscall.Errno = 1
	rc.Control(func(fd uintptr) {
		var t syscall.Termios
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	})
	return errno == 0
}
