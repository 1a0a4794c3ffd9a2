package workspace

import (
	"fmt"
	"slices"
	"time"

	"github.com/agentd/agentd/goal"
)

// Requests a client identified (a command's requestId, docs/team.md "What
// a write acknowledges"): a write whose outcome the client could not learn
// (workspace.outcome_unknown, a lost answer) is sent again with the same
// id, and must not apply twice. The session keeps the ids of the writes
// it applied, in the same write as their change, so the copy sent again,
// to this daemon or another of the team, finds its id and changes
// nothing. The ids are kept for RequestTTL and at most MaxRequests per
// session, the newest.

// Request is a write a client identified that the session applied, and
// what the copy sent again answers with besides the session.
type Request struct {
	ID       string
	At       time.Time // when it was applied (wall clock)
	Revision uint64    // the session's revision it made
	RunID    string    // the run of the goal's check it started (agentd.goal.runCheck), else ""
	Reverts  uint64    // the seq of the change it reverted (agentd.undo), else 0
}

// RequestTTL and MaxRequests bound the ids a session keeps.
const (
	RequestTTL  = time.Hour
	MaxRequests = 64
)

// MaxRequestIDBytes bounds a request id.
const MaxRequestIDBytes = 128

// CheckRequestID refuses a request id that is not at most
// MaxRequestIDBytes letters, digits, '-' and '_' (args.invalid); "" is
// none, and passes.
func CheckRequestID(id string) error {
	ok := len(id) <= MaxRequestIDBytes
	for _, r := range id {
		ok = ok && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}
	if !ok {
		return &Error{Code: goal.CodeArgsInvalid, Msg: fmt.Sprintf("requestId %q: at most %d letters, digits, '-' and '_'", id, MaxRequestIDBytes)}
	}
	return nil
}

// Request returns the write of request id the session applied; false
// when it applied none.
func (s *Session) Request(id string) (Request, bool) {
	i := slices.IndexFunc(s.Requests, func(r Request) bool { return r.ID == id })
	if i < 0 {
		return Request{}, false
	}
	return s.Requests[i], true
}

// RecordRequest records, in the change being made of s, that it applies
// the write r identifies (r.ID, and what it answers with) at now; ids older
// than RequestTTL, and the oldest beyond MaxRequests, are dropped.
func (s *Session) RecordRequest(r Request, now time.Time) {
	kept := slices.DeleteFunc(slices.Clone(s.Requests), func(r Request) bool { return now.Sub(r.At) > RequestTTL })
	r.At, r.Revision = now.UTC(), s.Revision+1
	kept = append(kept, r)
	if n := len(kept); n > MaxRequests {
		kept = kept[n-MaxRequests:]
	}
	s.Requests = kept
}
