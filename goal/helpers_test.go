package goal

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// clock is a fake clock: tests move it by hand. advance moves both the
// wall and the monotonic clock, as time passing does; stepWall moves only
// the wall clock, as a change of the system time does.
type clock struct {
	wall time.Time
	mono time.Duration
	id   string
}

func newClock() *clock {
	return &clock{wall: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC), mono: time.Hour, id: "test-process"}
}

func (c *clock) now() Instant { return Instant{Wall: c.wall, Mono: c.mono, Clock: c.id} }

func (c *clock) advance(d time.Duration) Instant {
	c.wall = c.wall.Add(d)
	c.mono += d
	return c.now()
}

func (c *clock) stepWall(d time.Duration) Instant {
	c.wall = c.wall.Add(d)
	return c.now()
}

// restart makes c the clock of a new process that starts after down: the
// wall clock moves on, the monotonic clock starts again under a new id.
func (c *clock) restart(down time.Duration) Instant {
	c.wall = c.wall.Add(down)
	c.mono = 0
	c.id += "'"
	return c.now()
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
func beginTurn(t testing.TB, s *State, id string, now Instant) TurnBegin {
	t.Helper()
	b, err := s.BeginTurn(id, OriginUser, "", now)
	mustNoErr(t, err)
	return b
}

// step runs one step of a turn: begin, then end with tokens and finish.
func step(t testing.TB, s *State, id string, tokens int64, finish FinishReason, now Instant) (StepBegin, StepEnd) {
	t.Helper()
	b, err := s.BeginStep(id, now)
	mustNoErr(t, err)
	e, err := s.EndStep(id, tokens, finish, now)
	mustNoErr(t, err)
	return b, e
}

func endTurn(t testing.TB, s *State, id string, o Outcome, now Instant) TurnEnd {
	t.Helper()
	e, err := s.EndTurn(id, o, "", "", 0, now)
	mustNoErr(t, err)
	return e
}

// modelCall is one goal tool call as a model makes it.
type modelCall struct {
	Name     string
	Input    json.RawMessage
	Agent    string
	TurnID   string
	TaskFile *TaskFileInfo
}

// callTool runs c as the commands layer does: NewCall decodes it once,
// CallTool runs it against s.
func (s *State) callTool(tb testing.TB, c modelCall, now Instant) (ToolResult, []Change) {
	tb.Helper()
	call, err := NewCall(c.Name, c.Input, c.Agent)
	if err != nil {
		tb.Fatalf("NewCall(%s): %v", c.Name, err)
	}
	return s.CallTool(ToolCall{Call: call, TurnID: c.TurnID, TaskFile: c.TaskFile}, now)
}

// alice is the person who sets checks in the tests.
var alice = CheckSetter{User: "alice", Host: "laptop"}
