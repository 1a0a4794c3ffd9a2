package main

import "syscall"

// agentProcAttr makes the agent `agentd run` starts die with it: a run
// that is killed leaves no agent working unwatched.
func agentProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
