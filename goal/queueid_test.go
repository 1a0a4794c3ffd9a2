package goal

import (
	"strings"
	"testing"
)

// TestEnqueueWithIDOnce: a goal added with a client's id and added again
// with the same id (an add sent again after its answer was lost) is queued
// once; the id of another goal, or an id of the wrong shape, is refused
// and changes nothing (docs/team.md, "What a write acknowledges").
func TestEnqueueWithIDOnce(t *testing.T) {
	c := newClock()
	s := &State{}
	first, err := s.Enqueue(QueueParams{ID: "req-1", Objective: "write docs"}, c.now())
	mustNoErr(t, err)
	if first.Item == nil || first.Item.ID != "req-1" {
		t.Fatalf("first add = %+v, want item req-1", first)
	}
	again, err := s.Enqueue(QueueParams{ID: "req-1", Objective: " write docs "}, c.now())
	mustNoErr(t, err)
	if again.Item != nil || len(s.Queue) != 1 {
		t.Fatalf("the add sent again = %+v, queue %v; want no change, one item", again, ids(s))
	}
	for _, tc := range []struct {
		name string
		p    QueueParams
		msg  string
	}{
		{"id of another goal", QueueParams{ID: "req-1", Objective: "other work"}, "taken by another queued goal"},
		{"long id", QueueParams{ID: strings.Repeat("a", MaxQueuedIDBytes+1), Objective: "a"}, "at most 64"},
		{"slash in id", QueueParams{ID: "../x", Objective: "a"}, "at most 64 letters, digits"},
	} {
		_, err := s.Enqueue(tc.p, c.now())
		if codeOf(err) != CodeArgsInvalid || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %s saying %q", tc.name, err, CodeArgsInvalid, tc.msg)
		}
		if len(s.Queue) != 1 {
			t.Fatalf("%s changed the queue: %v", tc.name, ids(s))
		}
	}
}
