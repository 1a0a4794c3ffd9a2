//go:build unix && !linux && !darwin

package service

// procStat would read the process group and start time of process pid;
// agentd reads them on Linux and macOS only, so elsewhere a check's
// process group is never recorded (recordedProcess) and the next agentd
// cannot stop what an ended one left running (docs/runtime.md §2.10.3).
func procStat(int) (pgrp int, start uint64, ok bool) { return 0, 0, false }

// bootID is "": nothing recorded, see procStat.
func bootID() string { return "" }

// groupPids is nil: nothing recorded, see procStat.
func groupPids(int, uint64) []int { return nil }
