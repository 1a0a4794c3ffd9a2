//go:build !linux

package etcdtest

import "syscall"

// sysProcAttr: elsewhere a member ends at the end of its stdin alone.
func sysProcAttr() *syscall.SysProcAttr { return nil }
