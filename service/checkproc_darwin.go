package service

// The sysctl side of a check's process group on macOS (docs/runtime.md
// §2.10.3): when a process started (kern.proc.pid), which boot this is
// (kern.bootsessionuuid), and the processes of a group (kern.proc.pgrp),
// for killLeftCheck (checkproc_unix.go).

import "golang.org/x/sys/unix"

// procStat reads the process group and the start time, in microseconds
// since the epoch, of process pid from kern.proc.pid; ok is false when
// there is no such process.
func procStat(pid int) (pgrp int, start uint64, ok bool) {
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || k.Proc.P_pid != int32(pid) {
		return 0, 0, false
	}
	t := k.Proc.P_starttime
	return int(k.Eproc.Pgid), uint64(t.Sec)*1e6 + uint64(t.Usec), true
}

// bootID is this boot's session UUID, "" where the system gives none.
func bootID() string {
	id, err := unix.Sysctl("kern.bootsessionuuid")
	if err != nil {
		return ""
	}
	return id
}

// groupPids lists the processes of process group pgid started no
// earlier than start (kern.proc.pgrp).
func groupPids(pgid int, start uint64) []int {
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.pgrp", pgid)
	if err != nil {
		return nil
	}
	var pids []int
	for _, k := range procs {
		t := k.Proc.P_starttime
		if uint64(t.Sec)*1e6+uint64(t.Usec) >= start {
			pids = append(pids, int(k.Proc.P_pid))
		}
	}
	return pids
}
