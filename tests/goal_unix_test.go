//go:build unix

package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestGoalTaskFileNotRegular: a folder or a named pipe as task file is a
// clear refusal, never a hang (a FIFO would block a plain open).
func TestGoalTaskFileNotRegular(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := os.Mkdir(filepath.Join(e.ws, "docs"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(e.ws, "pipe.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	for _, tf := range []string{"docs", "pipe.md"} {
		err := c.Exec("agentd.goal.create", map[string]any{"objective": "x", "taskFile": tf}, nil)
		if refusalCode(err) != "args.invalid" && !strings.Contains(fmt.Sprint(err), "regular file") {
			t.Errorf("taskFile %s: %v, want a refusal saying it is not a regular file", tf, err)
		}
		res := c.tool("CreateGoal", map[string]any{"objective": "x", "taskFile": tf})
		if !res.IsError || res.ErrorCode == "" || !strings.Contains(res.Output, "regular file") {
			t.Errorf("CreateGoal with taskFile %s = %+v", tf, res)
		}
	}
	// The watcher meets a pipe that appears later and reads it as missing.
	c.MustExec("agentd.goal.create", map[string]any{"objective": "x", "taskFile": "later.md"}, nil)
	if err := syscall.Mkfifo(filepath.Join(e.ws, "later.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code := c.shutdown(); code != 0 {
		t.Fatalf("exit code %d after a pipe appeared as the task file", code)
	}
}
