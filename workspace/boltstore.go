package workspace

import (
	"bytes"
	"encoding/binary"
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

// history is what a session's history holds: the total size of its stored
// records, valid once counted.
type history struct {
	bytes   int64
	counted bool
}

// appendEvent appends ev to the history of session name, with the next
// sequence number of its bucket, and deletes the oldest events until at
// most maxHistory are kept and they take at most maxHistoryBytes; the new
// event itself is never deleted. held is the history's size before the
// append (counted here when it is not yet) and is updated to the size
// after it; the caller keeps it only when the transaction commits.
func appendEvent(tx *bbolt.Tx, name string, ev *storage.Event, held *history) error {
	hb, err := tx.Bucket(bucketHistory).CreateBucketIfNotExists([]byte(name))
	if err != nil {
		return err
	}
	// Events are only appended at the end: fill pages fully when they split
	// (bbolt's default, half, would leave every page of small events half
	// empty and double the file).
	hb.FillPercent = 1.0
	if !held.counted {
		held.bytes = 0
		if err := hb.ForEach(func(_, v []byte) error { held.bytes += int64(len(v)); return nil }); err != nil {
			return err
		}
		held.counted = true
	}
	seq, err := hb.NextSequence()
	if err != nil {
		return err
	}
	data := ev.Encode(seq)
	newest := seqKey(seq)
	if err := hb.Put(newest, data); err != nil {
		return err
	}
	held.bytes += int64(len(data))
	// Keys are contiguous sequence numbers, oldest first: the events at or
	// below cut are beyond the count; others go while the bytes are over.
	var cut uint64
	if seq > uint64(maxHistory) {
		cut = seq - uint64(maxHistory)
	}
	c := hb.Cursor()
	for k, v := c.First(); k != nil && !bytes.Equal(k, newest); k, v = c.First() {
		if len(k) == 8 && binary.BigEndian.Uint64(k) > cut && held.bytes <= maxHistoryBytes {
			break
		}
		held.bytes -= int64(len(v))
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return nil
}
