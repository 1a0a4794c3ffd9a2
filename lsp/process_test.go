package lsp

import (
	"os"
	"os/exec"
	"testing"
)

// TestProcessExists: the liveness of a client's process, by which a
// connection's turns end when their agent is gone (process_unix.go,
// process_windows.go): this process runs, a child that ended and was
// waited for does not. It runs here on Linux and is built for the others
// by tests/run.sh.
func TestProcessExists(t *testing.T) {
	if !processExists(os.Getpid()) {
		t.Error("this process does not exist")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if processExists(cmd.Process.Pid) {
		t.Errorf("the ended child %d exists", cmd.Process.Pid)
	}
}
