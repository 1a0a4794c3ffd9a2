package tests

import (
	"errors"
	"os"
	"syscall"
)

// kill ends process pid, whatever sig: Windows has neither signals nor
// process groups to send them to.
func kill(pid int, sig syscall.Signal) error {
	if pid <= 0 {
		return errors.New("no process groups on Windows")
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
