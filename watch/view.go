package watch

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/goal"
)

// View is the panel on the whole screen (the alternate screen).
func (m Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.WindowTitle = "agentd watch"
	return v
}

// Render is the panel as text, width columns wide and at most height
// lines (every line when height is 0): the header, the connection's
// trouble if any, the goal, then the todo list, the queue and the last
// changes sharing the lines left, and the keys last. A line too wide is
// cut with "...".
func (m Model) Render() string {
	st := m.styles()
	head := []string{st.title.Render("agentd watch") + "  " + shown(m.folder) + m.sessionName()}
	head = append(head, m.linkLines(st)...)
	foot := m.footer(st)
	var body []string
	switch {
	case m.help:
		body = helpLines(st)
	case m.snap == nil:
		body = []string{"", "Reading the session..."}
	default:
		body = append([]string{""}, m.goalLines(st)...)
		lists := []section{m.todoSection(st), m.queueSection(st), m.historySection(st)}
		room := -1
		if m.height > 0 {
			room = m.height - len(head) - len(body) - len(foot)
			if room < compactBelow {
				body = append([]string{""}, m.compactGoalLines(st)...)
				room = m.height - len(head) - len(body) - len(foot)
			}
		}
		body = append(body, fit(lists, room)...)
	}
	lines := append(head, body...)
	if m.height > 0 && len(lines)+len(foot) > m.height {
		lines = lines[:max(0, m.height-len(foot))]
	}
	lines = append(lines, foot...)
	if m.height > 0 && len(lines) > m.height {
		lines = lines[len(lines)-m.height:]
	}
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, max(m.width, 1), "...")
	}
	return strings.Join(lines, "\n")
}

// styles are the panel's text styles; all plain for a plain Model.
type styles struct {
	title, label, faint, bad, status lipgloss.Style
	statusColor                      map[protocol.GoalStatus]lipgloss.Style
}

func (m Model) styles() styles {
	if m.plain {
		return styles{}
	}
	c := func(s string) lipgloss.Style { return lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color(s)) }
	return styles{
		title: lipgloss.NewStyle().Bold(true),
		label: lipgloss.NewStyle().Faint(true),
		faint: lipgloss.NewStyle().Faint(true),
		bad:   lipgloss.NewStyle().Foreground(lipgloss.Color("1")),
		statusColor: map[protocol.GoalStatus]lipgloss.Style{
			"active": c("2"), "paused": c("3"), "waiting": c("6"), "blocked": c("1"), "complete": c("4"),
		},
	}
}

// statusText is status as the panel shows it, coloured by what it means.
func (st styles) statusText(s protocol.GoalStatus) string {
	if style, ok := st.statusColor[s]; ok {
		return style.Render(string(s))
	}
	return string(s)
}

// shown is text from the store as it may reach the terminal: control and
// invisible characters written as <U+XXXX> (goal.VisibleText: an escape
// sequence in an objective would redraw the terminal, docs/security.md),
// a tab as a space.
func shown(s string) string { return strings.ReplaceAll(goal.VisibleText(s), "\t", " ") }

func (m Model) sessionName() string {
	if m.snap == nil {
		return ""
	}
	return fmt.Sprintf(" (session %s)", shown(m.snap.State.Session))
}

// linkLines say what is wrong with the connection, if anything: not yet
// connected, or the daemon gone (why, when it is dialled again, and that
// what is shown is as last read).
func (m Model) linkLines(st styles) []string {
	switch m.link {
	case connecting:
		return []string{st.faint.Render("Connecting to the agentd daemon...")}
	case lost:
		line := "Lost the agentd daemon"
		if m.linkErr != nil {
			line += ": " + shown(m.linkErr.Error())
		}
		out := []string{st.bad.Render(line)}
		wait := "reconnecting now"
		if d := m.retry.Sub(m.now); d >= time.Second {
			wait = "reconnecting in " + goal.FormatElapsed(d.Milliseconds())
		}
		if m.snap != nil {
			wait += "; shown as read at " + m.snap.At.In(m.loc).Format(time.TimeOnly)
		}
		return append(out, st.bad.Render(wait))
	}
	return nil
}

// footer is the keys, and the outcome of the last one's command; nothing
// for a panel without keys (Once).
func (m Model) footer(st styles) []string {
	if m.send == nil {
		return nil
	}
	keys := st.faint.Render("p pause  r resume  ? help  q quit")
	if m.note == "" {
		return []string{"", keys}
	}
	note := strings.Split(ansi.Wrap(shown(m.note), max(m.width, 1), ""), "\n")
	if len(note) > noteLines {
		note = append(note[:noteLines-1], "...")
	}
	return append(append([]string{""}, note...), keys)
}

// noteLines bounds the lines of the last command's outcome: a refusal
// says who refused and what to do, and is wrapped rather than cut.
const noteLines = 4

func helpLines(st styles) []string {
	return []string{
		"",
		st.title.Render("Keys"),
		"  p  pause the goal, as you (agentd.goal.pause)",
		"  r  resume a paused, blocked or waiting goal, as you (agentd.goal.resume)",
		"  ?  show or hide this help",
		"  q  quit (also Ctrl-C)",
		"",
		"Pause and resume are yours, the person's: from an agent's shell they are",
		"refused, as the model's are (docs/runtime.md §7).",
		"The panel is redrawn when agentd tells a change; an active goal's time",
		"counts on between changes. Any key closes this help.",
	}
}

// label is a goal line: "  Turns      3/20 (17 left)".
func label(st styles, name, value string) string {
	return "  " + st.label.Render(fmt.Sprintf("%-10s", name)) + " " + value
}
