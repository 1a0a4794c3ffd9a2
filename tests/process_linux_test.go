package tests

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/tests/lsptest"
)

// TestInheritedDescriptorsLeftAsFound: agentd (a stdio server, a
// forwarder) given a pipe or a socket as stdin, which the test shares,
// leaves it in blocking mode when it exits: the next reader of the same
// pipe gets no EAGAIN. A pipe stays blocking while agentd runs, too.
func TestInheritedDescriptorsLeftAsFound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		args   []string
		socket bool
	}{
		{"stdio pipe", nil, false},
		{"forwarder pipe", []string{"--remote=auto"}, false},
		{"stdio socket", nil, true},
		{"forwarder socket", []string{"--remote=auto"}, true}, // the daemon serves it (docs/shared-daemon.md, "Handoff")
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if len(tc.args) > 0 {
				t.Cleanup(e.stopDaemons)
			}
			var fds [2]int // close-on-exec: agentd gets fds[0] as its stdin only
			var err error
			if tc.socket {
				fds, err = syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
			} else {
				err = syscall.Pipe2(fds[:], syscall.O_CLOEXEC)
			}
			if err != nil {
				t.Fatal(err)
			}
			ours := os.NewFile(uintptr(fds[0]), "stdin") // agentd's stdin, shared with the test
			in := os.NewFile(uintptr(fds[1]), "to agentd")
			t.Cleanup(func() { ours.Close(); in.Close() })
			cmd := e.command(tc.args...)
			cmd.Stdin = ours
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr lsptest.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`
			fmt.Fprintf(in, "Content-Length: %d\r\n\r\n%s", len(body), body)
			if _, err := lsptest.ReadFrame(bufio.NewReader(stdout)); err != nil { // agentd reads its stdin now
				t.Fatalf("no answer to initialize: %v; stderr:\n%s", err, stderr.String())
			}
			if !tc.socket && nonblocking(t, fds[0]) {
				t.Errorf("the shared pipe is non-blocking while agentd runs")
			}
			in.Close()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(waitLimit):
				cmd.Process.Kill()
				t.Fatalf("agentd did not exit at the end of its input; stderr:\n%s", stderr.String())
			}
			if nonblocking(t, fds[0]) {
				t.Fatalf("agentd left its stdin (shared with the test) non-blocking; stderr:\n%s", stderr.String())
			}
		})
	}
}

// nonblocking reports whether O_NONBLOCK is set on fd's open file description.
func nonblocking(t *testing.T, fd int) bool {
	t.Helper()
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFL, 0)
	if errno != 0 {
		t.Fatalf("fcntl: %v", errno)
	}
	return flags&syscall.O_NONBLOCK != 0
}

// TestAutoStartedDaemonHoldsNoCallerDescriptor: a forwarder whose stdout,
// stderr and one more descriptor are a pipe its caller reads to the end
// (like `x=$(… | agentd --remote=auto 3>&1)`) starts the daemon without
// passing any of them on: the pipe ends when the forwarder exits, and the
// daemon, in a session of its own, holds /dev/null, daemon.log and its own
// files only.
func TestAutoStartedDaemonHoldsNoCallerDescriptor(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	t.Cleanup(e.stopDaemons)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(r.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	cmd := e.command("--remote=auto")
	cmd.Stdin = strings.NewReader("")
	cmd.Stdout, cmd.Stderr, cmd.ExtraFiles = w, w, []*os.File{w}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	output := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(r) // until every holder of the write end is gone
		output <- string(b)
	}()
	select {
	case out := <-output:
		if err := cmd.Wait(); err != nil {
			t.Fatalf("forwarder: %v; output %q", err, out)
		}
	case <-time.After(waitLimit):
		t.Fatalf("the caller's pipe did not end within %v of the forwarder's start: the daemon holds it (daemons %v)", waitLimit, e.daemonPids())
	}
	pid := e.oneDaemon()
	pipe := fmt.Sprintf("pipe:[%d]", st.Ino)
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		switch {
		case target == pipe:
			t.Errorf("the daemon holds the caller's pipe as fd %s", fd.Name())
		case fd.Name() == "0" || fd.Name() == "1":
			if target != os.DevNull {
				t.Errorf("the daemon's fd %s is %s, want %s", fd.Name(), target, os.DevNull)
			}
		case fd.Name() == "2":
			if want := filepath.Join(filepath.Dir(e.socketPath()), "daemon.log"); target != want {
				t.Errorf("the daemon's stderr is %s, want %s", target, want)
			}
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name: state, ppid, pgrp, session.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if fields[3] != strconv.Itoa(pid) {
		t.Errorf("the daemon (pid %d) is in session %s, want its own", pid, fields[3])
	}
}

// TestInvisibleProcessIDNotTakenForDead: a client whose processId is no
// process agentd can see when it initializes (another PID namespace) is
// not taken for dead: agentd logs that it does not watch it and serves on.
// The client's end still ends agentd (here: its input closes).
func TestInvisibleProcessIDNotTakenForDead(t *testing.T) {
	t.Parallel()
	const beyondPidMax = 1 << 30 // pid_max is at most 2^22
	for _, tc := range []struct {
		name      string
		args      []string
		pid       int
		namespace bool
	}{
		{"stdio", nil, beyondPidMax, false},
		{"forwarder", []string{"--remote=auto"}, beyondPidMax, false},
		// agentd in a PID namespace of its own, given the test's pid:
		// alive, but not visible from there.
		{"stdio in a pid namespace", nil, os.Getpid(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if len(tc.args) > 0 {
				t.Cleanup(e.stopDaemons)
			}
			cmd := e.command(tc.args...)
			if tc.namespace {
				probe := exec.Command("true")
				probe.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
				if err := probe.Run(); err != nil {
					t.Skipf("cannot start a process in a new PID namespace here: %v", err)
				}
				cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
			}
			p := e.run(cmd)
			c := p.connect()
			if err := c.Call("initialize", map[string]any{"processId": tc.pid, "rootUri": fileURI(e.ws), "capabilities": map[string]any{}}, nil); err != nil {
				t.Fatal(err)
			}
			c.MustNotify("initialized", map[string]any{})
			// The daemon watches the processId of a forwarder's editor,
			// whose pipes it serves (docs/shared-daemon.md, "Handoff"): the
			// line is in its log.
			logged := func() string {
				if len(tc.args) > 0 {
					data, _ := os.ReadFile(filepath.Join(e.runDir, "agentd", "daemon.log"))
					return string(data)
				}
				return p.Stderr.String()
			}
			waitFor(t, "agentd to log that it does not watch the processId", func() bool {
				return strings.Contains(logged(), "not watching it") && strings.Contains(logged(), "processId="+strconv.Itoa(tc.pid))
			})
			c.tool("TodoList", map[string]any{"todos": []item{{"still served", "pending"}}})
			select {
			case <-p.Exited():
				t.Fatalf("agentd exited (%v) although its client lives; stderr:\n%s", p.Cmd.ProcessState, p.Stderr.String())
			default:
			}
			if code := c.shutdown(); code != 0 {
				t.Fatalf("exit code after shutdown and exit: %d", code)
			}
		})
	}
}
