package todo

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParentItem: a subagent's list links to the one in_progress item of
// the session's list, to none when no item or several are in progress
// (docs/runtime.md §1.3).
func TestParentItem(t *testing.T) {
	for _, c := range []struct {
		parent []Item
		want   string
	}{
		{nil, ""},
		{[]Item{{Title: "a", Status: Done}, {Title: "b", Status: Pending}}, ""},
		{[]Item{{Title: "a", Status: Done}, {Title: "b", Status: InProgress}, {Title: "c", Status: Pending}}, "b"},
		{[]Item{{Title: "a", Status: InProgress}, {Title: "b", Status: InProgress}}, ""},
	} {
		if got := ParentItem(c.parent); got != c.want {
			t.Errorf("ParentItem(%v) = %q, want %q", c.parent, got, c.want)
		}
	}
}

// TestWriteSubagentKeepsItsLink: a subagent's first write links its list
// to the parent's item in progress then; later writes replace its items,
// keep the link even when the parent has moved on, move the list to the
// end, and leave other lists and the caller's slice as they were.
func TestWriteSubagentKeepsItsLink(t *testing.T) {
	parent := []Item{{Title: "parse", Status: InProgress}, {Title: "render", Status: Pending}}
	first := []Item{{Title: "read the grammar", Status: InProgress}}
	lists, before := WriteSubagent(nil, "a1", first, parent)
	want := []SubagentList{{Agent: "a1", ParentItem: "parse", Items: first}}
	if before != nil || !cmp.Equal(lists, want) {
		t.Fatalf("first write: %+v, before %v; want %+v, no before", lists, before, want)
	}
	lists, _ = WriteSubagent(lists, "a2", []Item{}, nil)
	moved := []Item{{Title: "parse", Status: Done}, {Title: "render", Status: InProgress}}
	second := []Item{{Title: "read the grammar", Status: Done}}
	orig := CloneSubagentLists(lists)
	got, before := WriteSubagent(lists, "a1", second, moved)
	want = []SubagentList{{Agent: "a2", Items: []Item{}}, {Agent: "a1", ParentItem: "parse", Items: second}}
	if !cmp.Equal(got, want) || !cmp.Equal(before, first) {
		t.Fatalf("second write: %+v, before %v; want %+v, before %v", got, before, want, first)
	}
	if !cmp.Equal(lists, orig) {
		t.Fatalf("WriteSubagent changed its input: %+v, was %+v", lists, orig)
	}
}

// TestWriteSubagentPrunesOldestFinished: past MaxSubagentLists the oldest
// finished list goes first, then the oldest unfinished one; the list being
// written stays.
func TestWriteSubagentPrunesOldestFinished(t *testing.T) {
	var lists []SubagentList
	for i := range MaxSubagentLists {
		status := Pending
		if i == 3 || i == 5 {
			status = Done
		}
		lists, _ = WriteSubagent(lists, fmt.Sprintf("a%d", i), []Item{{Title: "t", Status: status}}, nil)
	}
	agents := func(ls []SubagentList) []string {
		var out []string
		for _, l := range ls {
			out = append(out, l.Agent)
		}
		return out
	}
	lists, _ = WriteSubagent(lists, "new1", []Item{{Title: "t", Status: Pending}}, nil)
	if len(lists) != MaxSubagentLists || lists[3].Agent != "a4" || lists[0].Agent != "a0" {
		t.Fatalf("after one more: %v; want a3 (the oldest finished) pruned", agents(lists))
	}
	lists, _ = WriteSubagent(lists, "new2", []Item{{Title: "t", Status: Pending}}, nil)
	lists, _ = WriteSubagent(lists, "new3", []Item{{Title: "t", Status: Pending}}, nil)
	if len(lists) != MaxSubagentLists || lists[0].Agent != "a1" || lists[len(lists)-1].Agent != "new3" {
		t.Fatalf("after three more: %v; want a5, then a0 (the oldest unfinished) pruned", agents(lists))
	}
}

// TestWriteSubagentBoundsBytes: all subagent lists' items take at most
// MaxSubagentBytes; a full list written pushes out the others, never
// itself.
func TestWriteSubagentBoundsBytes(t *testing.T) {
	half := listOfBytes(t, MaxSubagentBytes/2)
	lists, _ := WriteSubagent(nil, "a", half, nil)
	lists, _ = WriteSubagent(lists, "b", half, nil)
	if len(lists) != 2 {
		t.Fatalf("two halves: %d lists, want 2", len(lists))
	}
	full := listOfBytes(t, MaxListBytes)
	lists, _ = WriteSubagent(lists, "c", full, nil)
	if len(lists) != 1 || lists[0].Agent != "c" {
		t.Fatalf("a full list: %d lists (last %s), want c alone", len(lists), lists[len(lists)-1].Agent)
	}
}
