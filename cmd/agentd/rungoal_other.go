//go:build !linux

package main

import (
	"os"
	"syscall"
)

// agentProcAttr is nothing here: only Linux ends a child with its parent
// (a killed `agentd run` leaves its agent running until it stops by
// itself; docs/commands.md, "Running a goal unattended").
func agentProcAttr() *syscall.SysProcAttr { return nil }

// terminalWidth is 0 here (not read): the status line is cut to
// defaultTerminalWidth.
func terminalWidth(*os.File) int { return 0 }
