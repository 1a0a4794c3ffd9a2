// Package storage declares the seam between workspace and the places a
// folder's sessions are kept: the folder's bbolt file, or the etcd cluster
// of a team (docs/team.md). A store keeps opaque records (the bytes of
// workspace's record types) under session names; it knows no rule of
// todo or goal and never decodes a session. The compare-and-set contract
// that makes a change safe when several daemons write is stated once, on
// Interface; every backend is held to it by the conformance suite
// (workspace/storetest).
//
// Standard library and the protocol's leaf (commands/protocol, for the
// coded error) only: a backend imports this package, never workspace.
package storage

import (
	"errors"
	"fmt"
)

// Interface is a folder's store.
//
// # Versions and compare-and-set
//
// A session's record is made of parts that change independently
// (workspace's record.go names them; docs/team.md, "A session in parts"):
// each part is a JSON object whose fields are disjoint from the other
// parts', so the parts decoded into one value give the whole record. A
// store keeps a session whole (bbolt: Commit.Record) or each part under a
// key of its own (etcd: Commit.Parts); a record read is whole (Record.Data)
// or in parts (Record.Parts), and a session stored whole by an earlier
// layout reads whole until its next commit writes it in parts.
//
// Every record read carries versions: the store's revision of the last
// write of the whole record (Record.Version) or of each part
// (Part.Version; etcd's ModRevision), 0 for what was never written. A
// store that is the only writer of its data (bbolt, whose file lock keeps
// every other process out) may report 0 for every version and never
// refuse a commit as a conflict.
//
// A change is read-modify-write, as Kubernetes' storage.Interface
// GuaranteedUpdate does it: the caller reads the record (Get), computes
// the new record from it and commits it with Base set to the version of
// the whole record it read and Read to the versions of the parts its
// change was decided on. The store writes the change only if the whole
// record is still at Base and each part of Read still at its version:
// two changes that read disjoint parts both commit, one that read a part
// the other wrote is refused. A store that keeps parts deletes the whole
// record (Base != 0) in the commit that writes the parts.
// The caller's update function may therefore run more than once for one
// change, each time on the record that was current when it ran, and must
// be pure: no side effect outside the record it returns, nothing
// accumulated across runs, everything the caller reports computed from
// the last run only. workspace.Update is the one caller; it retries on
// ErrConflict (with a random pause that grows with each conflict, bounded
// in number), and the commands' handler table is run under a store that
// refuses every first commit (storetest.FailFirst) to show each handler
// safe to run twice.
//
// # What Commit guarantees
//
//   - nil: the record, its history event and its flags were written
//     together, durably (bbolt: fsynced; etcd: applied by a quorum), and
//     c.Version is the session's new version.
//   - ErrConflict (errors.Is): the session is no longer at c.Base, a
//     part of c.Read is no longer at its version, or
//     (etcd) another daemon holds the session's turn (docs/team.md, "A far
//     machine"); nothing of c was written; c.Fresh holds the current record
//     and its version, to run the update function again on.
//   - *LimitError: a refusal of a bound of the store (a session that would
//     be new beyond MaxSessions); nothing was written.
//   - an *Error of code CodeOutcomeUnknown (etcd): the commit's request
//     went out and no answer came, even to its resends; the cluster may
//     have applied it, and a later Get, or the change relayed to every
//     daemon of the team, shows it if it was (docs/team.md, "What a write
//     acknowledges").
//   - any other error: the store could not be written (disk full, etcd
//     unreachable or full) and nothing was written.
//
// Commits of one session must not run concurrently (workspace holds the
// session's lock across read, update function and commit); commits of
// different sessions may, and a store may write them in one transaction.
//
// # History
//
// Each non-quiet commit appends one event to the session's history. The
// store keeps, per session, at most Limits.MaxHistory events whose records
// take at most Limits.MaxHistoryBytes together, deleting the oldest in the
// same write; the newest event is always kept.
type Interface interface {
	// Get returns the record of session name, Data nil when there is none.
	Get(name string) (Record, error)
	// Commit writes c if the session is still at c.Base (see above).
	Commit(c *Commit) error
	// List returns the records of every stored session, in name (byte) order.
	List() ([]Named, error)
	// History returns the stored event records of session name with a
	// sequence number below before (0: all), newest first: at most limit,
	// and no more than fit in MaxHistoryPageBytes, but at least one when
	// there is one; more says older events exist.
	History(name string, limit int, before uint64) (events [][]byte, more bool, err error)
	// Close releases the store: its file lock, its client and lease.
	Close() error
}

// MaxHistoryPageBytes bounds one page of Interface.History: the event
// records it returns take at most 1 MiB together, except that a page
// always holds at least one event when the history has one.
const MaxHistoryPageBytes = 1 << 20

// Record is a session's stored record: whole (Data, at Version) or in
// parts (Parts, by part name); both nil for a session never written.
type Record struct {
	Data    []byte
	Version int64
	Parts   map[string]Part
}

// Part is one part of a session's record and its version.
type Part struct {
	Data    []byte
	Version int64
}

// Named is a stored session's record with its name.
type Named struct {
	Name string
	Record
}

// Commit is one session's change.
type Commit struct {
	Session string
	// Record is the session's new record, whole: what a store that keeps
	// sessions whole writes.
	Record []byte
	// Parts are the parts of the new record the change wrote, by name: what
	// a store that keeps parts writes; every part when the record was read
	// whole or never written.
	Parts map[string][]byte
	// Event is the change's history event; nil for a quiet change, which
	// writes only the record.
	Event *Event
	// Base is the version of the whole record the change was computed on
	// (Record.Version of the Get, or of the Fresh of the last conflict); 0
	// when it was read in parts or never written.
	Base int64
	// Read holds the versions of the parts the change was decided on (of
	// the Get, or of the Fresh of the last conflict), by name; a part never
	// written is at 0. A store that keeps parts compares each.
	Read map[string]int64
	// Flags is what other daemons of a team tell their clients of this
	// change (opaque to the store; a store with one writer ignores it).
	Flags []byte

	// Set by Commit: Version once written; Fresh on ErrConflict.
	Version int64
	Fresh   Record
}

// Event is a history event of a commit, whose record is completed with
// its sequence number by the store.
type Event struct {
	// Seq is the sequence number the change asks for: the session's new
	// revision. A store that numbers events itself (bbolt's bucket
	// sequence, which equals it for every event it wrote) may ignore it.
	Seq uint64
	// Encode returns the event's record with sequence number seq.
	Encode func(seq uint64) []byte
}

// Limits bound what a store keeps (docs/reliability.md, Limits).
type Limits struct {
	MaxSessions     int
	MaxHistory      int
	MaxHistoryBytes int64
}

// ErrConflict is the error of a Commit whose session is no longer at its
// Base version: nothing was written.
var ErrConflict = errors.New("the session changed meanwhile")

// LimitError refuses a commit that would store a session beyond
// Limits.MaxSessions; nothing was written.
type LimitError struct {
	Session string
	Stored  int // sessions stored
	Max     int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("session %q would be new, but %d sessions are stored, the most a folder keeps (%d)", e.Session, e.Stored, e.Max)
}
