package goal

import (
	"fmt"
	"strconv"
	"strings"
)

// budgetUnitWords maps the unit words people write, and agentd prints, to
// the units of NormalizeBudget.
var budgetUnitWords = map[string]string{
	"turn": "turns", "turns": "turns",
	"token": "tokens", "tokens": "tokens", "tok": "tokens", "toks": "tokens",
	"ms": "milliseconds", "msec": "milliseconds", "msecs": "milliseconds", "millisecond": "milliseconds", "milliseconds": "milliseconds",
	"s": "seconds", "sec": "seconds", "secs": "seconds", "second": "seconds", "seconds": "seconds",
	"m": "minutes", "min": "minutes", "mins": "minutes", "minute": "minutes", "minutes": "minutes",
	"h": "hours", "hr": "hours", "hrs": "hours", "hour": "hours", "hours": "hours",
}

// countMultipliers are the suffixes of a turn or token count: "50k tokens",
// "1.2M tokens" (FormatTokens prints them).
var countMultipliers = map[string]float64{"k": 1e3, "m": 1e6}

// BudgetKindOf says which budget a unit word measures: "turn", "turns" and
// "turn(s)" the turns; "tokens" and "tok" the tokens; "hours", "h",
// "minutes", "min", "s", "ms" and the others of ParseBudget, or "time",
// the wall clock. Case is ignored; ok is false for any other word.
func BudgetKindOf(unit string) (kind BudgetKind, ok bool) {
	unit = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(unit)), "(s)", "s")
	if unit == "time" {
		return WallClockBudget, true
	}
	switch u, ok := budgetUnitWords[unit]; {
	case !ok:
		return "", false
	case u == "turns":
		return TurnBudget, true
	case u == "tokens":
		return TokenBudget, true
	}
	return WallClockBudget, true
}

// removeHint is how a limit is removed, for the refusals of ParseBudget.
const removeHint = `remove a limit with "off turns", "off tokens" or "off time"`

// ParseBudget reads a budget as a person writes it and as agentd prints it
// (docs/protocol.md §1.2.1): a number and a unit ("20
// turns", "1 turn", "20 turn(s)", "50k tokens", "1.2M tokens", "90
// minutes", "1 hour", "45s", "2h", "1 day", "1d"), or a time in several
// parts ("1h30m", "1 hour 30 minutes", "4m05s"). Numbers may have decimals
// ("1.5h", "50.0k tokens") and commas between groups of three digits
// ("50,000 tokens"); k and M multiply a count by a thousand and a million;
// a day is 24 hours. Case and spaces between parts do not matter. The
// limit obeys NormalizeBudget: a count is rounded and within 1 …
// MaxCountBudget, a time is in milliseconds within 1 second … 24 hours; a
// value outside is refused naming that range. Errors are *Error with code
// goal.budget_invalid, quoting text.
func ParseBudget(text string) (BudgetKind, int64, error) {
	text = strings.TrimSpace(text)
	parts, ok := splitBudget(text)
	if !ok {
		return "", 0, errorf(CodeBudgetInvalid, fmt.Sprintf("%q is not a budget: write a number and a unit, like \"20 turns\", \"50k tokens\", \"90 minutes\", \"2h\" or \"1h30m\"; %s", text, removeHint))
	}
	value, unit := parts[0].value, parts[0].unit
	if len(parts) > 1 {
		value, unit = 0, "milliseconds"
		for _, p := range parts {
			f, isTime := unitMs[p.unit]
			if !isTime {
				return "", 0, errorf(CodeBudgetInvalid, fmt.Sprintf("%q is not one budget: only a time may have several parts (\"1h30m\"); set turns and tokens one at a time", text))
			}
			value += p.value * f
		}
	}
	kind, limit, err := NormalizeBudget(value, unit)
	if err == nil {
		return kind, limit, nil
	}
	allowed := fmt.Sprintf("a turn or token budget is a whole number from 1 to %d", MaxCountBudget)
	if _, isTime := unitMs[unit]; isTime {
		allowed = "a time budget is from 1 second to 24 hours (1 day)"
	}
	if value <= 0 {
		allowed += "; " + removeHint
	}
	return "", 0, errorf(CodeBudgetInvalid, fmt.Sprintf("%q is out of range: %s", text, allowed))
}

// budgetPart is one number and its unit (a unit of NormalizeBudget).
type budgetPart struct {
	value float64
	unit  string
}

// splitBudget cuts text into number-unit parts; ok is false when it is
// not a sequence of them.
func splitBudget(text string) (parts []budgetPart, ok bool) {
	s := strings.ReplaceAll(strings.ToLower(text), "(s)", "s")
	i := 0
	skipSpaces := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	word := func() string {
		start := i
		for i < len(s) && s[i] >= 'a' && s[i] <= 'z' {
			i++
		}
		return s[start:i]
	}
	for skipSpaces(); i < len(s); skipSpaces() {
		start := i
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || s[i] == ',') {
			i++
		}
		number, grouped := s[start:i], true // digits, a decimal point, thousands separators
		if strings.Contains(number, ",") {
			number, grouped = ungroup(number)
		}
		value, err := strconv.ParseFloat(number, 64)
		if number == "" || err != nil || !grouped {
			return nil, false
		}
		skipSpaces()
		unit := word()
		if mult, isMult := countMultipliers[unit]; isMult {
			// A multiplier when a count unit follows ("50k tokens"); else
			// "m" is minutes ("30m").
			save := i
			skipSpaces()
			if next := word(); budgetUnitWords[next] == "turns" || budgetUnitWords[next] == "tokens" {
				value, unit = value*mult, next
			} else {
				i = save
			}
		}
		if unit == "d" || unit == "day" || unit == "days" {
			value, unit = value*24, "hours"
		}
		canonical, known := budgetUnitWords[unit]
		if !known {
			return nil, false
		}
		parts = append(parts, budgetPart{value: value, unit: canonical})
	}
	return parts, len(parts) > 0
}

// ungroup removes the thousands separators of "50,000" or "1,250.5"; ok is
// false when the commas do not separate groups of three digits ("1,5" is
// not one and a half: it is refused rather than read as 15).
func ungroup(number string) (string, bool) {
	whole, frac, hasFrac := strings.Cut(number, ".")
	groups := strings.Split(whole, ",")
	if len(groups[0]) == 0 || len(groups[0]) > 3 {
		return "", false
	}
	for _, g := range groups[1:] {
		if len(g) != 3 {
			return "", false
		}
	}
	out := strings.Join(groups, "")
	if hasFrac {
		out += "." + frac
	}
	return out, true
}
