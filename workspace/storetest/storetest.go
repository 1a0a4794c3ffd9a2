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
	// Versioned: the store reports versions, refuses a commit on a stale
	// one and keeps a session in parts (etcd); false for a store that is
	// its data's only writer and keeps sessions whole (bbolt), which never
	// reports a conflict.
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
		{"PartsReadDisjointBothCommit", testDisjointParts},
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

// part is the one part of the suite's records, but for testDisjointParts.
const part = "p"

// content is the suite's record of r: whole, or its one part.
func content(r storage.Record) string {
	if r.Data != nil {
		return string(r.Data)
	}
	return string(r.Parts[part].Data)
}

// versionOf is the version of content(r).
func versionOf(r storage.Record) int64 {
	if r.Data != nil {
		return r.Version
	}
	return r.Parts[part].Version
}

// write is a commit of record on session name, read at cur.
func write(name, record string, cur storage.Record) *storage.Commit {
	return &storage.Commit{Session: name, Record: []byte(record), Parts: map[string][]byte{part: []byte(record)},
		Base: cur.Version, Read: map[string]int64{part: cur.Parts[part].Version}, Flags: []byte(`{}`)}
}

// commit writes record on session name at the version it reads, with
// event seq unless seq is 0; it returns the commit.
func commit(t *testing.T, s storage.Interface, name string, record string, seq uint64) *storage.Commit {
	t.Helper()
	cur, err := s.Get(name)
	if err != nil {
		t.Fatalf("Get(%q): %v", name, err)
	}
	c := write(name, record, cur)
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
	if r := mustGet(t, s, "nobody"); r.Data != nil || r.Parts != nil || r.Version != 0 {
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
		if content(r) != fmt.Sprintf(`{"n":%d}`, i) || versionOf(r) != c.Version {
			t.Errorf("Get(%q) after a commit = %s at %d, want the record at the commit's version %d", n, content(r), versionOf(r), c.Version)
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
	if r := mustGet(t, s, "q"); content(r) != `{"r":1,"counter":2}` {
		t.Errorf("after a quiet commit Get = %s", content(r))
	}
	if h, _, _ := s.History("q", 10, 0); len(h) != 1 {
		t.Errorf("a quiet commit appended an event: history %q", h)
	}
}

func testConflict(t *testing.T, b Backend, s storage.Interface) {
	first := commit(t, s, "c", `{"r":1}`, 1)
	second := commit(t, s, "c", `{"r":2}`, 2)
	stale := write("c", `{"r":"lost"}`, storage.Record{Parts: map[string]storage.Part{part: {Version: first.Version}}})
	stale.Event = event(3, "lost")
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
	if content(stale.Fresh) != `{"r":2}` || versionOf(stale.Fresh) != second.Version {
		t.Errorf("Fresh of a conflict = %s at %d, want the current record at %d", content(stale.Fresh), versionOf(stale.Fresh), second.Version)
	}
	if r := mustGet(t, s, "c"); content(r) != `{"r":2}` {
		t.Errorf("a refused commit was written: Get = %s", content(r))
	}
	if h, _, _ := s.History("c", 10, 0); len(h) != 2 {
		t.Errorf("a refused commit appended its event: history %q", h)
	}
	// Again on the fresh version: written.
	stale.Read[part] = versionOf(stale.Fresh)
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
	extra := write("one-too-many", `{}`, storage.Record{})
	extra.Event = event(1, "x")
	var limit *storage.LimitError
	if err := s.Commit(extra); !errors.As(err, &limit) || limit.Max != b.Limits.MaxSessions {
		t.Fatalf("Commit of a session beyond %d = %v, want a *storage.LimitError", b.Limits.MaxSessions, err)
	}
	if r := mustGet(t, s, "one-too-many"); r.Data != nil || r.Parts != nil {
		t.Errorf("a refused session was written: %+v", r)
	}
	// A session already stored still writes.
	commit(t, s, "s000", `{"again":true}`, 2)
}

// testDisjointParts: two changes computed on one read, each reading and
// writing a part of its own, both commit; a third, which read a part one
// of them wrote, is refused, and the record reads every part as written.
func testDisjointParts(t *testing.T, b Backend, s storage.Interface) {
	if !b.Versioned {
		t.Skip("a store that keeps sessions whole has one writer: parts are never compared")
	}
	first := &storage.Commit{Session: "d", Parts: map[string][]byte{"a": []byte(`{"a":1}`), "b": []byte(`{"b":1}`)},
		Read: map[string]int64{"a": 0, "b": 0}, Event: event(1, "both"), Flags: []byte(`{}`)}
	if err := s.Commit(first); err != nil {
		t.Fatal(err)
	}
	cur := mustGet(t, s, "d")
	onA := &storage.Commit{Session: "d", Parts: map[string][]byte{"a": []byte(`{"a":2}`)}, Read: map[string]int64{"a": cur.Parts["a"].Version}, Flags: []byte(`{}`)}
	onB := &storage.Commit{Session: "d", Parts: map[string][]byte{"b": []byte(`{"b":2}`)}, Read: map[string]int64{"b": cur.Parts["b"].Version}, Flags: []byte(`{}`)}
	for _, c := range []*storage.Commit{onA, onB} {
		if err := s.Commit(c); err != nil {
			t.Fatalf("Commit of a part nobody else wrote: %v, want it written", err)
		}
	}
	shared := &storage.Commit{Session: "d", Parts: map[string][]byte{"b": []byte(`{"b":"lost"}`)}, Read: map[string]int64{"a": cur.Parts["a"].Version}, Flags: []byte(`{}`)}
	if err := s.Commit(shared); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("Commit that read a part written since = %v, want storage.ErrConflict", err)
	}
	got := mustGet(t, s, "d")
	if a, bb := got.Parts["a"], got.Parts["b"]; string(a.Data) != `{"a":2}` || a.Version != onA.Version || string(bb.Data) != `{"b":2}` || bb.Version != onB.Version {
		t.Errorf("Get = %+v, want part a of the first change and b of the second, each at its commit's version", got.Parts)
	}
	if string(shared.Fresh.Parts["b"].Data) != `{"b":2}` {
		t.Errorf("Fresh of the conflict = %+v, want every part as stored", shared.Fresh.Parts)
	}
}
