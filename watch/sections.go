package watch

import (
	"fmt"
	"time"

	"github.com/agentd/agentd/commands/protocol"
)

// section is one list of the panel: a title line and its rows, of which
// fit shows as many as there is room for.
type section struct {
	title string
	rows  []string
	empty string // the row when there are none: "empty"
}

// todoSection is the todo list: "[x]" done, "[>]" in progress, "[ ]"
// pending; each subagent's list under the item it is linked to, and those
// linked to no item of the list after it.
func (m Model) todoSection(st styles) section {
	items := m.snap.State.Todos.Items
	subs := m.snap.State.Todos.SubagentLists
	placed := make([]bool, len(subs))
	var rows []string
	sublists := func(parent string, linked bool) {
		for i, l := range subs {
			if placed[i] || linked && l.ParentItem != parent {
				continue
			}
			placed[i] = true
			head := "    subagent " + shown(l.Agent) + ":"
			if !linked {
				head = "  subagent " + shown(l.Agent) + " (linked to no item):"
			}
			rows = append(rows, st.faint.Render(head))
			for _, it := range l.Items {
				rows = append(rows, "      "+todoRow(it))
			}
		}
	}
	done := 0
	for _, it := range items {
		if it.Status == protocol.TodoDone {
			done++
		}
		rows = append(rows, "  "+todoRow(it))
		sublists(it.Title, true)
	}
	sublists("", false)
	title := st.title.Render("Todo")
	if len(items) > 0 {
		title += fmt.Sprintf("  %d/%d done", done, len(items))
	}
	return section{title: title, rows: rows, empty: "  (empty)"}
}

// todoRow is an item with its mark: "[>] parse comments".
func todoRow(it protocol.TodoItem) string {
	mark := "[ ]"
	switch it.Status {
	case protocol.TodoDone:
		mark = "[x]"
	case protocol.TodoInProgress:
		mark = "[>]"
	}
	return mark + " " + shown(it.Title)
}

// queueSection is the goal queue, first first (docs/runtime.md §2.9).
func (m Model) queueSection(st styles) section {
	q := m.snap.State.Queue
	rows := make([]string, len(q.Items))
	for i, g := range q.Items {
		rows[i] = fmt.Sprintf("  %d. %s", i+1, shown(g.Objective))
		if g.Check != "" {
			rows[i] += st.faint.Render("  check: `" + shown(g.Check) + "`")
		}
	}
	advance := "off"
	if q.AutoAdvance {
		advance = "on"
	}
	return section{title: st.title.Render("Queue") + "  auto-advance " + advance, rows: rows, empty: "  (empty)"}
}

// historySection is the last changes, newest first: time, actor, kind and
// reason (as `agentd history` prints them).
func (m Model) historySection(st styles) section {
	rows := make([]string, len(m.snap.History))
	for i, ev := range m.snap.History {
		rows[i] = fmt.Sprintf("  %s  %-7s %s", ev.At.In(m.loc).Format(time.TimeOnly), shown(ev.Actor), shown(string(ev.Kind)))
		if ev.Reason != "" {
			rows[i] += ": " + shown(ev.Reason)
		}
	}
	return section{title: st.title.Render("Last changes"), rows: rows, empty: "  (none)"}
}

// fit lays out the sections in room lines (every line when room < 0),
// each after a blank line: every section gets its title while there is
// room, the earlier first, then the rows are dealt out one by one in turn,
// so that a long list does not hide the others; a cut list ends with "...
// N more".
func fit(secs []section, room int) []string {
	want := make([]int, len(secs)) // rows each would show
	for i, s := range secs {
		want[i] = max(1, len(s.rows))
	}
	got := make([]int, len(secs)) // rows given; -1: not even the title
	if room >= 0 {
		left := room
		for i := range secs {
			if left < 2 {
				got[i] = -1
				continue
			}
			left -= 2 // the blank line and the title
		}
		for dealt := true; dealt && left > 0; {
			dealt = false
			for i := range secs {
				if got[i] >= 0 && got[i] < want[i] && left > 0 {
					got[i]++
					left--
					dealt = true
				}
			}
		}
	} else {
		copy(got, want)
	}
	var out []string
	for i, s := range secs {
		if got[i] < 0 {
			continue
		}
		out = append(out, "", s.title)
		out = append(out, s.shownRows(got[i])...)
	}
	return out
}

// shownRows are n lines of s's rows: all of them, or the first n-1 and
// "... N more", or in one line the first and "(+N more)".
func (s section) shownRows(n int) []string {
	switch {
	case len(s.rows) == 0 && n > 0:
		return []string{s.empty}
	case n >= len(s.rows):
		return s.rows
	case n <= 0:
		return nil
	case n == 1:
		return []string{fmt.Sprintf("%s (+%d more)", s.rows[0], len(s.rows)-1)}
	}
	return append(s.rows[:n-1:n-1], fmt.Sprintf("  ... %d more", len(s.rows)-n+1))
}
