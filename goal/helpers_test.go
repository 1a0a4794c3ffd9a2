package goal

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// clock is a fake clock: tests move it by hand.
type clock struct{ t time.Time }

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)} }

func (c *clock) now() time.Time { return c.t }

func (c *clock) advance(d time.Duration) time.Time {
	c.t = c.t.Add(d)
	return c.t
}

// fixedIDs makes goal ids "goal-1", "goal-2", ... for the test.
func fixedIDs(t testing.TB) {
	t.Helper()
	n := 0
	old := newID
	newID = func() string { n++; return fmt.Sprintf("goal-%d", n) }
	t.Cleanup(func() { newID = old })
}

func i64(v int64) *int64     { return &v }
func f64(v float64) *float64 { return &v }

// withGoal returns a state with an active goal created by the user at c.
func withGoal(t testing.TB, c *clock) *State {
	t.Helper()
	fixedIDs(t)
	s := &State{}
	if _, err := s.Create(CreateParams{Objective: "ship it"}, c.now()); err != nil {
		t.Fatalf("Create: %v", err)
	}
	return s
}

func mustNoErr(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

func codeOf(err error) string {
	if e, ok := err.(interface{ ErrorCode() string }); ok {
		return e.ErrorCode()
	}
	if err != nil {
		return "no code: " + err.Error()
	}
	return ""
}

// kinds lists the kinds of changes, for compact comparisons.
func kinds(cs []Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s/%s/%s", c.Kind, c.Actor, c.Status))
	}
	return out
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// beginTurn begins a main-agent user turn and fails the test on error.
func beginTurn(t testing.TB, s *State, id string, now time.Time) TurnBegin {
	t.Helper()
	b, err := s.BeginTurn(id, OriginUser, "", now)
	mustNoErr(t, err)
	return b
}

// step runs one step of a turn: begin, then end with tokens and finish.
func step(t testing.TB, s *State, id string, tokens int64, finish FinishReason, now time.Time) (StepBegin, StepEnd) {
	t.Helper()
	b, err := s.BeginStep(id, now)
	mustNoErr(t, err)
	e, err := s.EndStep(id, tokens, finish, now)
	mustNoErr(t, err)
	return b, e
}

func endTurn(t testing.TB, s *State, id string, o Outcome, now time.Time) TurnEnd {
	t.Helper()
	e, err := s.EndTurn(id, o, "", "", now)
	mustNoErr(t, err)
	return e
}
