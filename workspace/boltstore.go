package workspace

import (
	"bytes"
	"sync"

	"go.etcd.io/bbolt"

	"github.com/agentd/agentd/workspace/storage"
)

// boltStore is the store of a folder's own state file (layout in
// schema.go): the default, and the only writer of its file while open (the
// file lock), so it never refuses a commit as a conflict and reports every
// version as 0. Its commits are group commits (commit.go).
type boltStore struct {
	db   *bbolt.DB
	path string // the state file, for errors
	root string

	group groupCommit

	histMu sync.Mutex
	// hist is the size of each session's stored history records, counted
	// by the first commit that appends an event and kept by every later
	// one; only this process writes the file while it is open.
	hist map[string]history
}

func newBoltStore(db *bbolt.DB, path, root string) *boltStore {
	return &boltStore{db: db, path: path, root: root, hist: map[string]history{}}
}

func (b *boltStore) Get(name string) (storage.Record, error) {
	var data []byte
	err := b.db.View(func(tx *bbolt.Tx) error {
		data = bytes.Clone(tx.Bucket(bucketSessions).Get([]byte(name)))
		return nil
	})
	return storage.Record{Data: data}, err
}

func (b *boltStore) List() ([]storage.Named, error) {
	var raw []storage.Named
	err := b.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketSessions).ForEach(func(k, v []byte) error {
			raw = append(raw, storage.Named{Name: string(k), Data: bytes.Clone(v)})
			return nil
		})
	})
	return raw, err // bbolt iterates in key order
}

func (b *boltStore) History(name string, limit int, before uint64) ([][]byte, bool, error) {
	var raw [][]byte
	var more bool
	err := b.db.View(func(tx *bbolt.Tx) error {
		hb := tx.Bucket(bucketHistory).Bucket([]byte(name))
		if hb == nil {
			return nil
		}
		c := hb.Cursor()
		k, v := c.Last()
		if before > 0 {
			if k, v = c.Seek(seqKey(before)); k == nil {
				k, v = c.Last()
			} else {
				k, v = c.Prev()
			}
		}
		var size int
		for ; k != nil; k, v = c.Prev() {
			if len(raw) == limit || len(raw) > 0 && size+len(v) > storage.MaxHistoryPageBytes {
				more = true
				break
			}
			size += len(v)
			raw = append(raw, bytes.Clone(v))
		}
		return nil
	})
	return raw, more, err
}

func (b *boltStore) Close() error { return b.db.Close() }

// historyOf and setHistory read and keep the counted size of a session's
// history; a session's commits never run concurrently.
func (b *boltStore) historyOf(name string) history {
	b.histMu.Lock()
	defer b.histMu.Unlock()
	return b.hist[name]
}

func (b *boltStore) setHistory(name string, h history) {
	b.histMu.Lock()
	defer b.histMu.Unlock()
	b.hist[name] = h
}
