package service

import "encoding/json"

// checkProcess is the process group of a running check, recorded in the
// goal (goal.Check.Process, opaque to the rules) so that the next agentd
// kills what a process that ended left running (docs/runtime.md §2.10.3):
// Pgid is the group's id, the pid of the shell that leads it; Start is that
// shell's start time (Linux: clock ticks after boot, field 22 of
// /proc/PID/stat; macOS: microseconds since the epoch, kern.proc.pid),
// which tells it from a later process that got the same pid; Boot is the
// machine's boot id (/proc/sys/kernel/random/boot_id; macOS:
// kern.bootsessionuuid), which
// tells this machine and boot from another (a team folder's other daemons,
// a reboot). Its JSON is the stored format: the record keeps it as it is.
type checkProcess struct {
	Pgid  int    `json:"pgid"`
	Start uint64 `json:"start"`
	Boot  string `json:"boot"`
}

// recordedProcess is what execCheck records of the check whose group pgid
// leads; false where this system does not say when a process started or
// which boot this is (procStat, bootID), so that nothing is recorded.
func recordedProcess(pgid int) ([]byte, bool) {
	_, started, ok := procStat(pgid)
	boot := bootID()
	if !ok || boot == "" {
		return nil, false
	}
	b, err := json.Marshal(checkProcess{Pgid: pgid, Start: started, Boot: boot})
	return b, err == nil
}

// leftProcess reads what recordedProcess recorded; false when the record
// holds something else.
func leftProcess(b []byte) (checkProcess, bool) {
	var p checkProcess
	return p, json.Unmarshal(b, &p) == nil
}
