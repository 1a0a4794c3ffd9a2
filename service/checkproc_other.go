//go:build !linux

package service

// procStat would read the process group and start time of process pid
// from /proc; without /proc there is none, so a check's process group is
// never recorded (recordedProcess) and the next agentd cannot stop what
// an ended one left running (docs/runtime.md §2.10.3).
func procStat(int) (pgrp int, start uint64, ok bool) { return 0, 0, false }

// bootID is "": no boot id to read without /proc.
func bootID() string { return "" }

// killLeftCheck kills nothing: nothing tells a left check's group from
// another process group here (checkproc_linux.go).
func killLeftCheck(checkProcess, string) bool { return false }
