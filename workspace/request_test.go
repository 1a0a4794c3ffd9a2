package workspace

import (
	"fmt"
	"testing"
	"time"
)

// TestRequestsBounded: a session keeps the ids of the identified writes it
// applied for RequestTTL, at most MaxRequests of them (the newest), each
// with the revision it made and what it answers with (the run a check's
// start began, the change an undo reverted), kept through the record; an id that is not letters, digits, '-' and
// '_', or is too long, is refused.
func TestRequestsBounded(t *testing.T) {
	var s Session
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s.RecordRequest(Request{ID: "old"}, t0)
	if !requested(&s, "old") || s.Requests[0].Revision != 1 {
		t.Fatalf("requests %+v, want old at revision 1", s.Requests)
	}
	s.Revision = 7
	s.RecordRequest(Request{ID: "new"}, t0.Add(RequestTTL+time.Second))
	if requested(&s, "old") || !requested(&s, "new") || s.Requests[0].Revision != 8 {
		t.Fatalf("requests %+v after RequestTTL, want only new, at revision 8", s.Requests)
	}
	for i := range MaxRequests + 5 {
		s.RecordRequest(Request{ID: fmt.Sprint("r", i)}, t0.Add(RequestTTL+2*time.Second))
	}
	if len(s.Requests) != MaxRequests || requested(&s, "new") || !requested(&s, fmt.Sprint("r", MaxRequests+4)) {
		t.Fatalf("%d requests kept, want the newest %d", len(s.Requests), MaxRequests)
	}
	for _, id := range []string{"a b", "ä", string(make([]byte, MaxRequestIDBytes+1))} {
		if err := CheckRequestID(id); errorCode(err) != "args.invalid" {
			t.Errorf("CheckRequestID(%q): %v, want args.invalid", id, err)
		}
	}
	s.RecordRequest(Request{ID: "check", RunID: "RUN0000001"}, t0.Add(RequestTTL+3*time.Second))
	s.RecordRequest(Request{ID: "undo", Reverts: 12}, t0.Add(RequestTTL+3*time.Second))
	data, err := encodeSession(s)
	if err != nil {
		t.Fatal(err)
	}
	back, _, err := decodeSessionRecord(data)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := back.Request("check"); r.RunID != "RUN0000001" {
		t.Errorf("the check's request read back as %+v, want its run", r)
	}
	if r, _ := back.Request("undo"); r.Reverts != 12 {
		t.Errorf("the undo's request read back as %+v, want the seq it reverted", r)
	}
	if err := CheckRequestID("create-5c1e_2"); err != nil {
		t.Errorf("a valid id refused: %v", err)
	}
}

// requested says whether s applied the write of request id.
func requested(s *Session, id string) bool {
	_, ok := s.Request(id)
	return ok
}
