package daemon

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestSocketFile: the contract of the socket file on every system
// (socket_unix.go, socket_windows.go): listenPrivate makes the socket,
// socketInode names it the same while it stands, makePrivate keeps
// it to the user, and socketInode tells a missing path (fs.ErrNotExist)
// from one that is no socket. It runs here on Linux and is built for
// macOS and Windows by tests/run.sh.
func TestSocketFile(t *testing.T) {
	dir, err := os.MkdirTemp("", "sf")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "d.sock")
	ln, err := listenPrivate(path)
	if err != nil {
		t.Fatal(err)
	}
	ino, err := socketInode(path)
	if err != nil {
		t.Fatalf("socketInode = %v", err)
	}
	if err := makePrivate(path); err != nil {
		t.Fatalf("makePrivate = %v", err)
	}
	if again, err := socketInode(path); err != nil || again != ino {
		t.Errorf("socketInode again = %d, %v; want %d", again, err, ino)
	}
	ln.Close() // removes the socket file
	if _, err := socketInode(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socketInode of a removed socket = %v, want not exist", err)
	}
	ln, err = listenPrivate(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, err := socketInode(path); err != nil { // the system may give it the old number
		t.Errorf("socketInode of a new socket = %v", err)
	}
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := socketInode(plain); err == nil {
		t.Error("socketInode of a plain file passed")
	}
}
