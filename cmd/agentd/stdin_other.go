//go:build !linux

package main

import (
	"io"
	"os"
)

// pollableStdin returns stdin as it is: without /proc/self/fd to open it
// anew, agentd leaves the descriptor it inherited alone, so a read blocked
// on a pipe is not interrupted by closing it and the connection ends when
// the pipe does (stdin_linux.go does better).
func pollableStdin(stdin io.Reader) (io.Reader, func()) { return stdin, func() {} }

// isTerminal reports whether f is a character device: a terminal, or
// /dev/null, which only the terminal ioctl of stdin_linux.go tells apart.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
