package workspace

import (
	"bytes"
	"errors"

	"go.etcd.io/bbolt"
)

// backend is where a workspace keeps its sessions and their history: the
// folder's bbolt file (boltStore, the default) or, for a folder with a
// .agentd/team.json, an etcd cluster shared by every daemon that opens the
// folder (teamStore, team.go; docs/team.md). Both keep the same record
// bytes (record.go); nothing above this package knows which one serves a
// folder. Every method but close is called with the Workspace open.
type backend interface {
	// get returns the stored record of session name, nil when there is
	// none, and its version: the etcd revision of its last write (0 when
	// absent), always 0 for bbolt.
	get(name string) (data []byte, ver int64, err error)
	// commit writes p (called under p.name's session lock). It returns
	// errConflict, with p.fresh and p.freshVer set, when the stored
	// session is no longer the one of version p.base (another daemon wrote
	// it); bbolt never does (its file lock makes this process the only
	// writer).
	commit(p *pendingCommit) error
	// list returns the records of every stored session, in name order.
	list() ([]namedRecord, error)
	// history returns the stored event records of session name with a
	// Seq below before (0: all), newest first, as History pages them.
	history(name string, limit int, before uint64) (raw [][]byte, more bool, err error)
	close() error
}

// errConflict: the session changed under an Update (another daemon of the
// team wrote it); Update runs its function again on the new state.
var errConflict = errors.New("the session changed meanwhile")

type namedRecord struct {
	name string
	data []byte
}

// boltStore is the backend of the folder's own state file.
type boltStore struct{ w *Workspace }

func (b boltStore) get(name string) ([]byte, int64, error) {
	var data []byte
	err := b.w.db.View(func(tx *bbolt.Tx) error {
		data = bytes.Clone(tx.Bucket(bucketSessions).Get([]byte(name)))
		return nil
	})
	return data, 0, err
}

func (b boltStore) commit(p *pendingCommit) error { return b.w.commit(p) }

func (b boltStore) list() ([]namedRecord, error) {
	var raw []namedRecord
	err := b.w.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketSessions).ForEach(func(k, v []byte) error {
			raw = append(raw, namedRecord{string(k), bytes.Clone(v)})
			return nil
		})
	})
	return raw, err // bbolt iterates in key order
}

func (b boltStore) history(name string, limit int, before uint64) ([][]byte, bool, error) {
	var raw [][]byte
	var more bool
	err := b.w.db.View(func(tx *bbolt.Tx) error {
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
			if len(raw) == limit || len(raw) > 0 && size+len(v) > MaxHistoryPageBytes {
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

func (b boltStore) close() error {
	if b.w.db == nil {
		return nil
	}
	return b.w.db.Close()
}
