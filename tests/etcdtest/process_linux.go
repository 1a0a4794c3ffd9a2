package etcdtest

import "syscall"

// sysProcAttr has the kernel kill a member when the test process dies,
// even before its stdin's end reaches it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
