package goal

import (
	"fmt"
	"time"
)

// Budget warnings (docs/runtime.md §2.4.4): the two thresholds, in percent
// of a budget's limit, at which the goal warns once per budget.
const (
	FirstBudgetWarning = 50 // a budgetWarning change
	FinalBudgetWarning = 80 // a budgetWarning change and the one-time wrap-up note to the model
)

// budgetWarningPercents are the thresholds, lowest first.
var budgetWarningPercents = [...]int{FirstBudgetWarning, FinalBudgetWarning}

// BudgetWarned is the highest warning threshold (0, 50 or 80) each budget
// of a goal has fired; changing a budget's limit sets its value back to 0
// (docs/runtime.md §2.4.4).
type BudgetWarned struct {
	Turns     int
	Tokens    int
	WallClock int
}

// Checkboxes counts the Markdown checkboxes of a task file
// (docs/task-files.md, "Checkboxes"): Total items, Checked of them ticked.
type Checkboxes struct {
	Checked int `json:"checked"`
	Total   int `json:"total"`
}

// budgetUse is one set budget's usage, for the warning rule.
type budgetUse struct {
	kind        BudgetKind
	used, limit int64
	warned      *int
}

// uses lists the set budgets of g at now, in the order turn, token, wall
// clock.
func (g *Goal) uses(now Instant) []budgetUse {
	var out []budgetUse
	if l := g.Limits.TurnBudget; l != nil {
		out = append(out, budgetUse{TurnBudget, g.TurnsUsed, *l, &g.BudgetWarned.Turns})
	}
	if l := g.Limits.TokenBudget; l != nil {
		out = append(out, budgetUse{TokenBudget, g.TokensUsed, *l, &g.BudgetWarned.Tokens})
	}
	if l := g.Limits.WallClockBudgetMs; l != nil {
		out = append(out, budgetUse{WallClockBudget, g.wallClockMs(now), *l, &g.BudgetWarned.WallClock})
	}
	return out
}

// thresholdUse is the usage at which percent of limit is used: the
// smallest whole amount u with u*100 >= limit*percent.
func thresholdUse(limit int64, percent int) int64 {
	return (limit*int64(percent) + 99) / 100
}

// warnBudgets fires the warning thresholds the active goal g has newly
// reached at now (docs/runtime.md §2.4.4): per budget, one budgetWarning
// change (actor runtime) with the highest threshold reached and not yet
// fired; thresholds passed at once fire as one change of the higher one.
// Reaching FinalBudgetWarning makes the wrap-up note due.
func (g *Goal) warnBudgets(now Instant) []Change {
	if g.Status != Active {
		return nil
	}
	var cs []Change
	for _, u := range g.uses(now) {
		top := 0
		for _, p := range budgetWarningPercents {
			if p > *u.warned && u.used >= thresholdUse(u.limit, p) {
				top = p
			}
		}
		if top == 0 {
			continue
		}
		*u.warned = top
		if top == FinalBudgetWarning {
			g.WrapUpDue = true
		}
		reason := fmt.Sprintf("%d %% of the %s used", top, budgetName(u.kind, u.limit))
		cs = append(cs, Change{Kind: ChangeBudgetWarning, Status: g.Status, Reason: reason, Actor: Runtime, Percent: top, Goal: g.snapshot(now)})
	}
	return cs
}

// budgetName is "turn budget of 10 turns" (docs/runtime.md §2.4).
func budgetName(kind BudgetKind, limit int64) string {
	switch kind {
	case TurnBudget:
		return "turn budget of " + FormatBudget(kind, limit)
	case TokenBudget:
		return "token budget of " + FormatBudget(kind, limit)
	}
	return "wall-clock budget of " + FormatBudget(kind, limit)
}

// rearmWarnings sets the fired threshold of each budget whose limit differs
// between old and g.Limits back to 0 (docs/runtime.md §2.4.4).
func (g *Goal) rearmWarnings(old Limits) {
	if !sameLimit(old.TurnBudget, g.Limits.TurnBudget) {
		g.BudgetWarned.Turns = 0
	}
	if !sameLimit(old.TokenBudget, g.Limits.TokenBudget) {
		g.BudgetWarned.Tokens = 0
	}
	if !sameLimit(old.WallClockBudgetMs, g.Limits.WallClockBudgetMs) {
		g.BudgetWarned.WallClock = 0
	}
}

// NextWallClockWarning is the time until the active goal's wall clock
// reaches the next warning threshold not yet fired (docs/runtime.md
// §2.4.4), measured on the monotonic clock, for the serving process's
// timer; 0 when it is already reached. ok is false when the goal is not
// active, has no wall-clock budget, or has fired every threshold.
func (s *State) NextWallClockWarning(now Instant) (left time.Duration, ok bool) {
	g := s.Goal
	if g == nil || g.Status != Active || g.Limits.WallClockBudgetMs == nil {
		return 0, false
	}
	for _, p := range budgetWarningPercents {
		if p > g.BudgetWarned.WallClock {
			ms := max(0, thresholdUse(*g.Limits.WallClockBudgetMs, p)-g.wallClockMs(now))
			return time.Duration(ms) * time.Millisecond, true
		}
	}
	return 0, false
}

// NoteProgress records a change of the session's todo list
// (docs/runtime.md §2.4.5): it counts as progress of the current goal, and
// a stalled goal is no longer stalled (a stallCleared change, actor
// runtime). The task file's changes are recorded by UpdateTaskFile.
func (s *State) NoteProgress(now Instant) []Change {
	g := s.Goal
	if g == nil || g.Status == Complete {
		return nil
	}
	return g.progressed(now)
}

// progressed marks progress since the last goal turn and clears a stall.
func (g *Goal) progressed(now Instant) []Change {
	g.Progressed, g.QuietTurns = true, 0
	if !g.Stalled {
		return nil
	}
	g.Stalled = false
	return []Change{{Kind: ChangeStallCleared, Status: g.Status, Reason: "the todo list or the task file changed", Actor: Runtime, Goal: g.snapshot(now)}}
}

// countTurn applies the stall rule at the end of a goal turn that left g
// active (docs/runtime.md §2.4.5): a turn after which neither the todo list
// nor the task file changed since the previous one counts; stallTurns
// such turns in a row (0 or less: never) stall the goal (a stall change,
// actor runtime). A stalled goal whose turn ends with the setting at 0 is
// no longer stalled (a stallCleared change): detection is off.
func (g *Goal) countTurn(stallTurns int, now Instant) []Change {
	if g.Progressed {
		g.Progressed, g.QuietTurns = false, 0
		return nil
	}
	g.QuietTurns++
	if stallTurns <= 0 && g.Stalled {
		g.Stalled = false
		return []Change{{Kind: ChangeStallCleared, Status: g.Status, Reason: "stall detection is off (stallTurns is 0)", Actor: Runtime, Goal: g.snapshot(now)}}
	}
	if stallTurns <= 0 || g.Stalled || g.QuietTurns < stallTurns {
		return nil
	}
	g.Stalled = true
	reason := fmt.Sprintf("%s in a row ended with no change to the todo list or the task file", Plural(int64(g.QuietTurns), "goal turn"))
	return []Change{{Kind: ChangeStall, Status: g.Status, Reason: reason, Actor: Runtime, Goal: g.snapshot(now)}}
}
