// Package boltstore is the store of a folder's own state file: a bbolt
// file, written by one process at a time (its file lock). It keeps the
// records workspace gives it as opaque bytes, under the layout below, and
// holds no pointer back into workspace: what it needs (the store's bounds)
// comes in through Options. Opening the file, recovering a corrupt one,
// migrating its schema and compacting it are the registry's
// (workspace/store.go, schema.go, compact.go); this package starts from an
// open, migrated *bbolt.DB.
//
// It imports bbolt and workspace/storage only.
package boltstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime/debug"
	"sync"

	"go.etcd.io/bbolt"

	"github.com/agentd/agentd/workspace/storage"
)

// The layout of a state file, declared in one place (docs/conventions.md, bbolt):
//
//	meta/schemaVersion      uint32 big-endian: the number of migrations applied
//	sessions/<name>         JSON sessionRecord {"v":1, "name", "revision", ...} (workspace/record.go)
//	history/<name>/<seq>    nested bucket per session; key: seq as 8-byte
//	                        big-endian (SeqKey); value: JSON eventRecord {"v":1, "seq", ...}
//
// The buckets are created by the file's first migration (workspace/schema.go).
var (
	BucketMeta       = []byte("meta")
	BucketSessions   = []byte("sessions")
	BucketHistory    = []byte("history")
	KeySchemaVersion = []byte("schemaVersion")
)

// SeqKey is the history key of seq: fixed-width big-endian, so that byte
// order is numeric order.
func SeqKey(seq uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], seq)
	return k[:]
}

// Options is what a Store needs from its opener.
type Options struct {
	// Limits returns the store's bounds; it is called on every commit, so
	// that the bounds in force are the opener's current ones.
	Limits func() storage.Limits
}

// Store is the store of a folder's own state file: the default, and the
// only writer of its file while open (the file lock), so it never refuses
// a commit as a conflict and reports every version as 0. Its commits are
// group commits (commit.go).
type Store struct {
	db     *bbolt.DB
	limits func() storage.Limits

	group groupCommit

	histMu sync.Mutex
	// hist is the size of each session's stored history records, counted
	// by the first commit that appends an event and kept by every later
	// one; only this process writes the file while it is open.
	hist map[string]history
}

// New returns the store of db, an open state file at the current schema;
// the store owns db from then on (Close closes it).
func New(db *bbolt.DB, opts Options) *Store {
	return &Store{db: db, limits: opts.Limits, hist: map[string]history{}}
}

// DB is the store's open file, for the registry's statistics and tests;
// writing to it other than through Commit breaks the counted history sizes.
func (b *Store) DB() *bbolt.DB { return b.db }

// PanicError is a panic or memory fault of bbolt on a damaged file, turned
// into an error.
type PanicError struct{ v any }

func (p *PanicError) Error() string { return fmt.Sprintf("reading the file failed: %v", p.v) }

// Protect runs fn, turning a panic, and a memory fault on the mapped file
// (SIGBUS on a page past the end of a truncated file), into a *PanicError.
// It only covers fn's own goroutine.
func Protect(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{v}
		}
	}()
	return fn()
}

func (b *Store) Get(name string) (storage.Record, error) {
	var data []byte
	err := b.db.View(func(tx *bbolt.Tx) error {
		data = bytes.Clone(tx.Bucket(BucketSessions).Get([]byte(name)))
		return nil
	})
	return storage.Record{Data: data}, err
}

func (b *Store) List() ([]storage.Named, error) {
	var raw []storage.Named
	err := b.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(BucketSessions).ForEach(func(k, v []byte) error {
			raw = append(raw, storage.Named{Name: string(k), Record: storage.Record{Data: bytes.Clone(v)}})
			return nil
		})
	})
	return raw, err // bbolt iterates in key order
}

func (b *Store) History(name string, limit int, before uint64) ([][]byte, bool, error) {
	var raw [][]byte
	var more bool
	err := b.db.View(func(tx *bbolt.Tx) error {
		hb := tx.Bucket(BucketHistory).Bucket([]byte(name))
		if hb == nil {
			return nil
		}
		c := hb.Cursor()
		k, v := c.Last()
		if before > 0 {
			if k, v = c.Seek(SeqKey(before)); k == nil {
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

func (b *Store) Close() error { return b.db.Close() }

// historyOf and setHistory read and keep the counted size of a session's
// history; a session's commits never run concurrently.
func (b *Store) historyOf(name string) history {
	b.histMu.Lock()
	defer b.histMu.Unlock()
	return b.hist[name]
}

func (b *Store) setHistory(name string, h history) {
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
// most lim.MaxHistory are kept and they take at most lim.MaxHistoryBytes; the new
// event itself is never deleted. held is the history's size before the
// append (counted here when it is not yet) and is updated to the size
// after it; the caller keeps it only when the transaction commits.
func appendEvent(tx *bbolt.Tx, name string, ev *storage.Event, held *history, lim storage.Limits) error {
	hb, err := tx.Bucket(BucketHistory).CreateBucketIfNotExists([]byte(name))
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
	newest := SeqKey(seq)
	if err := hb.Put(newest, data); err != nil {
		return err
	}
	held.bytes += int64(len(data))
	// Keys are contiguous sequence numbers, oldest first: the events at or
	// below cut are beyond the count; others go while the bytes are over.
	var cut uint64
	if seq > uint64(lim.MaxHistory) {
		cut = seq - uint64(lim.MaxHistory)
	}
	c := hb.Cursor()
	for k, v := c.First(); k != nil && !bytes.Equal(k, newest); k, v = c.First() {
		if len(k) == 8 && binary.BigEndian.Uint64(k) > cut && held.bytes <= lim.MaxHistoryBytes {
			break
		}
		held.bytes -= int64(len(v))
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return nil
}
