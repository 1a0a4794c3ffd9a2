package tests

import (
	"bufio"
	"os"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// TestEndWaitsOutAStarvedAgentd: a stdio agentd at the end of its input,
// with replies its client has not read yet, is not run for 3 s (SIGSTOP,
// as a loaded machine may leave it and its client alike), and its client
// reads 200 ms after it runs again: every reply arrives. agentd takes a
// client for one that stopped reading only when 16 looks in a row found
// it took nothing (docs/protocol.md §2.5); counted in wall time alone, the
// 3 s it was not run were 3 s of a client not reading, and it dropped the
// rest at its first look.
func TestEndWaitsOutAStarvedAgentd(t *testing.T) {
	// Not parallel: the client's 200 ms must stay well within agentd's
	// looks, which other tests' load would stretch.
	const n = 60 // 360 KB of replies: more than a pipe holds
	e := newEnv(t)
	p, out := startOnRequests(t, e, n)
	cmd := p.Cmd
	t.Cleanup(func() { kill(cmd.Process.Pid, syscall.SIGCONT); cmd.Process.Kill(); cmd.Wait() })
	// Full: what the pipe holds stays as it is (a pipe holds up to 64 KiB,
	// less where writes left pages part full).
	held := 0
	waitFor(t, "agentd to fill the pipe", func() bool {
		time.Sleep(100 * time.Millisecond)
		was := held
		held = pipeHolds(t, out)
		return held >= 32<<10 && held == was
	})
	if err := kill(cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // the time agentd is not run: what this test is about
	if err := kill(cmd.Process.Pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the client, not run either, resumes a moment later
	readsEveryReply(t, p, bufio.NewReader(out), n)
}

// pipeHolds is how many bytes the pipe r reads from holds unread.
func pipeHolds(t *testing.T, r *os.File) int {
	raw, err := r.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int32
	raw.Control(func(fd uintptr) { syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))) })
	return int(n)
}
