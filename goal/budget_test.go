package goal

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNormalizeBudget(t *testing.T) {
	tests := []struct {
		name      string
		value     float64
		unit      string
		wantKind  BudgetKind
		wantLimit int64
		wantCode  string
	}{
		{"tokens below one round up to one", 0.4, "tokens", TokenBudget, 1, ""},
		{"half turns round away from zero", 2.5, "turns", TurnBudget, 3, ""},
		{"whole turns", 5, "turns", TurnBudget, 5, ""},
		{"tokens rounded", 1234.4, "tokens", TokenBudget, 1234, ""},
		{"fractional hours", 1.5, "hours", WallClockBudget, 5_400_000, ""},
		{"minutes", 90, "minutes", WallClockBudget, 5_400_000, ""},
		{"one second is the floor", 1, "seconds", WallClockBudget, 1000, ""},
		{"24 hours is the ceiling", 24, "hours", WallClockBudget, 86_400_000, ""},
		{"milliseconds rounded", 1500.6, "milliseconds", WallClockBudget, 1501, ""},
		{"500 ms is too short", 500, "milliseconds", "", 0, CodeBudgetInvalid},
		{"25 hours is too long", 25, "hours", "", 0, CodeBudgetInvalid},
		{"zero", 0, "turns", "", 0, CodeBudgetInvalid},
		{"negative", -3, "tokens", "", 0, CodeBudgetInvalid},
		{"unknown unit", 3, "days", "", 0, CodeBudgetInvalid},
		{"absurd count", 1e30, "tokens", "", 0, CodeBudgetInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, limit, err := NormalizeBudget(tt.value, tt.unit)
			if got := codeOf(err); got != tt.wantCode {
				t.Fatalf("error code: got %q, want %q (%v)", got, tt.wantCode, err)
			}
			if kind != tt.wantKind || limit != tt.wantLimit {
				t.Errorf("got %s %d, want %s %d", kind, limit, tt.wantKind, tt.wantLimit)
			}
		})
	}
}

func TestNormalizeBudgetMessages(t *testing.T) {
	_, _, err := NormalizeBudget(500, "milliseconds")
	if want := "500 milliseconds is not a reasonable budget: a time budget must be between 1 second and 24 hours"; err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
}

func TestFormatBudget(t *testing.T) {
	tests := []struct {
		kind  BudgetKind
		limit int64
		want  string
	}{
		{TurnBudget, 1, "1 turn"},
		{TurnBudget, 5, "5 turns"},
		{TokenBudget, 1, "1 token"},
		{TokenBudget, 50000, "50000 tokens"},
		{WallClockBudget, 3_600_000, "1 hour"},
		{WallClockBudget, 7_200_000, "2 hours"},
		{WallClockBudget, 5_400_000, "90 minutes"},
		{WallClockBudget, 60_000, "1 minute"},
		{WallClockBudget, 45_000, "45 seconds"},
		{WallClockBudget, 1000, "1 second"},
		{WallClockBudget, 1500, "1500 milliseconds"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := FormatBudget(tt.kind, tt.limit); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestBudgetUpdateDecoding(t *testing.T) {
	var u BudgetUpdate
	mustNoErr(t, json.Unmarshal([]byte(`{"turns": 3, "tokens": null}`), &u))
	want := BudgetUpdate{Turns: LimitUpdate{Set: true, Value: f64(3)}, Tokens: LimitUpdate{Set: true}}
	if diff := cmp.Diff(want, u); diff != "" {
		t.Errorf("BudgetUpdate (-want +got):\n%s", diff)
	}
	if err := json.Unmarshal([]byte(`{"turns": "3"}`), &u); err == nil {
		t.Errorf("a string limit was accepted")
	}
}

func TestUserSetBudget(t *testing.T) {
	tests := []struct {
		name     string
		update   BudgetUpdate
		want     Limits
		wantCode string
	}{
		{"set all", BudgetUpdate{
			Turns:       LimitUpdate{Set: true, Value: f64(10)},
			Tokens:      LimitUpdate{Set: true, Value: f64(5000)},
			WallClockMs: LimitUpdate{Set: true, Value: f64(60_000)},
		}, Limits{TurnBudget: i64(10), TokenBudget: i64(5000), WallClockBudgetMs: i64(60_000)}, ""},
		{"absent keeps, null removes", BudgetUpdate{Turns: LimitUpdate{Set: true}},
			Limits{TokenBudget: i64(100)}, ""},
		{"fractional turns refused", BudgetUpdate{Turns: LimitUpdate{Set: true, Value: f64(2.5)}}, Limits{}, CodeBudgetInvalid},
		{"zero tokens refused", BudgetUpdate{Tokens: LimitUpdate{Set: true, Value: f64(0)}}, Limits{}, CodeBudgetInvalid},
		{"wall clock below 1 s refused", BudgetUpdate{WallClockMs: LimitUpdate{Set: true, Value: f64(999)}}, Limits{}, CodeBudgetInvalid},
		{"wall clock above 24 h refused", BudgetUpdate{WallClockMs: LimitUpdate{Set: true, Value: f64(86_400_001)}}, Limits{}, CodeBudgetInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			s := withGoal(t, c)
			s.Goal.Limits = Limits{TurnBudget: i64(4), TokenBudget: i64(100)}
			before := s.Goal.Limits
			_, err := s.SetBudget(tt.update, c.now())
			if got := codeOf(err); got != tt.wantCode {
				t.Fatalf("error code: got %q, want %q", got, tt.wantCode)
			}
			want := tt.want
			if tt.wantCode != "" {
				want = before
			}
			if diff := cmp.Diff(want, s.Goal.Limits); diff != "" {
				t.Errorf("limits (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBudgetReport(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	s.Goal.Limits = Limits{TurnBudget: i64(3), TokenBudget: i64(1000)}
	s.Goal.TurnsUsed = 3
	s.Goal.TokensUsed = 400
	got := s.Snapshot(c.advance(time.Minute)).Budget
	want := BudgetReport{
		TurnBudget:        i64(3),
		TokenBudget:       i64(1000),
		RemainingTurns:    i64(0),
		RemainingTokens:   i64(600),
		TurnBudgetReached: true,
		OverBudget:        true,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("budget (-want +got):\n%s", diff)
	}
}

func TestBudgetReason(t *testing.T) {
	l := Limits{TurnBudget: i64(5), TokenBudget: i64(1000), WallClockBudgetMs: i64(3_600_000)}
	got := budgetReason(l, reached{turn: true, token: true, wallClock: true})
	want := "budget reached: turn budget of 5 turns, token budget of 1000 tokens, wall-clock budget of 1 hour"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestBudgetUpdateMessages: a count beyond MaxCountBudget is refused naming
// the range, and a number beyond float64 is a type error of its field.
func TestBudgetUpdateMessages(t *testing.T) {
	_, err := mergeBudget(BudgetUpdate{Tokens: LimitUpdate{Set: true, Value: f64(9223372036854775807)}}, Limits{})
	if codeOf(err) != CodeBudgetInvalid || !strings.Contains(err.Error(), "tokens must be a whole number from 1 to 1125899906842624 (2^50)") {
		t.Errorf("tokens 2^63-1: %v", err)
	}
	var u BudgetUpdate
	err = json.Unmarshal([]byte(`{"tokens":1e400}`), &u)
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) || typeErr.Field != "tokens" || !strings.Contains(typeErr.Value, "out of range (1e400)") {
		t.Errorf("tokens 1e400: %#v", err)
	}
	err = json.Unmarshal([]byte(`{"turns":"x"}`), &u)
	if !errors.As(err, &typeErr) || typeErr.Field != "turns" || typeErr.Value != "string" {
		t.Errorf("turns \"x\": %#v", err)
	}
}
