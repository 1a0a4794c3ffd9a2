package workspace

import (
	"fmt"
	"testing"
	"time"
)

// TestRequestsBounded: a session keeps the ids of the identified writes it
// applied for RequestTTL, at most MaxRequests of them (the newest), each
// with the revision it made; an id that is not letters, digits, '-' and
// '_', or is too long, is refused.
func TestRequestsBounded(t *testing.T) {
	var s Session
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s.RecordRequest("old", t0)
	if !s.Requested("old") || s.Requests[0].Revision != 1 {
		t.Fatalf("requests %+v, want old at revision 1", s.Requests)
	}
	s.Revision = 7
	s.RecordRequest("new", t0.Add(RequestTTL+time.Second))
	if s.Requested("old") || !s.Requested("new") || s.Requests[0].Revision != 8 {
		t.Fatalf("requests %+v after RequestTTL, want only new, at revision 8", s.Requests)
	}
	for i := range MaxRequests + 5 {
		s.RecordRequest(fmt.Sprint("r", i), t0.Add(RequestTTL+2*time.Second))
	}
	if len(s.Requests) != MaxRequests || s.Requested("new") || !s.Requested(fmt.Sprint("r", MaxRequests+4)) {
		t.Fatalf("%d requests kept, want the newest %d", len(s.Requests), MaxRequests)
	}
	for _, id := range []string{"a b", "ä", string(make([]byte, MaxRequestIDBytes+1))} {
		if err := CheckRequestID(id); errorCode(err) != "args.invalid" {
			t.Errorf("CheckRequestID(%q): %v, want args.invalid", id, err)
		}
	}
	if err := CheckRequestID("create-5c1e_2"); err != nil {
		t.Errorf("a valid id refused: %v", err)
	}
}
