package service

import (
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestCheckGroup: the contract of a check's group on every system
// (checkgroup_unix.go, checkgroup_windows.go). The command is held until
// Run: nothing of it prints before. Once run, it prints and leaves a
// process in the background that holds its output open; Kill ends that
// process too, so the output reaches its end. It runs here on Linux and
// is built for macOS and Windows by tests/run.sh.
func TestCheckGroup(t *testing.T) {
	command := "echo ran; sleep 60 & wait"
	if runtime.GOOS == "windows" {
		command = "echo ran& start /b ping -n 60 127.0.0.1" // ping prints on the same output
	}
	cmd := checkShell(command)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	cmd.Stdout, cmd.Stderr = pw, pw
	group, err := startCheck(cmd)
	pw.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer group.Close()
	if group.Pid() != cmd.Process.Pid {
		t.Errorf("Pid() = %d, want the shell's %d", group.Pid(), cmd.Process.Pid)
	}
	first := make(chan string, 1) // the first bytes printed
	out := make(chan string, 1)   // all of it, once it ends
	go func() {
		b := make([]byte, 64)
		n, _ := pr.Read(b)
		first <- string(b[:n])
		rest, _ := io.ReadAll(pr)
		out <- string(b[:n]) + string(rest)
	}()
	select {
	case got := <-first:
		t.Fatalf("the held command printed %q before Run", got)
	case <-time.After(300 * time.Millisecond):
	}
	if err := group.Run(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if runtime.GOOS != "windows" { // cmd.exe exits once it has started ping
		select {
		case err := <-exited:
			t.Fatalf("the shell exited before Kill: %v", err)
		case <-time.After(300 * time.Millisecond):
		}
	}
	if err := group.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-out:
		if !strings.HasPrefix(strings.TrimSpace(got), "ran") {
			t.Errorf("output %q, want ran first", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the output did not end after Kill: a process of the group still runs")
	}
	<-exited
}
