//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestRunLogNeverWrittenThroughALink: the agent's output, which its model
// writes, goes to the run's log in the state directory, which an agent's
// shell may write: a symbolic link or a hard link left at the log's name
// (to ~/.bashrc, ~/.ssh/authorized_keys) had the next `agentd run` append
// the model's text to that file. The log is made anew instead, and a FIFO
// there does not hold the run.
func TestRunLogNeverWrittenThroughALink(t *testing.T) {
	state, folder := t.TempDir(), t.TempDir()
	path := runLogPath(state, folder)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "authorized_keys")
	plant := map[string]func() error{
		"symbolic link": func() error { return os.Symlink(victim, path) },
		"hard link":     func() error { return os.Link(victim, path) },
		"FIFO":          func() error { return syscall.Mkfifo(path, 0o600) },
	}
	for _, kind := range []string{"symbolic link", "hard link", "FIFO"} {
		if err := os.WriteFile(victim, []byte("keep\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(path)
		if err := plant[kind](); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		f, err := openRunLog(path)
		if err != nil {
			t.Fatalf("opening the log over a %s: %v", kind, err)
		}
		f.WriteString("ssh-ed25519 AAAA the model's key\n")
		f.Close()
		if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
			t.Errorf("a %s at the log's name: the file it led to now holds %q", kind, b)
		}
		if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("the log after a %s: %v, %v; want a file of its own", kind, fi, err)
		}
	}
	f, err := openRunLog(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("more\n")
	f.Close()
	if b, _ := os.ReadFile(path); string(b) != "ssh-ed25519 AAAA the model's key\nmore\n" {
		t.Errorf("the log of its own is appended to: %q", b)
	}
}
