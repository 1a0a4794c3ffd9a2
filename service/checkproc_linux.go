package service

// The /proc side of a check's process group (docs/runtime.md §2.10.3):
// when a process started, which boot this is, and the processes of a group,
// for killLeftCheck (checkproc_unix.go).

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// procStat reads the process group (field 5) and the start time in clock
// ticks after boot (field 22) of process pid from /proc/PID/stat; ok is
// false when there is no such process or no /proc.
func procStat(pid int) (pgrp int, start uint64, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, false
	}
	// pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3
	if len(f) < 20 {
		return 0, 0, false
	}
	pgrp, err1 := strconv.Atoi(f[2])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	return pgrp, start, err1 == nil && err2 == nil
}

// bootID is this machine's boot id, "" where there is none to read.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// groupPids lists the processes of process group pgid started no
// earlier than start, by a walk of /proc.
func groupPids(pgid int, start uint64) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pgrp, st, ok := procStat(pid); ok && pgrp == pgid && st >= start {
			pids = append(pids, pid)
		}
	}
	return pids
}
