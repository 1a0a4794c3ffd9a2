package tests

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/agentd/agentd/tests/lsptest"
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
	requests := filepath.Join(t.TempDir(), "requests")
	if err := os.WriteFile(requests, []byte(pipedTools(e.ws, n)+framed([]string{`{"jsonrpc":"2.0","id":"shutdown","method":"shutdown"}`, `{"jsonrpc":"2.0","method":"exit"}`})), 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(requests)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	cmd := e.command()
	p := &proc{Process: &lsptest.Process{Cmd: cmd, Stderr: &lsptest.Buffer{}}, t: t}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, outW, p.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	t.Cleanup(func() { kill(cmd.Process.Pid, syscall.SIGCONT); cmd.Process.Kill(); cmd.Wait() })
	// Full: what the pipe holds stays as it is (a pipe holds up to 64 KiB,
	// less where writes left pages part full).
	held := 0
	waitFor(t, "agentd to fill the pipe", func() bool {
		time.Sleep(100 * time.Millisecond)
		was := held
		held = pipeHolds(t, outR)
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
	r := &raw{t: t, p: p, in: bufio.NewReader(outR)}
	got, _ := r.responses(n + 2)
	for i := range n {
		if m := got[fmt.Sprint("t", i)]; m["result"] == nil {
			t.Fatalf("reply to t%d: %v", i, m)
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("agentd after shutdown and exit: %v, want exit 0\n%s", err, p.Stderr.String())
	}
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
