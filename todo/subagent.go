package todo

import "github.com/agentd/agentd/commands/protocol"

// SubagentList is the todo list of one subagent of a session, as the wire
// carries it (docs/runtime.md §1.3): its own list, linked to the item of
// the session's list its parent was working on.
type SubagentList = protocol.SubagentList

// Bounds of a session's subagent lists (docs/runtime.md §1.3). Each list
// is a list (Normalize's limits); together their items take at most
// MaxSubagentBytes as JSON, so that a session with its own list and every
// subagent list at their limits still fits one etcd request (docs/team.md).
const (
	MaxSubagentLists = 20           // subagent lists kept per session
	MaxSubagentBytes = MaxListBytes // bytes of all subagent lists' items, each list encoded as JSON
)

// ParentItem is the title a subagent's new list is linked to: the one item
// of parent, the session's list, that is in_progress; "" when no item is,
// or several are (the subagent cannot be told apart from its siblings).
func ParentItem(parent []Item) string {
	title := ""
	for _, it := range parent {
		if it.Status != InProgress {
			continue
		}
		if title != "" {
			return ""
		}
		title = it.Title
	}
	return title
}

// SubagentItems is agent's list among lists, and whether it has one.
func SubagentItems(lists []SubagentList, agent string) ([]Item, bool) {
	for _, l := range lists {
		if l.Agent == agent {
			return l.Items, true
		}
	}
	return nil, false
}

// WriteSubagent returns lists with agent's list replaced by items (already
// normalised), and agent's items before (nil when it had no list). A new
// list is linked to ParentItem(parent); a list keeps the link of its first
// write. The written list moves to the end (lists are kept least recently
// written first), then the oldest lists are pruned until at most
// MaxSubagentLists remain and their items take at most MaxSubagentBytes:
// finished ones (empty, or every item done) first, then unfinished ones;
// the written list is never pruned. lists is not changed.
func WriteSubagent(lists []SubagentList, agent string, items []Item, parent []Item) (out []SubagentList, before []Item) {
	link := ParentItem(parent)
	out = make([]SubagentList, 0, len(lists)+1)
	for _, l := range lists {
		if l.Agent == agent {
			before, link = l.Items, l.ParentItem
			continue
		}
		out = append(out, l)
	}
	if items == nil {
		items = []Item{}
	}
	out = append(out, SubagentList{Agent: agent, ParentItem: link, Items: Clone(items)})
	return prune(out), before
}

// prune drops the oldest lists of lists but the last until the bounds
// hold: finished lists first, then any.
func prune(lists []SubagentList) []SubagentList {
	size := 0
	for _, l := range lists {
		size += encodedSize(l.Items)
	}
	over := func() bool { return len(lists) > MaxSubagentLists || size > MaxSubagentBytes }
	for _, finishedOnly := range []bool{true, false} {
		for i := 0; i < len(lists)-1 && over(); {
			if finishedOnly && !finished(lists[i].Items) {
				i++
				continue
			}
			size -= encodedSize(lists[i].Items)
			lists = append(lists[:i], lists[i+1:]...)
		}
	}
	return lists
}

// finished: every item of items is done (an empty list is finished).
func finished(items []Item) bool {
	for _, it := range items {
		if it.Status != Done {
			return false
		}
	}
	return true
}

// CloneSubagentLists returns a copy of lists that shares no memory with it.
func CloneSubagentLists(lists []SubagentList) []SubagentList {
	if lists == nil {
		return nil
	}
	out := make([]SubagentList, len(lists))
	for i, l := range lists {
		out[i] = l
		out[i].Items = Clone(l.Items)
	}
	return out
}
