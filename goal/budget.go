package goal

import (
	"fmt"
	"github.com/agentd/agentd/commands/protocol"
	"math"
	"strconv"
	"strings"
	"time"
)

// Limits are a goal's budgets (docs/runtime.md §2.1). A nil field is no limit;
// there are no default budgets. Limits merge per field: setting one never
// touches the others.
type Limits struct {
	TurnBudget        *int64 `json:"turnBudget"`
	TokenBudget       *int64 `json:"tokenBudget"`
	WallClockBudgetMs *int64 `json:"wallClockBudgetMs"`
}

// BudgetKind names one of the three budgets.
type BudgetKind string

// The three budgets, in the order block reasons list them (docs/runtime.md §2.4).
const (
	TurnBudget      BudgetKind = "turns"
	TokenBudget     BudgetKind = "tokens"
	WallClockBudget BudgetKind = "wallClock" // limit in milliseconds
)

// Bounds of budgets (docs/runtime.md §2.8: a time budget must be 1 s … 24 h).
const (
	MinWallClockBudgetMs = int64(time.Second / time.Millisecond)
	MaxWallClockBudgetMs = int64(24 * time.Hour / time.Millisecond)
	// MaxCountBudget bounds turn and token budgets so that they stay exact
	// integers; anything above is not a reasonable budget.
	MaxCountBudget = int64(1) << 50
)

// BudgetUnits are the units SetGoalBudget accepts (docs/runtime.md §2.8).
var BudgetUnits = []string{"turns", "tokens", "milliseconds", "seconds", "minutes", "hours"}

var unitMs = map[string]float64{
	"milliseconds": 1,
	"seconds":      1000,
	"minutes":      60 * 1000,
	"hours":        60 * 60 * 1000,
}

// NormalizeBudget turns a SetGoalBudget value and unit into a budget and its
// limit (docs/runtime.md §2.8): turns and tokens become max(1, round(value)); a
// time becomes milliseconds, rounded, and must lie within 1 s … 24 h. Errors
// are *Error with code goal.budget_invalid.
func NormalizeBudget(value float64, unit string) (BudgetKind, int64, error) {
	if math.IsNaN(value) || math.IsInf(value, 0) || value <= 0 {
		return "", 0, errorf(CodeBudgetInvalid, "value must be a number greater than 0")
	}
	switch unit {
	case "turns", "tokens":
		if value > float64(MaxCountBudget) {
			return "", 0, errorf(CodeBudgetInvalid, fmt.Sprintf("%s %s is not a reasonable budget", formatNumber(value), unit))
		}
		n := max(1, int64(math.Round(value)))
		if unit == "turns" {
			return TurnBudget, n, nil
		}
		return TokenBudget, n, nil
	}
	f, ok := unitMs[unit]
	if !ok {
		return "", 0, errorf(CodeBudgetInvalid, fmt.Sprintf("unit %q is not valid; use one of %s", unit, strings.Join(BudgetUnits, ", ")))
	}
	ms := math.Round(value * f)
	if ms < float64(MinWallClockBudgetMs) || ms > float64(MaxWallClockBudgetMs) {
		return "", 0, errorf(CodeBudgetInvalid, fmt.Sprintf("%s %s is not a reasonable budget: a time budget must be between 1 second and 24 hours", formatNumber(value), unit))
	}
	return WallClockBudget, int64(ms), nil
}

func formatNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// FormatBudget writes a limit for people and models: "1 turn", "5 turns",
// "1 token", "50000 tokens"; a wall-clock limit in the largest unit that
// divides it exactly: "1 hour", "90 minutes", "45 seconds", "1500
// milliseconds". The unit is singular at exactly 1.
func FormatBudget(kind BudgetKind, limit int64) string {
	switch kind {
	case TurnBudget:
		return Plural(limit, "turn")
	case TokenBudget:
		return Plural(limit, "token")
	}
	switch {
	case limit%3_600_000 == 0:
		return Plural(limit/3_600_000, "hour")
	case limit%60_000 == 0:
		return Plural(limit/60_000, "minute")
	case limit%1000 == 0:
		return Plural(limit/1000, "second")
	}
	return Plural(limit, "millisecond")
}

// set stores limit as the budget of kind.
func (l *Limits) set(kind BudgetKind, limit *int64) {
	switch kind {
	case TurnBudget:
		l.TurnBudget = limit
	case TokenBudget:
		l.TokenBudget = limit
	case WallClockBudget:
		l.WallClockBudgetMs = limit
	}
}

// get is the limit of kind, nil for none.
func (l Limits) get(kind BudgetKind) *int64 {
	switch kind {
	case TurnBudget:
		return l.TurnBudget
	case TokenBudget:
		return l.TokenBudget
	case WallClockBudget:
		return l.WallClockBudgetMs
	}
	return nil
}

// Equal says whether l and o hold the same limits.
func (l Limits) Equal(o Limits) bool {
	return sameLimit(l.TurnBudget, o.TurnBudget) && sameLimit(l.TokenBudget, o.TokenBudget) && sameLimit(l.WallClockBudgetMs, o.WallClockBudgetMs)
}

// any says whether l holds a limit.
func (l Limits) any() bool {
	return l.TurnBudget != nil || l.TokenBudget != nil || l.WallClockBudgetMs != nil
}

// sameLimit says whether a and b are the same limit (nil: none).
func sameLimit(a, b *int64) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func (l Limits) clone() Limits {
	return Limits{TurnBudget: clonePtr(l.TurnBudget), TokenBudget: clonePtr(l.TokenBudget), WallClockBudgetMs: clonePtr(l.WallClockBudgetMs)}
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// LimitUpdate and BudgetUpdate are a user's budget change as the wire
// carries it (agentd.goal.setBudget, docs/protocol.md §3).
type (
	LimitUpdate  = protocol.LimitUpdate
	BudgetUpdate = protocol.BudgetUpdate
)

// mergeBudget validates a user budget change u: turns and tokens whole numbers
// greater than 0, the wall clock within 1 s … 24 h (rounded to a
// millisecond). It returns the new limits merged into old.
func mergeBudget(u BudgetUpdate, old Limits) (Limits, error) {
	out := old.clone()
	count := func(name string, f LimitUpdate, dst **int64) error {
		if !f.Set {
			return nil
		}
		if f.Value == nil {
			*dst = nil
			return nil
		}
		v := *f.Value
		if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 || v != math.Trunc(v) || v > float64(MaxCountBudget) {
			return errorf(CodeBudgetInvalid, fmt.Sprintf("%s must be a whole number from 1 to %d (2^50), or null to remove the limit", name, MaxCountBudget))
		}
		n := int64(v)
		*dst = &n
		return nil
	}
	if err := count("turns", u.Turns, &out.TurnBudget); err != nil {
		return old, err
	}
	if err := count("tokens", u.Tokens, &out.TokenBudget); err != nil {
		return old, err
	}
	if f := u.WallClockMs; f.Set {
		if f.Value == nil {
			out.WallClockBudgetMs = nil
		} else {
			ms := math.Round(*f.Value)
			if math.IsNaN(ms) || ms < float64(MinWallClockBudgetMs) || ms > float64(MaxWallClockBudgetMs) {
				return old, errorf(CodeBudgetInvalid, "wallClockMs must be between 1000 (1 second) and 86400000 (24 hours), or null to remove the limit")
			}
			n := int64(ms)
			out.WallClockBudgetMs = &n
		}
	}
	return out, nil
}

// reached says which budgets are reached (used >= limit).
type reached struct{ turn, token, wallClock bool }

func (r reached) any() bool { return r.turn || r.token || r.wallClock }

// budgetReason lists the reached budgets with their limits, in the order
// turn, token, wall clock (docs/runtime.md §2.4).
func budgetReason(l Limits, r reached) string {
	var parts []string
	if r.turn && l.TurnBudget != nil {
		parts = append(parts, "turn budget of "+FormatBudget(TurnBudget, *l.TurnBudget))
	}
	if r.token && l.TokenBudget != nil {
		parts = append(parts, "token budget of "+FormatBudget(TokenBudget, *l.TokenBudget))
	}
	if r.wallClock && l.WallClockBudgetMs != nil {
		parts = append(parts, "wall-clock budget of "+FormatBudget(WallClockBudget, *l.WallClockBudgetMs))
	}
	return "budget reached: " + strings.Join(parts, ", ")
}

// report builds the budget part of a snapshot from limits and usage.
func report(l Limits, turns, tokens, wallMs int64) BudgetReport {
	r := BudgetReport{
		TokenBudget:       clonePtr(l.TokenBudget),
		TurnBudget:        clonePtr(l.TurnBudget),
		WallClockBudgetMs: clonePtr(l.WallClockBudgetMs),
	}
	remaining := func(limit *int64, used int64) (*int64, bool) {
		if limit == nil {
			return nil, false
		}
		v := max(0, *limit-used)
		return &v, used >= *limit
	}
	r.RemainingTurns, r.TurnBudgetReached = remaining(l.TurnBudget, turns)
	r.RemainingTokens, r.TokenBudgetReached = remaining(l.TokenBudget, tokens)
	r.RemainingWallClockMs, r.WallClockBudgetReached = remaining(l.WallClockBudgetMs, wallMs)
	r.OverBudget = r.TurnBudgetReached || r.TokenBudgetReached || r.WallClockBudgetReached
	return r
}
