package workspace

import (
	"encoding/binary"
	"fmt"

	"go.etcd.io/bbolt"
)

// The layout of a state file, declared in one place (docs/conventions.md, bbolt):
//
//	meta/schemaVersion      uint32 big-endian: the number of migrations applied
//	sessions/<name>         JSON sessionRecord {"v":1, "name", "revision", ...} (record.go)
//	history/<name>/<seq>    nested bucket per session; key: seq as 8-byte
//	                        big-endian; value: JSON eventRecord {"v":1, "seq", ...}
var (
	bucketMeta       = []byte("meta")
	bucketSessions   = []byte("sessions")
	bucketHistory    = []byte("history")
	keySchemaVersion = []byte("schemaVersion")
)

// Record versions: the "v" field of the JSON values. A value with a higher
// version was written by a newer agentd and is refused. A change of a
// record's fields (record.go) that an older agentd would misread bumps its
// version, and a migration rewrites the stored values.
const (
	sessionRecordVersion = 1
	eventRecordVersion   = 1
)

// A migration moves a state file from schema version N to N+1, where N is
// its index in migrations. It runs inside the write transaction that also
// records the new version, so a failed migration leaves the file as it was.
type migration struct {
	name  string
	apply func(tx *bbolt.Tx) error
}

// migrations, in order. The current schema version is len(migrations); a
// file at version N gets migrations[N:] applied when it is opened. Append
// only: never edit or reorder a released migration. Tests append to it.
var migrations = []migration{
	{name: "create the meta, sessions and history buckets", apply: func(tx *bbolt.Tx) error {
		for _, name := range [][]byte{bucketMeta, bucketSessions, bucketHistory} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("create bucket %q: %w", name, err)
			}
		}
		return nil
	}},
}

// currentSchema is the schema version this build writes.
func currentSchema() uint32 { return uint32(len(migrations)) }

// readSchema returns the schema version recorded in tx; 0 for a file that
// has none (a new file).
func readSchema(tx *bbolt.Tx) (uint32, error) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		return 0, nil
	}
	v := meta.Get(keySchemaVersion)
	switch len(v) {
	case 0:
		return 0, nil
	case 4:
		return binary.BigEndian.Uint32(v), nil
	default:
		return 0, fmt.Errorf("meta/schemaVersion is %d bytes long, want 4", len(v))
	}
}

func writeSchema(tx *bbolt.Tx, version uint32) error {
	meta, err := tx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return err
	}
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], version)
	return meta.Put(keySchemaVersion, b[:])
}

// migrate brings db to the current schema and returns the version it had.
// A file written by a newer agentd is refused, and left untouched.
func migrate(db *bbolt.DB, root string) (from uint32, err error) {
	if err := db.View(func(tx *bbolt.Tx) error {
		from, err = readSchema(tx)
		return err
	}); err != nil {
		return 0, &Error{Code: CodeCorrupt, Path: db.Path(), Err: err,
			Msg: fmt.Sprintf("the state file %s of workspace %s has an unreadable schema version: %v", db.Path(), root, err)}
	}
	to := currentSchema()
	if from == to {
		return from, nil
	}
	if from > to {
		return from, &Error{Code: CodeCorrupt, Path: db.Path(),
			Msg: fmt.Sprintf("the state file %s of workspace %s was written by a newer agentd (schema %d > %d); upgrade agentd to open it",
				db.Path(), root, from, to)}
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		for v := from; v < to; v++ {
			if err := migrations[v].apply(tx); err != nil {
				return fmt.Errorf("migration %d→%d (%s): %w", v, v+1, migrations[v].name, err)
			}
		}
		return writeSchema(tx, to)
	})
	if err != nil {
		return from, fmt.Errorf("workspace %s: upgrading the state file %s from schema %d to %d: %w", root, db.Path(), from, to, err)
	}
	return from, nil
}

// seqKey is the history key of seq: fixed-width big-endian, so that byte
// order is numeric order.
func seqKey(seq uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], seq)
	return k[:]
}
