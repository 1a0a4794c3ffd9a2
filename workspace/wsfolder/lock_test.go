package wsfolder

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLocks: the contract of TryLock and Lock that every system's locks
// keep (flock on Unix, LockFileEx on Windows): two opens of one file
// exclude each other, shared locks go together, closing the holder
// lets go, and a lock keeps no one from reading or writing the file. It runs here on Linux and is built for the others by
// tests/run.sh.
func TestLocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	try := func(f *os.File, shared bool, want bool) {
		t.Helper()
		if got, err := TryLock(f, shared); err != nil || got != want {
			t.Fatalf("TryLock(shared %v) = %v, %v, want %v", shared, got, err, want)
		}
	}
	a, b := open(), open()
	try(a, false, true)
	try(b, false, false)
	try(b, true, false)
	a.Close()
	try(b, true, true)
	c := open()
	try(c, true, true)
	try(open(), false, false)
	b.Close()
	c.Close()
	d := open()
	if err := Lock(d); err != nil {
		t.Fatalf("Lock: %v", err)
	}
	if _, err := d.WriteString("written under the lock"); err != nil {
		t.Fatalf("a locked file cannot be written: %v", err)
	}
	e := open()
	try(e, true, false)
	if got, err := os.ReadFile(path); err != nil || string(got) != "written under the lock" {
		t.Errorf("a locked file cannot be read through another open: %q, %v", got, err)
	}
}
