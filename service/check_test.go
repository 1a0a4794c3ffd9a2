package service

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/agentd/agentd/goal"
)

// TestTailBuffer: however much is written, in whatever pieces, the buffer
// holds at most 2×MaxCheckTailBytes and the tail is the last bytes, cut at
// a character boundary, with the note after it, within MaxCheckTailBytes.
func TestTailBuffer(t *testing.T) {
	var tb tailBuffer
	line := strings.Repeat("é", 50) + "\n" // 101 bytes, two-byte characters
	for range 20000 {
		tb.Write([]byte(line))
		if len(tb.buf) > 2*goal.MaxCheckTailBytes {
			t.Fatalf("buffer holds %d bytes", len(tb.buf))
		}
	}
	tb.Write([]byte("THE END\n"))
	got := tb.text("")
	if len(got) > goal.MaxCheckTailBytes || !utf8.ValidString(got) || !strings.HasSuffix(got, "é\nTHE END\n") {
		t.Errorf("tail of %d bytes, valid %v, ends %q", len(got), utf8.ValidString(got), got[max(0, len(got)-20):])
	}
	if len(got) < goal.MaxCheckTailBytes-2 {
		t.Errorf("tail of %d bytes, want about %d", len(got), goal.MaxCheckTailBytes)
	}
	if tb.total != int64(20000*len(line)+8) {
		t.Errorf("total %d", tb.total)
	}
	noted := tb.text("agentd: the check was killed: x")
	if len(noted) > goal.MaxCheckTailBytes || !strings.HasSuffix(noted, "THE END\nagentd: the check was killed: x\n") {
		t.Errorf("noted tail ends %q (%d bytes)", noted[max(0, len(noted)-60):], len(noted))
	}

	var one tailBuffer
	one.Write([]byte(strings.Repeat("x", 3*goal.MaxCheckTailBytes) + "\xff"))
	if got := one.text("n"); len(got) > goal.MaxCheckTailBytes || !utf8.ValidString(got) || !strings.HasSuffix(got, "x\uFFFD\nn\n") {
		t.Errorf("one big write with invalid UTF-8: %d bytes, ends %q", len(got), got[max(0, len(got)-10):])
	}
	var none tailBuffer
	if got := none.text("agentd: the check did not start: x"); got != "agentd: the check did not start: x\n" {
		t.Errorf("empty tail with a note: %q", got)
	}
}

// TestProcStat: the process group and start time of this process, as
// killLeftCheck compares them; none for a pid that does not run.
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
	if killLeftCheck(goal.CheckProcess{Pgid: os.Getpid(), Start: start + 1, Boot: bootID()}, "g") {
		t.Error("killLeftCheck killed a group whose leader's start time differs")
	}
	if killLeftCheck(goal.CheckProcess{Pgid: 1 << 30, Start: start, Boot: "another machine"}, "g") {
		t.Error("killLeftCheck acted on a process of another machine")
	}
}

// TestKillLeftCheckNeedsTheGoalsMark: a running mark read from the store
// (in a team folder, anyone with etcd access writes it) names a process
// group of this machine by its id, its leader's start time and the boot
// id. A group whose leader has the right start time but is not a check of
// that goal (no AGENTD_GOAL_ID of it) is left alone; a check's group is
// killed.
func TestKillLeftCheckNeedsTheGoalsMark(t *testing.T) {
	start := func(env ...string) (*exec.Cmd, goal.CheckProcess) {
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
		return cmd, goal.CheckProcess{Pgid: cmd.Process.Pid, Start: st, Boot: bootID()}
	}
	other, p := start()
	if killLeftCheck(p, "g1") {
		t.Error("killLeftCheck killed a process group that is no check of the goal")
	}
	if other.ProcessState != nil || syscall.Kill(other.Process.Pid, 0) != nil {
		t.Error("the other process group is gone")
	}
	check, p := start("AGENTD_GOAL_ID=g1")
	if killLeftCheck(p, "g2") {
		t.Error("killLeftCheck killed the check of another goal")
	}
	if !killLeftCheck(p, "g1") {
		t.Fatal("killLeftCheck did not kill the goal's check")
	}
	if err := check.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("the check's process ended with %v, want killed", err)
	}
}

// TestTailBufferRedactsAcrossCuts: a secret is redacted wherever it falls,
// also when it straddles the point where the buffer dropped older output
// or where the stored tail begins: no end of it of 4 bytes or more is
// left at the tail's start.
func TestTailBufferRedactsAcrossCuts(t *testing.T) {
	secret := "correct-horse-battery-staple"
	for _, before := range []int{0, 100, goal.MaxCheckTailBytes - 10, 2*goal.MaxCheckTailBytes + len(secret) - 5, 3 * goal.MaxCheckTailBytes} {
		for after := goal.MaxCheckTailBytes - len(secret); after <= goal.MaxCheckTailBytes+len(secret)+2; after++ {
			for _, chunk := range []int{1, 7, 4096, 1 << 20} {
				tb := newTailBuffer([]string{secret})
				out := strings.Repeat("a", before) + secret + strings.Repeat("b", after)
				for i := 0; i < len(out); i += chunk {
					tb.Write([]byte(out[i:min(len(out), i+chunk)]))
				}
				got := tb.text("")
				if strings.Contains(got, secret) || len(got) > goal.MaxCheckTailBytes {
					t.Fatalf("before %d after %d chunk %d: the secret is shown (%d bytes)", before, after, chunk, len(got))
				}
				for k := 4; k < len(secret); k++ {
					if strings.HasPrefix(got, secret[len(secret)-k:]) {
						t.Fatalf("before %d after %d chunk %d: the tail begins with the secret's end %q", before, after, chunk, secret[len(secret)-k:])
					}
				}
			}
		}
	}
}
