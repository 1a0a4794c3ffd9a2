//go:build !linux

package main

import "syscall"

// agentProcAttr is nothing here: only Linux ends a child with its parent
// (a killed `agentd run` leaves its agent running until it stops by
// itself; docs/commands.md, "Running a goal unattended").
func agentProcAttr() *syscall.SysProcAttr { return nil }
