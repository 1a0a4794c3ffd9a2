package tests

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/agentd/agentd/tests/lsptest"
)

// openPty opens a pseudo-terminal: the controlling side, and the terminal
// a child gets as its stdin. It skips the test where there is none.
func openPty(t *testing.T) (control, term *os.File) {
	t.Helper()
	control, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { control.Close() })
	var unlock int32
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, control.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatalf("unlocking the pseudo-terminal: %v", e)
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, control.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatalf("naming the pseudo-terminal: %v", e)
	}
	term, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { term.Close() })
	return control, term
}

// TestTerminalHint: started by hand with a terminal on stdin, plain agentd,
// `agentd mcp` and `agentd --remote=auto` each say on stderr what they are
// and who starts them, instead of waiting silently, and Ctrl-D ends them;
// with a pipe on stdin (an editor, an agent) or /dev/null they say nothing
// of the kind.
func TestTerminalHint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "waits for LSP messages on stdin"},
		{[]string{"mcp"}, "agentd mcp is an MCP server"},
		{[]string{"--remote=auto"}, "agentd --remote is an editor's connection to the shared agentd daemon"},
	} {
		t.Run(strings.Join(append([]string{"agentd"}, tc.args...), " "), func(t *testing.T) {
			e := newEnv(t)
			e.stopDaemonsAtEnd()
			control, term := openPty(t)
			cmd := e.command(append(tc.args, "--workspace", e.ws)...)
			stderr := &lsptest.Buffer{}
			cmd.Stdin, cmd.Stderr = term, stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			waitFor(t, "the hint on stderr", func() bool { return strings.Contains(stderr.String(), tc.want) })
			if !strings.Contains(stderr.String(), "Ctrl-D") {
				t.Errorf("hint without how to quit:\n%s", stderr.String())
			}
			control.Write([]byte{4}) // Ctrl-D: end of input
			select {
			case <-exited:
			case <-time.After(waitLimit):
				cmd.Process.Kill()
				t.Fatalf("Ctrl-D did not end it; stderr:\n%s", stderr.String())
			}

			p := e.start(append(tc.args, "--workspace", e.ws)...) // stdin a pipe
			p.Stdin.Close()
			p.waitExit()
			if strings.Contains(p.Stderr.String(), tc.want) {
				t.Errorf("with a pipe on stdin it printed the hint:\n%s", p.Stderr.String())
			}

			// /dev/null is a character device too, but no terminal.
			null, err := os.Open(os.DevNull)
			if err != nil {
				t.Fatal(err)
			}
			defer null.Close()
			cmd = e.command(append(tc.args, "--workspace", e.ws)...)
			var out strings.Builder
			cmd.Stdin, cmd.Stderr = null, &out
			cmd.Run() // the end of input ends it; its exit code is not the point
			if strings.Contains(out.String(), tc.want) {
				t.Errorf("with /dev/null on stdin it printed the hint:\n%s", out.String())
			}
		})
	}
}
