package watch

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/goal"
)

// goalLines are the goal's part of the panel: status, objective,
// criterion, the three budgets (used, limit, left), the plan's progress,
// what a waiting goal waits for, the reason of an ended one, its check
// and task file.
func (m Model) goalLines(st styles) []string {
	g := m.snap.State.Goal
	if g == nil {
		return []string{st.title.Render("No goal") + "  (agentd goal create OBJECTIVE sets one)"}
	}
	head := st.title.Render("Goal") + "  " + st.statusText(g.Status)
	if g.Stalled {
		head += "  " + st.bad.Render("stalled: the last goal turns changed nothing")
	}
	lines := []string{head, label(st, "Objective", shown(g.Objective))}
	if g.CompletionCriterion != "" {
		lines = append(lines, label(st, "Done when", shown(g.CompletionCriterion)))
	}
	b := g.Budget
	lines = append(lines,
		label(st, "Turns", budgetText(g.TurnsUsed, b.TurnBudget, b.RemainingTurns, b.TurnBudgetReached, count)),
		label(st, "Tokens", budgetText(g.TokensUsed, b.TokenBudget, b.RemainingTokens, b.TokenBudgetReached, goal.FormatTokens)),
		m.timeLine(st, g))
	if p := progressText(g); p != "" {
		lines = append(lines, label(st, "Progress", p))
	}
	if g.Status == "waiting" && g.Wait != nil {
		lines = append(lines, m.waitLines(st, g.Wait)...)
	}
	if g.TerminalReason != "" {
		lines = append(lines, label(st, "Reason", shown(g.TerminalReason)))
	}
	if g.Check != nil {
		lines = append(lines, label(st, "Check", m.checkText(g.Check)))
	}
	if tf := g.TaskFile; tf != nil {
		state := "present"
		if !tf.Exists {
			state = "missing"
		}
		lines = append(lines, label(st, "Task file", fmt.Sprintf("%s (%s)", shown(tf.Path), state)))
	}
	return lines
}

// compactBelow: with fewer lines than this left for the lists, the goal
// is shown in compactGoalLines, so that a short terminal still shows the
// todo list.
const compactBelow = 8

// compactGoalLines are the goal in two or three lines: status and
// objective; turns, tokens and time used of their limits, and the plan's
// progress; what a waiting goal waits for.
func (m Model) compactGoalLines(st styles) []string {
	g := m.snap.State.Goal
	if g == nil {
		return []string{st.title.Render("No goal")}
	}
	b := g.Budget
	used := []string{
		usedOf(g.TurnsUsed, b.TurnBudget, count) + " turns",
		usedOf(g.TokensUsed, b.TokenBudget, goal.FormatTokens) + " tokens",
		usedOf(m.liveWallMs(g), b.WallClockBudgetMs, goal.FormatElapsed),
	}
	if p := g.Progress; p != nil && p.Todos != nil {
		used = append(used, fmt.Sprintf("%d/%d done", p.Todos.Done, p.Todos.Total))
	}
	lines := []string{
		st.title.Render("Goal") + "  " + st.statusText(g.Status) + "  " + shown(g.Objective),
		"  " + strings.Join(used, ", "),
	}
	if g.Status == "waiting" && g.Wait != nil {
		lines = append(lines, m.waitLines(st, g.Wait)[0])
	}
	return lines
}

// usedOf is "used/limit", or "used" without a limit.
func usedOf(used int64, limit *int64, format func(int64) string) string {
	if limit == nil {
		return format(used)
	}
	return format(used) + "/" + format(*limit)
}

// budgetText is "used/limit (N left)", "used/limit (reached)" or "used
// (no limit)", the numbers written by format.
func budgetText(used int64, limit, left *int64, reached bool, format func(int64) string) string {
	switch {
	case limit == nil:
		return format(used) + " (no limit)"
	case reached:
		return format(used) + "/" + format(*limit) + " (reached)"
	case left != nil:
		return format(used) + "/" + format(*limit) + " (" + format(*left) + " left)"
	}
	return format(used) + "/" + format(*limit)
}

// count writes a count of turns.
func count(n int64) string { return strconv.FormatInt(n, 10) }

// liveWallMs is the goal's wall clock now: the snapshot's, plus the time
// since it was read while the clock runs (an active goal, or a waiting one
// whose wait counts: docs/runtime.md §2.4.1, §2.13).
func (m Model) liveWallMs(g *protocol.GoalSnapshot) int64 {
	ms := g.WallClockMs
	running := g.Status == "active" || g.Status == "waiting" && g.Wait != nil && g.Wait.WallClock == "counts"
	if running && m.now.After(m.snap.At) {
		ms += m.now.Sub(m.snap.At).Milliseconds()
	}
	return ms
}

func (m Model) timeLine(st styles, g *protocol.GoalSnapshot) string {
	ms := m.liveWallMs(g)
	limit := g.Budget.WallClockBudgetMs
	var left *int64
	if limit != nil {
		l := max(0, *limit-ms)
		left = &l
	}
	reached := g.Budget.WallClockBudgetReached || limit != nil && ms >= *limit
	text := budgetText(ms, limit, left, reached, goal.FormatElapsed)
	if w := g.Wait; g.Status == "waiting" && w != nil {
		if w.WallClock == "counts" {
			text += ", counting while it waits"
		} else {
			text += ", stopped while it waits"
		}
	}
	return label(st, "Time", text)
}

// progressText is the goal's progress from its plan (docs/runtime.md
// §2.12): "2/5 todo items done, 3/7 checked in TASKS.md"; "" when there is
// nothing to count.
func progressText(g *protocol.GoalSnapshot) string {
	p := g.Progress
	if p == nil {
		return ""
	}
	var parts []string
	if p.Todos != nil {
		parts = append(parts, fmt.Sprintf("%d/%d todo %s done", p.Todos.Done, p.Todos.Total, noun(p.Todos.Total, "item")))
	}
	if p.Checkboxes != nil && g.TaskFile != nil {
		parts = append(parts, fmt.Sprintf("%d/%d checked in %s", p.Checkboxes.Checked, p.Checkboxes.Total, shown(g.TaskFile.Path)))
	}
	if len(parts) > 0 && g.RequireTodos && p.Todos != nil {
		parts = append(parts, "completion waits for the items")
	}
	return strings.Join(parts, ", ")
}

// noun is the noun for n things: "1 item", "2 items".
func noun(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

// waitLines say what a waiting goal waits for, since when and by whom
// (docs/runtime.md §2.13).
func (m Model) waitLines(st styles, w *protocol.GoalWait) []string {
	var what []string
	if w.Until != nil {
		what = append(what, w.Until.In(m.loc).Format(time.DateTime))
	}
	if len(w.Paths) > 0 {
		paths := make([]string, len(w.Paths))
		for i, p := range w.Paths {
			paths[i] = shown(p)
		}
		what = append(what, "a change in "+strings.Join(paths, ", "))
	}
	if w.CheckPasses {
		what = append(what, "the check to pass")
	}
	what = append(what, "a resume")
	by := "you"
	if w.By == "model" {
		by = "the model"
	}
	since := fmt.Sprintf("%s, asked by %s", w.Since.In(m.loc).Format(time.DateTime), by)
	if w.Note != "" {
		since += ": " + strconv.Quote(shown(w.Note))
	}
	return []string{label(st, "Waits for", strings.Join(what, " or ")), label(st, "Since", since)}
}

// checkText is the goal's check and its state: "`go test`: passed at
// 12:03:04", "running now", "not run yet", and whether it may run here.
func (m Model) checkText(c *protocol.Check) string {
	s := "`" + shown(c.Command) + "`: "
	switch {
	case c.Running:
		s += "running now"
	case c.LastRun == nil:
		s += "not run yet"
	case c.LastRun.ExitCode == 0:
		s += "passed at " + c.LastRun.At.In(m.loc).Format(time.TimeOnly)
	case c.LastRun.ExitCode < 0:
		s += "did not finish, at " + c.LastRun.At.In(m.loc).Format(time.TimeOnly)
	default:
		s += fmt.Sprintf("failed (exit %d) at %s", c.LastRun.ExitCode, c.LastRun.At.In(m.loc).Format(time.TimeOnly))
	}
	if c.Approved == nil || !*c.Approved {
		s += "; not approved on this machine (agentd goal check --approve)"
	}
	return s
}
