//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package workspace

import (
	"bytes"
	"os"
	"syscall"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/agentd/agentd/workspace/boltstore"
)

// TestOpenAfterCompactionByAnotherProcess: a process that waited for the
// lock while another one compacted the store (renaming a new file over the
// old one, then releasing the old one's lock) must not use the old,
// unlinked file: its writes would be lost. It opens again and writes to
// the file at the path.
func TestOpenAfterCompactionByAnotherProcess(t *testing.T) {
	stateDir, root := t.TempDir(), folder(t)
	r := newRegistry(t, stateDir, func(o *Options) { o.LockTimeout = 5 * time.Second })
	w, err := r.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	setTodos(t, w, "s", items("before"))
	w.Release()
	path := statePath(stateDir, root)

	done := make(chan error, 1)
	t.Cleanup(func() { afterOpenFile = nil })
	afterOpenFile = func(name string) {
		afterOpenFile = nil // once
		// "Another process" holds the lock of the file just opened...
		old, err := os.Open(name)
		if err != nil {
			done <- err
			return
		}
		if err := syscall.Flock(int(old.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			done <- err
			return
		}
		// ...puts a compacted copy (here: an identical one) in its place,
		// and only then releases the old file.
		go func() {
			defer old.Close()
			tmp := path + ".other"
			if err := copyFile(name, tmp); err != nil {
				done <- err
				return
			}
			if err := os.Rename(tmp, path); err != nil {
				done <- err
				return
			}
			time.Sleep(200 * time.Millisecond)
			done <- syscall.Flock(int(old.Fd()), syscall.LOCK_UN)
		}()
	}
	w, err = r.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	setTodos(t, w, "s", items("after"))
	w.Release()

	// What was written is in the file at the path.
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rec []byte
	db.View(func(tx *bbolt.Tx) error {
		rec = bytes.Clone(tx.Bucket(boltstore.BucketSessions).Get([]byte("s")))
		return nil
	})
	if !bytes.Contains(rec, []byte(`"after"`)) {
		t.Fatalf("the write after open is not in %s: session record %s", path, rec)
	}
}
