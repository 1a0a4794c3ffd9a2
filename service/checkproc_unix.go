//go:build unix

package service

import (
	"slices"

	"github.com/agentd/agentd/caller"
)

// killLeftCheck kills the process group p of a check of the goal goalID
// that an agentd process that ended left running (docs/runtime.md
// §2.10.3), if it is still that check's group: its leader is the same
// process (the same start time) and has the goal's AGENTD_GOAL_ID, or, the
// leader gone (or a zombie, which shows no environment), a process of the
// group started no earlier has it. The record comes from the store, which
// in a team folder anyone with etcd access writes: the environment is what
// shows the group is a check this machine's agentd started, not any
// process group of the user whose id and start time a writer learnt or
// guessed. It says whether it killed the group. The system's facts are
// procStat, bootID and groupPids (checkproc_linux.go: /proc;
// checkproc_darwin.go: sysctl); the environment is caller.Environ's.
func killLeftCheck(p checkProcess, goalID string) bool {
	if p.Pgid <= 1 || p.Boot == "" || p.Boot != bootID() || goalID == "" {
		return false // another machine's process (a team folder), or gone with a reboot
	}
	mark := "AGENTD_GOAL_ID=" + goalID
	hasMark := func(pid int) bool {
		env, err := caller.Environ(pid)
		return err == nil && slices.Contains(env, mark)
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
	if slices.ContainsFunc(groupPids(p.Pgid, p.Start), hasMark) {
		return killGroup(p.Pgid) == nil
	}
	return false
}
