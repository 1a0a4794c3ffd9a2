//go:build unix

package service

import (
	"slices"

	"github.com/agentd/agentd/caller"
)

// killLeftCheck kills the process group p of a check that an agentd
// process that ended left running (docs/runtime.md §2.10.3), if it is
// still that check's group: its leader is the same process (the same start
// time) and has every one of the check's marks (checkKey.marks: its goal,
// session and folder) in its environment, or, the leader gone (or a
// zombie, which shows no environment), a process of the group started no
// earlier has them. The record comes from the store, which in a team
// folder anyone with etcd access writes: the environment is what shows the
// group is the check of this session that this machine's agentd started,
// not any process group of the user, nor another session's running check,
// whose id and start time a writer learnt or guessed. It says whether it
// killed the group. The system's facts are procStat, bootID and groupPids
// (checkproc_linux.go: /proc; checkproc_darwin.go: sysctl); the
// environment is caller.Environ's.
func killLeftCheck(p checkProcess, marks []string) bool {
	if p.Pgid <= 1 || p.Boot == "" || p.Boot != bootID() || len(marks) == 0 {
		return false // another machine's process (a team folder), or gone with a reboot
	}
	hasMarks := func(pid int) bool {
		env, err := caller.Environ(pid)
		return err == nil && !slices.ContainsFunc(marks, func(m string) bool { return !slices.Contains(env, m) })
	}
	if _, start, ok := procStat(p.Pgid); ok {
		if start != p.Start {
			return false // the pid is another process's now
		}
		if hasMarks(p.Pgid) {
			return killGroup(p.Pgid) == nil
		}
		// A leader that has ended but was not reaped yet shows no
		// environment: its group's other processes may still show it.
	}
	if slices.ContainsFunc(groupPids(p.Pgid, p.Start), hasMarks) {
		return killGroup(p.Pgid) == nil
	}
	return false
}
