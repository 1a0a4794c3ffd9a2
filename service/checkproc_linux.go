package service

// The /proc side of a check's process group (docs/runtime.md §2.10.3):
// when a process started, which boot this is, and the kill of a group an
// ended agentd left running. Elsewhere checkproc_other.go records nothing.

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

// killLeftCheck kills the process group p of a check of the goal goalID
// that an agentd process that ended left running (docs/runtime.md
// §2.10.3), if it is still that check's group: its leader is the same
// process (the same start time) and has the goal's AGENTD_GOAL_ID, or, the
// leader gone (or a zombie, which shows no environment), a process of the
// group started no earlier has it. The
// record comes from the store, which in a team folder anyone with etcd
// access writes: the environment is what shows the group is a check this
// machine's agentd started, not any process group of the user whose id
// and start time a writer learnt or guessed. It says whether it killed
// the group.
func killLeftCheck(p checkProcess, goalID string) bool {
	if p.Pgid <= 1 || p.Boot == "" || p.Boot != bootID() || goalID == "" {
		return false // another machine's process (a team folder), or gone with a reboot
	}
	mark := []byte("\x00AGENTD_GOAL_ID=" + goalID + "\x00")
	hasMark := func(pid int) bool {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		return err == nil && bytes.Contains(append([]byte{0}, env...), mark)
	}
	if _, start, ok := procStat(p.Pgid); ok {
		if start != p.Start {
			return false // the pid is another process's now
		}
		if hasMark(p.Pgid) {
			return killGroup(p.Pgid) == nil
		}
		// A leader that has ended but was not reaped yet shows no
		// environment: its group's other processes may still show it.
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pgrp, start, ok := procStat(pid); !ok || pgrp != p.Pgid || start < p.Start {
			continue
		}
		if hasMark(pid) {
			return killGroup(p.Pgid) == nil
		}
	}
	return false
}
