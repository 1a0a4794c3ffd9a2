package service

// On Windows a check's job object (checkgroup_windows.go) is killed by
// the system when the agentd that made it ends, however it ends
// (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE): nothing is recorded for the next
// agentd to kill, and there is nothing left for it to find.

// procStat reports no process: nothing is recorded (recordedProcess).
func procStat(int) (pgrp int, start uint64, ok bool) { return 0, 0, false }

// bootID is "": nothing is recorded.
func bootID() string { return "" }

// killLeftCheck kills nothing: the system killed the check's job with
// the agentd that ran it.
func killLeftCheck(checkProcess, []string) bool { return false }
