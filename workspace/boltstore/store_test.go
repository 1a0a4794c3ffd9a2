package boltstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/agentd/agentd/workspace/storage"
	"github.com/agentd/agentd/workspace/storetest"
)

// testLimits are the bounds of the stores of these tests but the
// conformance suite's.
var testLimits = storage.Limits{MaxSessions: 1000, MaxHistory: 10000, MaxHistoryBytes: 4 << 20}

// openFile opens a new state file at path with the buckets of the layout,
// as the registry's first migration leaves it; maxSize is bbolt's MaxSize
// (0: none).
func openFile(t *testing.T, path string, maxSize int) *bbolt.DB {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second, MaxSize: maxSize})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bbolt.Tx) error {
		for _, name := range [][]byte{BucketMeta, BucketSessions, BucketHistory} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return db
}

// openStore returns a store on a new file at path, closed at the end of the test.
func openStore(t *testing.T, path string, maxSize int, lim storage.Limits) *Store {
	t.Helper()
	s := New(openFile(t, path, maxSize), Options{Limits: func() storage.Limits { return lim }})
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestConformance: the state file's store keeps the contract of
// storage.Interface.
func TestConformance(t *testing.T) {
	lim := storage.Limits{MaxSessions: 5, MaxHistory: 4, MaxHistoryBytes: 4 << 20}
	storetest.Run(t, storetest.Backend{
		Limits: lim,
		Open: func(t *testing.T) storage.Interface {
			return New(openFile(t, filepath.Join(t.TempDir(), "state.db"), 0), Options{Limits: func() storage.Limits { return lim }})
		},
	})
}

func TestSeqKeyOrder(t *testing.T) {
	prev := SeqKey(0)
	for _, s := range []uint64{1, 255, 256, 1 << 32, 1<<64 - 1} {
		k := SeqKey(s)
		if bytes.Compare(prev, k) >= 0 || binary.BigEndian.Uint64(k) != s {
			t.Errorf("SeqKey(%d) = %x: not after %x", s, k, prev)
		}
		prev = k
	}
}

// change is a commit of record on session name with event 1.
func change(name, record string) *storage.Commit {
	return &storage.Commit{Session: name, Record: []byte(record), Event: &storage.Event{Seq: 1, Encode: func(seq uint64) []byte {
		return fmt.Appendf(nil, `{"seq":%d,"record":%q}`, seq, record)
	}}}
}

// holdWriter takes bbolt's writer lock of s, so that commits queue up
// behind it, until the returned function is called.
func holdWriter(t *testing.T, s *Store) (release func()) {
	t.Helper()
	tx, err := s.db.Begin(true)
	if err != nil {
		t.Fatal(err)
	}
	release = func() { _ = tx.Rollback() } // a second call does nothing
	t.Cleanup(release)
	return release
}

// awaitGroup waits until a leader is writing and queued changes wait
// behind it; it fails the test after 30s.
func awaitGroup(t *testing.T, s *Store, queued int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s.group.mu.Lock()
		ok := s.group.leading && len(s.group.queue) == queued
		s.group.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %d changes queued behind a leader", queued)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lastTx returns the id of the last committed transaction.
func lastTx(t *testing.T, s *Store) (id int) {
	t.Helper()
	if err := s.db.View(func(tx *bbolt.Tx) error { id = tx.ID(); return nil }); err != nil {
		t.Fatal(err)
	}
	return id
}

// behindPlug runs each of fns in a goroutine of its own, queued in this
// order behind a leader (a commit of session "plug") that waits for the
// writer lock; it returns when all have returned.
func behindPlug(t *testing.T, s *Store, fns ...func()) {
	t.Helper()
	release := holdWriter(t, s)
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := s.Commit(change("plug", "next")); err != nil {
			t.Error(err)
		}
	})
	awaitGroup(t, s, 0) // the plug leads, waiting for the writer lock
	for i, fn := range fns {
		wg.Go(fn)
		awaitGroup(t, s, i+1)
	}
	release()
	wg.Wait()
}

// storedHistory returns the number of events stored for the session and
// the total size of their records, read from the file.
func storedHistory(t *testing.T, s *Store, name string) (events int, size int64) {
	t.Helper()
	if err := s.db.View(func(tx *bbolt.Tx) error {
		hb := tx.Bucket(BucketHistory).Bucket([]byte(name))
		if hb == nil {
			return nil
		}
		return hb.ForEach(func(_, v []byte) error { events++; size += int64(len(v)); return nil })
	}); err != nil {
		t.Fatal(err)
	}
	return events, size
}

// TestGroupCommit: changes of different sessions that wait while another
// commit is written share one transaction; each Commit returns after it
// committed, and all of them are in the file after it is opened again.
func TestGroupCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s := openStore(t, path, 0, testLimits)
	if err := s.Commit(change("plug", "0")); err != nil {
		t.Fatal(err)
	}
	before := lastTx(t, s)

	const sessions = 16
	errs := make([]error, sessions)
	var fns []func()
	for i := range sessions {
		fns = append(fns, func() { errs[i] = s.Commit(change(fmt.Sprint("s", i), fmt.Sprint("item ", i))) })
	}
	behindPlug(t, s, fns...)

	if n := lastTx(t, s) - before; n != 2 {
		t.Errorf("transactions for the plug and %d queued changes: got %d, want 2", sessions, n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := New(openFile(t, path, 0), Options{Limits: func() storage.Limits { return testLimits }})
	t.Cleanup(func() { _ = s2.Close() })
	for i, err := range errs {
		name := fmt.Sprint("s", i)
		if err != nil {
			t.Errorf("Commit(%q): %v", name, err)
		}
		if r, err := s2.Get(name); err != nil || string(r.Data) != fmt.Sprint("item ", i) {
			t.Errorf("%q after reopening: got %q (%v), want its own record", name, r.Data, err)
		}
		if h, _, err := s2.History(name, 10, 0); err != nil || len(h) != 1 || !strings.HasPrefix(string(h[0]), `{"seq":1,`) {
			t.Errorf("history of %q after reopening: got %q (%v), want its one event", name, h, err)
		}
	}
	if r, _ := s2.Get("plug"); string(r.Data) != "next" {
		t.Errorf("plug after reopening: got %q, want next", r.Data)
	}
}

// TestGroupCommitFailureIsolated: a change whose commit fails (too large
// for the file's size limit) in a shared transaction fails alone, leaving
// its session as it was; the changes queued with it are saved, and the
// history sizes counted by the failed attempt are not kept.
func TestGroupCommitFailureIsolated(t *testing.T) {
	s := openStore(t, filepath.Join(t.TempDir(), "state.db"), 1<<20, testLimits)
	for _, name := range []string{"plug", "big"} {
		if err := s.Commit(change(name, "kept")); err != nil {
			t.Fatal(err)
		}
	}
	var bigErr error
	errs := make([]error, 3)
	fns := []func(){func() { bigErr = s.Commit(change("big", strings.Repeat("x", 2<<20))) }}
	for i := range errs {
		fns = append(fns, func() { errs[i] = s.Commit(change(fmt.Sprint("s", i), "x")) })
	}
	behindPlug(t, s, fns...)

	if bigErr == nil || !strings.Contains(bigErr.Error(), "maximum size") {
		t.Errorf("the change beyond the size limit: got %v, want an error saying why", bigErr)
	}
	if r, _ := s.Get("big"); string(r.Data) != "kept" {
		t.Errorf("big after its failed commit: got %.20q, want kept", r.Data)
	}
	for i, err := range errs {
		name := fmt.Sprint("s", i)
		if err != nil {
			t.Errorf("Commit(%q) queued with a failing change: %v", name, err)
		}
		if _, size := storedHistory(t, s, name); s.historyOf(name).bytes != size {
			t.Errorf("history bytes counted for %s: %d, stored %d", name, s.historyOf(name).bytes, size)
		}
	}
}

// TestGroupCommitSessionLimit: new sessions sharing a transaction count
// against MaxSessions one by one: those within the limit are stored, the
// one beyond it is refused alone, in the same transaction.
func TestGroupCommitSessionLimit(t *testing.T) {
	lim := testLimits
	lim.MaxSessions = 4
	s := openStore(t, filepath.Join(t.TempDir(), "state.db"), 0, lim)
	if err := s.Commit(change("plug", "0")); err != nil {
		t.Fatal(err)
	}
	before := lastTx(t, s)

	errs := make([]error, 4)
	var fns []func()
	for i := range errs {
		fns = append(fns, func() { errs[i] = s.Commit(change(fmt.Sprint("new", i), "x")) })
	}
	behindPlug(t, s, fns...)

	for i, err := range errs[:3] {
		if err != nil {
			t.Errorf("Commit(new%d), within the limit: %v", i, err)
		}
	}
	var le *storage.LimitError
	if !errors.As(errs[3], &le) || le.Stored != 4 || le.Max != 4 {
		t.Errorf("Commit(new3), a fifth session: got %v, want a LimitError at 4 of 4", errs[3])
	}
	if n := lastTx(t, s) - before; n != 2 {
		t.Errorf("transactions: got %d, want 2 (the plug, then the new sessions together)", n)
	}
	if stored, err := s.List(); err != nil || len(stored) != 4 {
		t.Errorf("stored sessions: got %d (%v), want 4", len(stored), err)
	}
}
