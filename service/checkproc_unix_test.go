//go:build unix

package service

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestProcStat: the process group and start time of this process, as
// killLeftCheck compares them; none for a pid that does not run. It runs
// here on Linux (/proc) and is built for macOS (sysctl) by tests/run.sh.
func TestProcStat(t *testing.T) {
	pgrp, start, ok := procStat(os.Getpid())
	if !ok || pgrp != syscall.Getpgrp() || start == 0 {
		t.Errorf("procStat(self) = %d %d %v, want group %d and a start time", pgrp, start, ok, syscall.Getpgrp())
	}
	if _, again, _ := procStat(os.Getpid()); again != start {
		t.Errorf("start time changed: %d then %d", start, again)
	}
	if _, _, ok := procStat(1 << 30); ok {
		t.Error("procStat of a pid that does not run is ok")
	}
	if bootID() == "" {
		t.Fatal("no boot id")
	}
	if killLeftCheck(checkProcess{Pgid: os.Getpid(), Start: start + 1, Boot: bootID()}, checkKey{"/w", "s", "g"}.marks()) {
		t.Error("killLeftCheck killed a group whose leader's start time differs")
	}
	if killLeftCheck(checkProcess{Pgid: 1 << 30, Start: start, Boot: "another machine"}, checkKey{"/w", "s", "g"}.marks()) {
		t.Error("killLeftCheck acted on a process of another machine")
	}
}

// TestKillLeftCheckNeedsTheChecksMarks: a running mark read from the
// store (in a team folder, anyone with etcd access writes it) names a
// process group of this machine by its id, its leader's start time and the
// boot id. A group whose leader has the right start time but is not the
// check of that goal, session and folder (checkKey.marks: a process with
// none of them, or the running check of the same goal id in another
// session, whose id a writer copied into the session it forged) is left
// alone; the check's own group is killed.
func TestKillLeftCheckNeedsTheChecksMarks(t *testing.T) {
	start := func(env ...string) (*exec.Cmd, checkProcess) {
		cmd := exec.Command("sleep", "30")
		cmd.Env = append(os.Environ(), env...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		_, st, ok := procStat(cmd.Process.Pid)
		if !ok {
			t.Fatal("no /proc stat of the child")
		}
		return cmd, checkProcess{Pgid: cmd.Process.Pid, Start: st, Boot: bootID()}
	}
	mine := checkKey{root: "/home/me/project", session: "default", goalID: "g1"}
	other, p := start()
	if killLeftCheck(p, mine.marks()) {
		t.Error("killLeftCheck killed a process group that is no check of the goal")
	}
	if other.ProcessState != nil || syscall.Kill(other.Process.Pid, 0) != nil {
		t.Error("the other process group is gone")
	}
	check, p := start(mine.marks()...)
	for _, k := range []checkKey{
		{root: mine.root, session: mine.session, goalID: "g2"},
		{root: mine.root, session: "forged", goalID: mine.goalID},
		{root: "/another/folder", session: mine.session, goalID: mine.goalID},
	} {
		if killLeftCheck(p, k.marks()) {
			t.Fatalf("killLeftCheck for %+v killed the check of %+v", k, mine)
		}
	}
	if !killLeftCheck(p, mine.marks()) {
		t.Fatal("killLeftCheck did not kill the goal's check")
	}
	if err := check.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("the check's process ended with %v, want killed", err)
	}
}
