package goal

import (
	"strings"
	"testing"
)

// TestParseBudget: what `agentd goal status` prints and what people write
// (docs/protocol.md §1.2.1).
func TestParseBudget(t *testing.T) {
	const hour, minute = int64(3_600_000), int64(60_000)
	tests := []struct {
		text      string
		wantKind  BudgetKind
		wantLimit int64
	}{
		{"1 hour", WallClockBudget, hour},
		{"2 hours", WallClockBudget, 2 * hour},
		{"90 minutes", WallClockBudget, 90 * minute},
		{"1 minute", WallClockBudget, minute},
		{"30m", WallClockBudget, 30 * minute},
		{"2h", WallClockBudget, 2 * hour},
		{"1.5h", WallClockBudget, 90 * minute},
		{"1h30m", WallClockBudget, 90 * minute},
		{"1h 30m", WallClockBudget, 90 * minute},
		{"1 hour 30 minutes", WallClockBudget, 90 * minute},
		{"1h00m", WallClockBudget, hour},    // FormatElapsed of an hour
		{"4m05s", WallClockBudget, 245_000}, // FormatElapsed below an hour
		{"45s", WallClockBudget, 45_000},
		{"45 sec", WallClockBudget, 45_000},
		{"1500 ms", WallClockBudget, 1500},
		{"2 HOURS", WallClockBudget, 2 * hour},
		{"20 turns", TurnBudget, 20},
		{"20 turn(s)", TurnBudget, 20},
		{"1 turn", TurnBudget, 1},
		{"20turns", TurnBudget, 20},
		{"2.5 turns", TurnBudget, 3},
		{"50k tokens", TokenBudget, 50_000},
		{"50.0k tokens", TokenBudget, 50_000}, // FormatTokens
		{"999.9k tokens", TokenBudget, 999_900},
		{"1.2M tokens", TokenBudget, 1_200_000},
		{"50 K tokens", TokenBudget, 50_000},
		{"50,000 tokens", TokenBudget, 50_000},
		{"1,250,000 tokens", TokenBudget, 1_250_000},
		{"1 token", TokenBudget, 1},
		{"12 tok", TokenBudget, 12},
		{"  20   turns  ", TurnBudget, 20},
		{"1 day", WallClockBudget, 24 * hour}, // the largest time budget
		{"1d", WallClockBudget, 24 * hour},
		{"1 Days", WallClockBudget, 24 * hour},
		{"0.5d", WallClockBudget, 12 * hour},
		{"24 hours", WallClockBudget, 24 * hour},
		{"23h60m", WallClockBudget, 24 * hour},
		{"1 second", WallClockBudget, 1000}, // the smallest
		{"0.3 turns", TurnBudget, 1},
		{"1125899906842624 tokens", TokenBudget, MaxCountBudget},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			kind, limit, err := ParseBudget(tt.text)
			if err != nil || kind != tt.wantKind || limit != tt.wantLimit {
				t.Fatalf("ParseBudget(%q) = %s %d, %v; want %s %d", tt.text, kind, limit, err, tt.wantKind, tt.wantLimit)
			}
		})
	}
}

// TestParseBudgetRefusals: each refusal is goal.budget_invalid and says
// what is wrong.
func TestParseBudgetRefusals(t *testing.T) {
	tests := []struct{ text, want string }{
		{"", "is not a budget: write a number and a unit"},
		{"20", `"20" is not a budget: write a number and a unit`},
		{"50k", `"50k" is not a budget`},
		{"turns", `"turns" is not a budget`},
		{"20 dayz", `"20 dayz" is not a budget`},
		{"unlimited", `"unlimited" is not a budget: write a number and a unit, like "20 turns", "50k tokens", "90 minutes", "2h" or "1h30m"; remove a limit with "off turns", "off tokens" or "off time"`},
		{"-5 turns", `"-5 turns" is not a budget`},
		{"1,5 h", `"1,5 h" is not a budget`}, // not 15 hours
		{"1.2.3 h", `"1.2.3 h" is not a budget`},
		{"0 turns", `"0 turns" is out of range: a turn or token budget is a whole number from 1 to 1125899906842624; remove a limit with "off turns", "off tokens" or "off time"`},
		{"0 s", `"0 s" is out of range: a time budget is from 1 second to 24 hours (1 day); remove a limit with "off turns"`},
		{"2000000000000000 turns", `"2000000000000000 turns" is out of range: a turn or token budget is a whole number from 1 to 1125899906842624`},
		{"25 hours", `"25 hours" is out of range: a time budget is from 1 second to 24 hours (1 day)`},
		{"2 days", `"2 days" is out of range: a time budget is from 1 second to 24 hours (1 day)`},
		{"1d1s", `"1d1s" is out of range: a time budget is from 1 second to 24 hours (1 day)`},
		{"500ms", `"500ms" is out of range: a time budget is from 1 second to 24 hours (1 day)`},
		{"23h90m", `"23h90m" is out of range: a time budget is from 1 second to 24 hours (1 day)`},
		{"1h 20 turns", `"1h 20 turns" is not one budget: only a time may have several parts`},
		{"20 turns 5 tokens", `is not one budget`},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			_, _, err := ParseBudget(tt.text)
			if codeOf(err) != CodeBudgetInvalid || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParseBudget(%q) = %v (code %q), want goal.budget_invalid saying %q", tt.text, err, codeOf(err), tt.want)
			}
		})
	}
}

// TestParseBudgetReadsFormatBudget: every budget FormatBudget writes (what
// notifications and tool outputs say) reads back as itself.
func TestParseBudgetReadsFormatBudget(t *testing.T) {
	for _, b := range []struct {
		kind  BudgetKind
		limit int64
	}{
		{TurnBudget, 1}, {TurnBudget, 20}, {TokenBudget, 1}, {TokenBudget, 50_000},
		{WallClockBudget, 3_600_000}, {WallClockBudget, 5_400_000}, {WallClockBudget, 45_000}, {WallClockBudget, 1500},
	} {
		text := FormatBudget(b.kind, b.limit)
		if kind, limit, err := ParseBudget(text); err != nil || kind != b.kind || limit != b.limit {
			t.Errorf("ParseBudget(%q) = %s %d, %v; want %s %d", text, kind, limit, err, b.kind, b.limit)
		}
	}
}

func TestBudgetKindOf(t *testing.T) {
	for word, want := range map[string]BudgetKind{
		"turns": TurnBudget, "turn": TurnBudget, "Turn(s)": TurnBudget, "tokens": TokenBudget, "tok": TokenBudget,
		"time": WallClockBudget, "hours": WallClockBudget, "h": WallClockBudget, "minutes": WallClockBudget, "ms": WallClockBudget,
	} {
		if got, ok := BudgetKindOf(word); !ok || got != want {
			t.Errorf("BudgetKindOf(%q) = %s, %v; want %s", word, got, ok, want)
		}
	}
	for _, word := range []string{"", "days", "k", "turnz"} {
		if got, ok := BudgetKindOf(word); ok {
			t.Errorf("BudgetKindOf(%q) = %s, want not ok", word, got)
		}
	}
}
