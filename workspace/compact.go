package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.etcd.io/bbolt"

	"github.com/agentd/agentd/workspace/boltstore"
	"github.com/agentd/agentd/workspace/wsfolder"
)

// Compaction of a state file that has grown mostly free space.
//
// bbolt never shrinks its file: pages freed by deleted history events and
// rewritten sessions go to a freelist and are reused, but a file that once
// held much more than it holds now stays large. When a store is opened (and
// only then: nothing else uses the file yet), a file larger than
// compactMinSize whose free pages (bbolt's freelist) make up more than half
// of it is rewritten:
//
//  1. With the exclusive bbolt lock on state.db held, a new bbolt file
//     .state.db.compact-<pid> is created next to it; bbolt locks it
//     exclusively as it opens it.
//  2. bbolt.Compact copies every bucket, key and bucket sequence into it,
//     committing (and so fsyncing) every compactTxBytes.
//  3. The copy is checked: bbolt's consistency check and the same number of
//     keys in every top-level bucket as the original.
//  4. The copy is renamed over state.db and the directory fsynced, while
//     both locks are still held; then the old file is closed. The copy's
//     handle, locked since step 1, becomes the store's.
//
// A crash before step 4 leaves state.db untouched and a leftover copy,
// removed by the next open; a crash after it leaves the complete, synced
// copy. Any failure before the rename logs a warning and keeps using the
// original file. Another process that was waiting for the lock of the old
// file gets it only once the file is no longer state.db; openDB then sees
// that the file it locked is not the one at the path, and opens again.

// compactMinSize is the file size above which a state file is considered
// for compaction (4 MiB); tests lower it.
var compactMinSize int64 = 4 << 20

// compactTxBytes bounds the bytes copied per transaction of the copy.
const compactTxBytes = 4 << 20

// compactPrefix starts the name of the temporary copy, in the state
// directory of the folder.
const compactPrefix = "." + wsfolder.StateFileName + ".compact-"

// freeSpace returns the file's size and its free bytes: the pages on
// bbolt's freelist (free and pending). The unused tail past the data is not
// counted: bbolt sizes small files to its mmap size (a power of two), so a
// compacted copy would have the same tail, and the file would be compacted
// again at every open. db must be writable; nothing is written.
func freeSpace(db *bbolt.DB, path string) (size, free int64, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, 0, err
	}
	// bbolt updates its freelist statistics when a write transaction ends.
	tx, err := db.Begin(true)
	if err != nil {
		return 0, 0, err
	}
	if err := tx.Rollback(); err != nil {
		return 0, 0, err
	}
	st := db.Stats()
	return fi.Size(), int64(st.FreePageN+st.PendingPageN) * int64(db.Info().PageSize), nil
}

// compactIfSparse compacts db, w's state file, when it is larger than
// compactMinSize and more than half free (see above). It runs during
// openStore, before anything else uses db, and returns the handle to use:
// the compacted file's, or db when it did not compact. Failures are
// logged: the original file stays in use.
func (r *Registry) compactIfSparse(w *Workspace, db *bbolt.DB) *bbolt.DB {
	removeCompactLeftovers(w.dir, r)
	size, free, err := freeSpace(db, w.path)
	if err != nil {
		r.log.Warn("cannot measure the state file's free space; not compacting", "workspace", w.root, "path", w.path, "err", err)
		return db
	}
	if size <= compactMinSize || free*2 <= size {
		return db
	}
	compacted, err := r.compact(w, db)
	if err != nil {
		r.log.Warn("compacting the state file failed; going on with it as it is", "workspace", w.root, "path", w.path, "err", err)
		return db
	}
	after := int64(0)
	if fi, err := os.Stat(w.path); err == nil {
		after = fi.Size()
	}
	r.log.Info("state file compacted", "workspace", w.root, "path", w.path, "bytesBefore", size, "freeBefore", free, "bytesAfter", after)
	return compacted
}

// compact writes a compacted copy of src, renames it over w.path and
// returns its handle; src is closed on success. On failure src is
// untouched and the copy removed.
func (r *Registry) compact(w *Workspace, src *bbolt.DB) (db *bbolt.DB, err error) {
	tmp := filepath.Join(w.dir, compactPrefix+strconv.Itoa(os.Getpid()))
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	dst, err := bbolt.Open(tmp, 0o600, &bbolt.Options{Timeout: r.lockTimeout(), MaxSize: r.opts.maxSize})
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", tmp, err)
	}
	renamed := false
	defer func() {
		if err != nil {
			_ = dst.Close()
			if !renamed {
				_ = os.Remove(tmp)
			}
		}
	}()
	if err := bbolt.Compact(dst, src, compactTxBytes); err != nil {
		return nil, fmt.Errorf("copying into %s: %w", tmp, err)
	}
	if err := dst.Sync(); err != nil {
		return nil, fmt.Errorf("syncing %s: %w", tmp, err)
	}
	if err := sameKeys(src, dst); err != nil {
		return nil, fmt.Errorf("the copy %s differs from the original: %w", tmp, err)
	}
	fi, err := os.Stat(tmp)
	if err != nil {
		return nil, err
	}
	if err := boltstore.Protect(func() error { return verify(dst, fi.Size()) }); err != nil {
		return nil, fmt.Errorf("the copy %s does not check: %w", tmp, err)
	}
	if err := os.Rename(tmp, w.path); err != nil {
		return nil, fmt.Errorf("renaming %s over %s: %w", tmp, w.path, err)
	}
	renamed = true
	if err := syncDir(w.dir); err != nil {
		// The copy is complete and synced, and the rename is done; only its
		// durability across a power loss is in doubt, and either name then
		// holds the same data.
		r.log.Warn("cannot sync the state directory after compacting", "dir", w.dir, "err", err)
	}
	if err := src.Close(); err != nil {
		r.log.Warn("closing the state file replaced by its compacted copy", "path", w.path, "err", err)
	}
	return dst, nil
}

// sameKeys checks that every top-level bucket of a holds as many keys
// (nested ones included) as the same bucket of b, and that b has no other.
func sameKeys(a, b *bbolt.DB) error {
	count := func(db *bbolt.DB) (map[string]int, error) {
		n := map[string]int{}
		err := db.View(func(tx *bbolt.Tx) error {
			return tx.ForEach(func(name []byte, bk *bbolt.Bucket) error {
				n[string(name)] = bk.Stats().KeyN
				return nil
			})
		})
		return n, err
	}
	ca, err := count(a)
	if err != nil {
		return err
	}
	cb, err := count(b)
	if err != nil {
		return err
	}
	if len(ca) != len(cb) {
		return fmt.Errorf("%d top-level buckets, want %d", len(cb), len(ca))
	}
	for name, n := range ca {
		if cb[name] != n {
			return fmt.Errorf("bucket %q has %d keys, want %d", name, cb[name], n)
		}
	}
	return nil
}

// removeCompactLeftovers deletes copies left by a compaction that did not
// finish. The caller holds the exclusive lock of the folder's state file,
// so no compaction of it is running.
func removeCompactLeftovers(dir string, r *Registry) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), compactPrefix) {
			p := filepath.Join(dir, e.Name())
			if err := os.Remove(p); err != nil {
				r.log.Warn("cannot remove an unfinished compaction copy", "path", p, "err", err)
			} else {
				r.log.Info("removed an unfinished compaction copy", "path", p)
			}
		}
	}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// openedFile records the *os.File bbolt opens, so that openDB can check,
// once it holds the lock, that the file is still the one at the path.
type openedFile struct{ f *os.File }

func (o *openedFile) open(name string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(name, flag, perm)
	o.f = f
	if err == nil && afterOpenFile != nil {
		afterOpenFile(name)
	}
	return f, err
}

// afterOpenFile, when set by a test, runs after bbolt has opened the state
// file for writing and before it takes the lock.
var afterOpenFile func(path string)

// replacedWhileWaiting reports whether the file bbolt locked is no longer
// the one at path: another process compacted the store (renaming a new
// file over it) while this one waited for the lock.
func (o *openedFile) replacedWhileWaiting(path string) bool {
	if o.f == nil {
		return false
	}
	held, err := o.f.Stat()
	if err != nil {
		return false
	}
	cur, err := os.Stat(path)
	return err == nil && !os.SameFile(held, cur)
}
