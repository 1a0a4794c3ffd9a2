// Package storetest holds what tests the stores of workspace/storage: the
// conformance suite every backend runs (Run) and a store that refuses
// every first commit (FailFirst), run under the commands' handler table.
// Imported by tests only.
package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/agentd/agentd/workspace/storage"
)

// Backend is a store under test.
type Backend struct {
	// Open returns an empty store, closed by the suite.
	Open func(t *testing.T) storage.Interface
	// Limits are those the stores Open returns keep (small, so that the
	// suite reaches them).
	Limits storage.Limits
	// Versioned: the store reports versions and refuses a commit on a
	// stale one (etcd); false for a store that is its data's only writer
	// (bbolt), which never reports a conflict.
	Versioned bool
}

// Run runs the conformance suite of storage.Interface on b.
func Run(t *testing.T, b Backend) {
	if b.Limits.MaxHistory < 3 || b.Limits.MaxSessions < 3 {
		t.Fatalf("storetest needs limits of at least 3 events and 3 sessions: %+v", b.Limits)
	}
	cases := []struct {
		name string
		run  func(t *testing.T, b Backend, s storage.Interface)
	}{
		{"GetOfNoSession", testGetAbsent},
		{"CommitThenGetAndList", testCommitGetList},
		{"QuietCommitAppendsNoEvent", testQuiet},
		{"StaleBaseIsAConflict", testConflict},
		{"HistoryNewestFirstInPages", testHistoryPages},
		{"HistoryKeepsItsBound", testHistoryBound},
		{"SessionsBeyondTheLimitAreRefused", testSessionLimit},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := b.Open(t)
			t.Cleanup(func() { _ = s.Close() })
			tc.run(t, b, s)
		})
	}
}

// event is the record of event seq of the suite: its number and a body.
func event(seq uint64, body string) *storage.Event {
	return &storage.Event{Seq: seq, Encode: func(n uint64) []byte { return eventRecord(n, body) }}
}

func eventRecord(seq uint64, body string) []byte {
	return []byte(`{"seq":` + strconv.FormatUint(seq, 10) + `,"body":"` + body + `"}`)
}

// commit writes record on session name at the version it reads, with
// event seq unless seq is 0; it returns the commit.
func commit(t *testing.T, s storage.Interface, name string, record string, seq uint64) *storage.Commit {
	t.Helper()
	cur, err := s.Get(name)
	if err != nil {
		t.Fatalf("Get(%q): %v", name, err)
	}
	c := &storage.Commit{Session: name, Record: []byte(record), Base: cur.Version, Flags: []byte(`{}`)}
	if seq > 0 {
		c.Event = event(seq, record)
	}
	if err := s.Commit(c); err != nil {
		t.Fatalf("Commit(%q, %s): %v", name, record, err)
	}
	return c
}

func mustGet(t *testing.T, s storage.Interface, name string) storage.Record {
	t.Helper()
	r, err := s.Get(name)
	if err != nil {
		t.Fatalf("Get(%q): %v", name, err)
	}
	return r
}

func testGetAbsent(t *testing.T, _ Backend, s storage.Interface) {
	if r := mustGet(t, s, "nobody"); r.Data != nil || r.Version != 0 {
		t.Errorf("Get of a session never written = %+v, want no data at version 0", r)
	}
	if l, err := s.List(); err != nil || len(l) != 0 {
		t.Errorf("List of an empty store = %v, %v; want none", l, err)
	}
	if h, more, err := s.History("nobody", 10, 0); err != nil || len(h) != 0 || more {
		t.Errorf("History of a session never written = %q, %v, %v; want none", h, more, err)
	}
}

func testCommitGetList(t *testing.T, b Backend, s storage.Interface) {
	names := []string{"b", "a/b c", "é", "a"} // a "/" and non-ASCII are names like any other
	for i, n := range names {
		c := commit(t, s, n, fmt.Sprintf(`{"n":%d}`, i), 1)
		r := mustGet(t, s, n)
		if string(r.Data) != fmt.Sprintf(`{"n":%d}`, i) || r.Version != c.Version {
			t.Errorf("Get(%q) after a commit = %s at %d, want the record at the commit's version %d", n, r.Data, r.Version, c.Version)
		}
		if b.Versioned && c.Version <= 0 {
			t.Errorf("Commit(%q) of a versioned store set version %d", n, c.Version)
		}
	}
	l, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range l {
		got = append(got, n.Name)
	}
	want := slices.Clone(names)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("List names = %q, want %q (byte order)", got, want)
	}
}

func testQuiet(t *testing.T, _ Backend, s storage.Interface) {
	commit(t, s, "q", `{"r":1}`, 1)
	commit(t, s, "q", `{"r":1,"counter":2}`, 0)
	if r := mustGet(t, s, "q"); string(r.Data) != `{"r":1,"counter":2}` {
		t.Errorf("after a quiet commit Get = %s", r.Data)
	}
	if h, _, _ := s.History("q", 10, 0); len(h) != 1 {
		t.Errorf("a quiet commit appended an event: history %q", h)
	}
}

func testConflict(t *testing.T, b Backend, s storage.Interface) {
	first := commit(t, s, "c", `{"r":1}`, 1)
	second := commit(t, s, "c", `{"r":2}`, 2)
	stale := &storage.Commit{Session: "c", Record: []byte(`{"r":"lost"}`), Base: first.Version, Event: event(3, "lost"), Flags: []byte(`{}`)}
	err := s.Commit(stale)
	if !b.Versioned {
		// The only writer: a commit is never refused, whatever its base.
		if err != nil {
			t.Fatalf("Commit on an older base of a single-writer store: %v", err)
		}
		return
	}
	if !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("Commit on a stale base = %v, want storage.ErrConflict", err)
	}
	if string(stale.Fresh.Data) != `{"r":2}` || stale.Fresh.Version != second.Version {
		t.Errorf("Fresh of a conflict = %s at %d, want the current record at %d", stale.Fresh.Data, stale.Fresh.Version, second.Version)
	}
	if r := mustGet(t, s, "c"); string(r.Data) != `{"r":2}` {
		t.Errorf("a refused commit was written: Get = %s", r.Data)
	}
	if h, _, _ := s.History("c", 10, 0); len(h) != 2 {
		t.Errorf("a refused commit appended its event: history %q", h)
	}
	// Again on the fresh version: written.
	stale.Base = stale.Fresh.Version
	if err := s.Commit(stale); err != nil {
		t.Fatalf("Commit on the fresh version after a conflict: %v", err)
	}
}

func testHistoryPages(t *testing.T, _ Backend, s storage.Interface) {
	for seq := uint64(1); seq <= 3; seq++ {
		commit(t, s, "h", fmt.Sprintf("r%d", seq), seq)
	}
	all, more, err := s.History("h", 10, 0)
	if err != nil || more {
		t.Fatalf("History = %v, more %v", err, more)
	}
	want := [][]byte{eventRecord(3, "r3"), eventRecord(2, "r2"), eventRecord(1, "r1")}
	if !slices.EqualFunc(all, want, bytes.Equal) {
		t.Errorf("History = %q, want newest first %q", all, want)
	}
	page, more, err := s.History("h", 2, 0)
	if err != nil || !more || len(page) != 2 || !bytes.Equal(page[1], want[1]) {
		t.Errorf("History limit 2 = %q, more %v, %v; want the 2 newest and more", page, more, err)
	}
	page, more, err = s.History("h", 2, 2)
	if err != nil || more || len(page) != 1 || !bytes.Equal(page[0], want[2]) {
		t.Errorf("History before 2 = %q, more %v, %v; want event 1 only", page, more, err)
	}
}

func testHistoryBound(t *testing.T, b Backend, s storage.Interface) {
	n := uint64(b.Limits.MaxHistory) + 2
	for seq := uint64(1); seq <= n; seq++ {
		commit(t, s, "bound", fmt.Sprintf("r%d", seq), seq)
	}
	h, more, err := s.History("bound", int(n)+5, 0)
	if err != nil || more {
		t.Fatalf("History = %v, more %v", err, more)
	}
	if len(h) != b.Limits.MaxHistory || !bytes.Equal(h[0], eventRecord(n, fmt.Sprintf("r%d", n))) {
		t.Errorf("after %d events the history holds %d, newest %s; want the %d newest", n, len(h), h[0], b.Limits.MaxHistory)
	}
}

func testSessionLimit(t *testing.T, b Backend, s storage.Interface) {
	for i := range b.Limits.MaxSessions {
		commit(t, s, fmt.Sprintf("s%03d", i), `{}`, 1)
	}
	extra := &storage.Commit{Session: "one-too-many", Record: []byte(`{}`), Event: event(1, "x"), Flags: []byte(`{}`)}
	var limit *storage.LimitError
	if err := s.Commit(extra); !errors.As(err, &limit) || limit.Max != b.Limits.MaxSessions {
		t.Fatalf("Commit of a session beyond %d = %v, want a *storage.LimitError", b.Limits.MaxSessions, err)
	}
	if r := mustGet(t, s, "one-too-many"); r.Data != nil {
		t.Errorf("a refused session was written: %s", r.Data)
	}
	// A session already stored still writes.
	commit(t, s, "s000", `{"again":true}`, 2)
}
