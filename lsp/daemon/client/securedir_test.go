package client

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecureDir: the contract of the socket's private folder on every
// system (owner_unix.go: owner and mode 0700; owner_windows.go: owner SID
// and a protected DACL granting only that SID). SecureDir with create
// makes a folder, and missing parents, that passes; one opened to others
// (openToOthers), a plain file and a symbolic link are refused, each
// naming the folder. It runs here on Linux and is built for macOS and
// Windows by tests/run.sh.
func TestSecureDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "agentd")
	if err := SecureDir(dir, true); err != nil {
		t.Fatalf("SecureDir(create) = %v", err)
	}
	if err := SecureDir(dir, false); err != nil {
		t.Fatalf("SecureDir of the folder it made = %v", err)
	}
	if err := SecureDir(dir, true); err != nil {
		t.Fatalf("SecureDir(create) of a private folder that exists = %v", err)
	}
	if err := openToOthers(dir); err != nil {
		t.Fatal(err)
	}
	if err := SecureDir(dir, false); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("SecureDir of a folder open to others = %v, want a refusal naming it", err)
	}
	if err := SecureDir(dir, true); err == nil {
		t.Error("SecureDir(create) of a folder open to others passed")
	}
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := SecureDir(file, false); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("SecureDir of a file = %v, want not a directory", err)
	}
	link := filepath.Join(t.TempDir(), "l")
	if err := os.Symlink(filepath.Dir(file), link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	if err := SecureDir(link, false); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("SecureDir of a symbolic link = %v, want a refusal", err)
	}
}
