package goal

import (
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/commands/protocol"
)

// waitFor is a wait of d from c's now, as ParseWait makes it.
func waitFor(t *testing.T, c *clock, d string, mode string) WaitParams {
	t.Helper()
	p, err := ParseWait(WaitConditions{For: d}, mode, c.now().Wall)
	mustNoErr(t, err)
	return p
}

// TestParseWaitRefusals: a wait with no condition, a time in the past or
// too far ahead, both until and for, a bad mode or too long a note is
// args.invalid, naming the problem (docs/runtime.md §2.13).
func TestParseWaitRefusals(t *testing.T) {
	now := newClock().now().Wall
	for _, tc := range []struct {
		name string
		c    WaitConditions
		mode string
		want string
	}{
		{"no condition", WaitConditions{Note: "CI"}, "", "no wake condition"},
		{"past", WaitConditions{Until: "2026-02-01T00:00:00Z"}, "", "in the past"},
		{"too far", WaitConditions{For: "200h"}, "", "more than"},
		{"both", WaitConditions{Until: "14:00", For: "1h"}, "", "not both"},
		{"not a duration", WaitConditions{For: "soon"}, "", "not a duration"},
		{"too short", WaitConditions{For: "10ms"}, "", "shorter than"},
		{"not a time", WaitConditions{Until: "teatime"}, "", "not a time"},
		{"bad mode", WaitConditions{For: "1h"}, "sometimes", "counts or stops"},
		{"long note", WaitConditions{For: "1h", Note: strings.Repeat("x", MaxWaitNoteChar+1)}, "", "note"},
		{"many paths", WaitConditions{Paths: make([]string, MaxWaitPaths+1)}, "", "paths"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseWait(tc.c, tc.mode, now)
			if codeOf(err) != CodeArgsInvalid || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseWait = %v, want args.invalid with %q", err, tc.want)
			}
		})
	}
	// A time of day is its next occurrence: 08:00 at 09:00 is tomorrow's.
	p, err := ParseWait(WaitConditions{Until: "08:00"}, "", now)
	mustNoErr(t, err)
	if want := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC); !p.Until.Equal(want) || p.WallClock != WallClockCounts {
		t.Errorf("until 08:00 = %v (%s), want %v counts", p.Until, p.WallClock, want)
	}
}

// TestWaitAndWake: a wait moves the goal to waiting with its wait in the
// snapshot; a wake for another wait does nothing; the wake makes it
// active with a reason naming what woke it, which the next goal turn's
// first step carries once.
func TestWaitAndWake(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	cs, err := s.Wait(waitFor(t, c, "10m", ""), User, c.advance(time.Minute))
	mustNoErr(t, err)
	if len(cs) != 1 || cs[0].Kind != ChangeWait || s.Goal.Status != Waiting {
		t.Fatalf("changes %v, status %s", kinds(cs), s.Goal.Status)
	}
	snap := s.Snapshot(c.now())
	if w := snap.Wait; w == nil || w.By != User || w.Until == nil || !w.Since.Equal(c.now().Wall) {
		t.Fatalf("snapshot wait %+v", snap.Wait)
	}
	since := snap.Wait.Since
	if cs := s.Wake(s.Goal.ID, since.Add(-time.Second), "x changed", c.now()); cs != nil {
		t.Errorf("a wake armed for another wait changed %v", kinds(cs))
	}
	if due := s.WaitDue(c.advance(8 * time.Minute).Wall); due != "" {
		t.Errorf("due before its time: %q", due)
	}
	due := s.WaitDue(c.advance(time.Minute).Wall)
	cs = s.Wake(s.Goal.ID, since, due, c.now())
	if len(cs) != 1 || cs[0].Kind != ChangeWake || cs[0].Status != Active || cs[0].Actor != Runtime || !strings.Contains(cs[0].Reason, "arrived") {
		t.Fatalf("wake changes %+v", cs)
	}
	if s.Snapshot(c.now()).Wait != nil {
		t.Errorf("an active goal shows a wait")
	}
	beginTurn(t, s, "t1", c.now())
	sb, _ := step(t, s, "t1", 10, FinishStop, c.now())
	if !strings.Contains(sb.Goal.Woke, "arrived") {
		t.Errorf("the first step after the wake does not carry it: %q", sb.Goal.Woke)
	}
	if s.Goal.Woke != "" {
		t.Errorf("the wake is still to be told after the step told it")
	}
}

// TestWaitWallClock: a wait that counts runs the wall clock and a budget
// that runs out blocks the waiting goal; a person's wait that stops it
// spends no time.
func TestWaitWallClock(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	_, err := s.SetBudget(BudgetUpdate{WallClockMs: protocol.Limit(60_000)}, c.now())
	mustNoErr(t, err)
	_, err = s.Wait(waitFor(t, c, "1h", ""), Model, c.now())
	mustNoErr(t, err)
	left, ok := s.WallClockLeft(c.advance(20 * time.Second))
	if !ok || left != 40*time.Second {
		t.Fatalf("WallClockLeft while waiting = %v %v, want 40s", left, ok)
	}
	cs := s.CheckWallClock(c.advance(40 * time.Second))
	if s.Goal.Status != Blocked || s.Goal.Wait != nil || cs[len(cs)-1].Kind != ChangeBlock {
		t.Fatalf("a waiting goal out of time: %s %v", s.Goal.Status, kinds(cs))
	}

	s = withGoal(t, c)
	_, err = s.Wait(waitFor(t, c, "1h", "stops"), User, c.now())
	mustNoErr(t, err)
	before := s.Snapshot(c.now()).WallClockMs
	if after := s.Snapshot(c.advance(30 * time.Minute)).WallClockMs; after != before {
		t.Errorf("a wait that stops the clock spent %d ms", after-before)
	}
	if _, ok := s.WallClockLeft(c.now()); ok {
		t.Errorf("a stopped clock has a timer")
	}
}

// TestWaitRefusals: what the model may not do with a wait, and what no
// one may (docs/runtime.md §2.13).
func TestWaitRefusals(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	if _, err := s.Wait(waitFor(t, c, "1h", "stops"), Model, c.now()); codeOf(err) != CodeArgsInvalid {
		t.Errorf("a model's wait that stops the clock: %v", err)
	}
	check := waitFor(t, c, "1h", "")
	check.CheckPasses = true
	if _, err := s.Wait(check, User, c.now()); codeOf(err) != CodeNoCheck {
		t.Errorf("checkPasses without a check: %v", err)
	}
	_, err := s.SetCheck(ptr("go test ./..."), alice, c.now())
	mustNoErr(t, err)
	if _, err := s.Wait(check, Model, c.now()); codeOf(err) != CodeCheckUnapproved {
		t.Errorf("checkPasses with a check not approved here: %v", err)
	}
	check.CheckApproved = true
	_, err = s.Wait(check, Model, c.now())
	mustNoErr(t, err)

	// The person's wait: the model can neither replace nor end it.
	_, err = s.Wait(waitFor(t, c, "2h", ""), User, c.now())
	mustNoErr(t, err)
	if _, err := s.Wait(waitFor(t, c, "5m", ""), Model, c.now()); codeOf(err) != CodePersonSet {
		t.Errorf("the model replaced the person's wait: %v", err)
	}
	if _, err := s.resume(Model, "", c.now()); codeOf(err) != CodePersonSet {
		t.Errorf("the model ended the person's wait: %v", err)
	}
	cs, err := s.Resume(c.now())
	mustNoErr(t, err)
	if s.Goal.Status != Active || cs[0].Reason != "resumed by the user" {
		t.Errorf("the person's resume: %s %+v", s.Goal.Status, cs)
	}
	_, err = s.Pause("", c.now())
	mustNoErr(t, err)
	if _, err := s.Wait(waitFor(t, c, "5m", ""), User, c.now()); codeOf(err) != CodeStatusInvalid {
		t.Errorf("a paused goal waited: %v", err)
	}
}

// TestUpdateGoalWaiting: the model's UpdateGoal waiting stops the turn;
// the same call again (a model repeating itself, or calling twice in
// parallel) changes nothing; a wait without status waiting, or status
// waiting without a wait, is refused; the step end stops the turn, and
// the turn's end has no continuation.
func TestUpdateGoalWaiting(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	beginTurn(t, s, "t1", c.now())
	step(t, s, "t1", 10, FinishToolCalls, c.now())
	s.BeginStep("t1", c.now())
	for _, in := range []string{`{"status":"waiting"}`, `{"status":"blocked","wait":{"for":"1h"}}`} {
		res, _ := s.callTool(t, modelCall{Name: UpdateGoalTool, Input: raw(in), TurnID: "t1"}, c.now())
		if !res.IsError || res.ErrorCode != CodeArgsInvalid {
			t.Errorf("%s: %+v", in, res)
		}
	}
	p := waitFor(t, c, "1h", "")
	call := func() (ToolResult, []Change) {
		gc, err := NewCall(UpdateGoalTool, raw(`{"status":"waiting","wait":{"for":"1h"}}`), "")
		mustNoErr(t, err)
		return s.CallTool(ToolCall{Call: gc, TurnID: "t1", Wait: &p}, c.now())
	}
	res, cs := call()
	if res.IsError || !res.StopTurn || !res.StopBatch || len(cs) != 1 || cs[0].Actor != Model {
		t.Fatalf("first wait: %+v %v", res, kinds(cs))
	}
	res, cs = call()
	if res.IsError || !res.StopTurn || cs != nil || !strings.Contains(res.Output, "already waits") {
		t.Errorf("the same wait again: %+v %v", res, kinds(cs))
	}
	end, err := s.EndStep("t1", 5, FinishToolCalls, c.now())
	mustNoErr(t, err)
	if !end.StopTurn {
		t.Errorf("the step after the wait does not stop the turn")
	}
	if te := endTurn(t, s, "t1", OutcomeCompleted, c.now()); te.Continuation != NoContinuation {
		t.Errorf("a waiting goal's turn ended with a continuation %q", te.Continuation)
	}
}

// TestWaitUndone: undoing the resume of a waiting goal makes it wait
// again, with its wait (docs/runtime.md §6), so its conditions are armed
// again and nothing reads a waiting goal without one.
func TestWaitUndone(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	_, err := s.Wait(waitFor(t, c, "1h", "stops"), User, c.now())
	mustNoErr(t, err)
	waiting := s.Snapshot(c.now())
	_, err = s.Resume(c.advance(time.Minute))
	mustNoErr(t, err)
	_, err = s.Restore(waiting, "undo", c.now())
	mustNoErr(t, err)
	w, _, _, ok := s.WaitingFor()
	if !ok || s.Goal.Status != Waiting || w.WallClock != WallClockStops || !w.Since.Equal(waiting.Wait.Since) {
		t.Fatalf("after the undo: %s %+v", s.Goal.Status, w)
	}
	if _, err := s.resume(Model, "", c.now()); codeOf(err) != CodePersonSet {
		t.Errorf("the model ended the restored wait of the person: %v", err)
	}
	before := s.Snapshot(c.now()).WallClockMs
	if after := s.Snapshot(c.advance(time.Hour)).WallClockMs; after != before {
		t.Errorf("the restored wait stops the clock, yet %d ms ran", after-before)
	}
}

// TestModelCannotReplaceThePersonsWait: the model's CreateGoal, with
// replace or without, does not end a wait the person asked for by
// putting a new goal in its place (goal.person_set, docs/runtime.md
// §2.11, §2.13); a wait of the model's own it may.
func TestModelCannotReplaceThePersonsWait(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	id := s.Goal.ID
	_, err := s.Wait(waitFor(t, c, "2h", ""), User, c.now())
	mustNoErr(t, err)
	for _, in := range []string{`{"objective":"something else","replace":true}`, `{"objective":"something else"}`} {
		res, cs := s.callTool(t, modelCall{Name: CreateGoalTool, Input: raw(in)}, c.now())
		if !res.IsError || cs != nil || s.Goal.ID != id || s.Goal.Status != Waiting {
			t.Errorf("%s over the person's wait: %+v %v; the goal is %s", in, res, kinds(cs), s.Goal.Status)
		}
		if !strings.Contains(res.Output, "a wait the user set") {
			t.Errorf("%s: the refusal does not say why: %q", in, res.Output)
		}
	}
	_, err = s.Resume(c.now())
	mustNoErr(t, err)
	_, err = s.Wait(waitFor(t, c, "2h", ""), Model, c.now())
	mustNoErr(t, err)
	res, _ := s.callTool(t, modelCall{Name: CreateGoalTool, Input: raw(`{"objective":"something else","replace":true}`)}, c.now())
	if res.IsError || s.Goal.ID == id {
		t.Errorf("the model could not replace a goal in its own wait: %+v", res)
	}
}
