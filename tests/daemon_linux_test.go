package tests

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestDaemonRefusesOtherUser: a connection from another user id is
// refused even when the socket's permissions would let it in.
func TestDaemonRefusesOtherUser(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("needs root to run a client as another user (uid 65534)")
	}
	e := newEnv(t)
	// A directory and socket everyone may reach, so that only the daemon's
	// own check (SO_PEERCRED) stands between the other user and it.
	dir, err := os.MkdirTemp("", "agentd-peer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "agentd")
	data, err := os.ReadFile(agentdBin)
	if err != nil {
		t.Fatalf("copying agentd: %v", err)
	}
	writeExecutable(t, bin, data)
	sock := filepath.Join(dir, "d.sock")
	d := e.start("serve", "--listen=unix:"+sock, "--listen.timeout=0")
	t.Cleanup(func() { d.Cmd.Process.Signal(syscall.SIGTERM); d.waitExit() })
	// Wait until the daemon answers a request: it sets the socket's mode
	// before it serves, so our chmod below cannot be undone by it.
	waitFor(t, "the daemon to answer", func() bool {
		c, err := net.Dial("unix", sock)
		if err != nil {
			return false
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(2 * time.Second))
		req := `{"jsonrpc":"2.0","id":1,"method":"shutdown"}`
		fmt.Fprintf(c, "Content-Length: %d\r\n\r\n%s", len(req), req)
		_, err = c.Read(make([]byte, 1))
		return err == nil
	})
	if err := os.Chmod(sock, 0o666); err != nil {
		t.Fatal(err)
	}

	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`
	other := exec.Command(bin, "--remote=unix:"+sock, "--state-dir", filepath.Join(dir, "none"))
	other.Dir = dir
	other.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir}
	other.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	stdin, _ := other.StdinPipe()
	var out, errOut bytes.Buffer
	other.Stdout, other.Stderr = &out, &errOut
	if err := other.Start(); err != nil {
		t.Skipf("cannot start a process as uid 65534 here: %v", err)
	}
	fmt.Fprintf(stdin, "Content-Length: %d\r\n\r\n%s", len(init), init) // kept open: the daemon must end it
	done := make(chan error, 1)
	go func() { done <- other.Wait() }()
	select {
	case err = <-done:
	case <-time.After(waitLimit):
		other.Process.Kill()
		t.Fatalf("the other user's forwarder was not cut off; stderr %q", errOut.String())
	}
	stdin.Close()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || out.Len() != 0 || !strings.Contains(errOut.String(), "lost the shared daemon") {
		t.Fatalf("other user's forwarder: %v, stdout %q, stderr %q; want a non-zero exit, no answer, and the lost-daemon message", err, out.String(), errOut.String())
	}
	waitFor(t, "the daemon to log the refusal", func() bool {
		return strings.Contains(d.Stderr.String(), "refused a connection from another user") && strings.Contains(d.Stderr.String(), "user=65534")
	})
	// The daemon goes on serving its own user.
	c := connectSocket(t, sock)
	c.Initialize(nil, e.ws)
	c.tool("TodoList", nil)
}

// TestDaemonStoppedShellCommandsExit: a daemon that accepts connections but
// never answers (SIGSTOP) makes `agentd state`, `agentd tool` and a new
// forwarder's initialize end with exit 1 and a message naming its pid,
// instead of waiting forever.
func TestDaemonStoppedShellCommandsExit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, a := e.forwarder()
	a.Initialize(nil, e.ws)
	a.tool("TodoList", map[string]any{"todos": []item{{"before", "in_progress"}}})
	pid := e.oneDaemon()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) }) // runs before stopDaemons
	want := fmt.Sprintf("the shared daemon at %s (pid %d) does not answer", e.socketPath(), pid)

	e.stopDaemonsAtEnd()
	fwd := e.start("--remote=auto")
	fwd.raw().send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`)

	var wg sync.WaitGroup
	for _, args := range [][]string{
		{"state", "--workspace", e.ws},
		{"tool", "TodoList", `{"todos":[{"title":"x","status":"pending"}]}`, "--workspace", e.ws},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errOut, code, took := runBounded(t, e.command(args...))
			if code != 1 || !strings.Contains(errOut, want) || !strings.Contains(errOut, fmt.Sprintf("kill %d", pid)) || !strings.Contains(errOut, "initialize within 5s") {
				t.Errorf("agentd %s with a stopped daemon: code %d stderr %q, want 1 and %q, the wait and `kill %d`", args[0], code, errOut, want, pid)
			}
			if took > 10*time.Second {
				t.Errorf("agentd %s took %v, want about 5 s", args[0], took)
			}
		}()
	}
	wg.Wait()
	// The forwarder gives up 10 s after it asked the daemon to adopt its
	// pipes (agentd/adopt: they are pipes here), which may have been after
	// the shell commands began: its own bound, then waitLimit for a loaded
	// machine.
	if code := fwd.waitExitWithin(10*time.Second + waitLimit); code != 1 {
		t.Errorf("forwarder exit code %d with a stopped daemon, want 1", code)
	}
	if msg := fwd.Stderr.String(); !strings.Contains(msg, want) || !strings.Contains(msg, "agentd/adopt within 10s") {
		t.Errorf("forwarder stderr = %q, want %q and the 10 s wait", msg, want)
	}
	syscall.Kill(pid, syscall.SIGCONT)
	if st := a.state(); st.Revision != 1 {
		t.Errorf("after SIGCONT the first client reads revision %d, want 1 (the tool call that timed out was never sent)", st.Revision)
	}
}
