package workspace

import (
	"encoding/binary"
	"fmt"

	"go.etcd.io/bbolt"

	"github.com/agentd/agentd/workspace/boltstore"
)

// The layout of a state file is declared in workspace/boltstore (store.go);
// the migrations below create and change it.

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
		for _, name := range [][]byte{boltstore.BucketMeta, boltstore.BucketSessions, boltstore.BucketHistory} {
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
	meta := tx.Bucket(boltstore.BucketMeta)
	if meta == nil {
		return 0, nil
	}
	v := meta.Get(boltstore.KeySchemaVersion)
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
	meta, err := tx.CreateBucketIfNotExists(boltstore.BucketMeta)
	if err != nil {
		return err
	}
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], version)
	return meta.Put(boltstore.KeySchemaVersion, b[:])
}

// migrate brings db to the current schema and returns the version it had.
// A file written by a newer agentd is refused, and left untouched.
func migrate(db *bbolt.DB, root string) (from uint32, err error) {
	if err := db.View(func(tx *bbolt.Tx) error {
		from, err = readSchema(tx)
		return err
	}); err != nil {
		return 0, &Error{Code: CodeCorrupt, Err: err,
			Msg: fmt.Sprintf("the state file %s of workspace %s has an unreadable schema version: %v", db.Path(), root, err)}
	}
	to := currentSchema()
	if from == to {
		return from, nil
	}
	if from > to {
		return from, &Error{Code: CodeCorrupt,
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
