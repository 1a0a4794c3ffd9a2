package goal

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRestoreCreate: undoing a create clears the goal; the model is told
// as after a cancel.
func TestRestoreCreate(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	cs, err := s.Restore(nil, "undo of goal.create", c.advance(time.Minute))
	mustNoErr(t, err)
	want := []Change{{Kind: ChangeUndo, Reason: "undo of goal.create", Actor: User}}
	if diff := cmp.Diff(want, cs, ignoreGoal); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if s.Goal != nil || !s.CancelNoticePending {
		t.Errorf("after undoing the create: goal %+v, cancel notice %v; want none, pending", s.Goal, s.CancelNoticePending)
	}
	if cs[0].Goal == nil || cs[0].Goal.GoalID != "goal-1" || cs[0].Goal.WallClockMs != 60_000 {
		t.Errorf("the change reports the cleared goal as it ended: got %+v", cs[0].Goal)
	}
}

// TestRestoreCancel: undoing a cancel brings the goal back as it was when
// it was cleared, running again; the cancel notice is dropped.
func TestRestoreCancel(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	_, err := s.SetBudget(BudgetUpdate{Turns: LimitUpdate{Set: true, Value: f64(5)}}, c.now())
	mustNoErr(t, err)
	beginTurn(t, s, "t1", c.now())
	step(t, s, "t1", 10, FinishStop, c.now())
	endTurn(t, s, "t1", OutcomeCompleted, c.advance(2*time.Minute))
	before := s.Snapshot(c.now())
	_, err = s.Cancel(c.now())
	mustNoErr(t, err)

	cs, err := s.Restore(before, "undo of goal.cancel", c.advance(time.Hour))
	mustNoErr(t, err)
	if len(cs) != 1 || cs[0].Kind != ChangeUndo || cs[0].Status != Active {
		t.Fatalf("changes: %+v", cs)
	}
	g := s.Goal
	if g == nil || g.ID != "goal-1" || g.Status != Active || g.TurnsUsed != 1 || *g.Limits.TurnBudget != 5 || s.CancelNoticePending {
		t.Fatalf("goal after undo: %+v, cancel notice %v", g, s.CancelNoticePending)
	}
	// The hour the goal was gone is not counted; its clock runs again.
	if ms := s.Snapshot(c.now()).WallClockMs; ms != 2*60_000 {
		t.Errorf("wall clock right after the undo: %d ms, want %d", ms, 2*60_000)
	}
	if ms := s.Snapshot(c.advance(time.Minute)).WallClockMs; ms != 3*60_000 {
		t.Errorf("wall clock a minute later: %d ms, want %d", ms, 3*60_000)
	}
	if g.LastActor != User {
		t.Errorf("last actor %q, want user", g.LastActor)
	}
}

// TestRestoreReplace: undoing a create that replaced a goal clears the new
// goal (a replace change, actor system) and brings back the old one.
// TestRestoreCancelKeepsTheCheck: a goal an undo brings back keeps the
// check a person gave it, not running (its run, if any, was killed with
// the cancel), so the model cannot complete it unverified.
func TestRestoreCancelKeepsTheCheck(t *testing.T) {
	c := newClock()
	s := withCheck(t, c, "make test")
	start, _, err := s.StartCheck(Model, "run-1", c.now())
	mustNoErr(t, err)
	s.CheckStarted(start, []byte(`{"pgid":77,"start":1}`))
	before := s.Snapshot(c.now())
	_, err = s.Cancel(c.now())
	mustNoErr(t, err)

	_, err = s.Restore(before, "undo of goal.cancel", c.now())
	mustNoErr(t, err)
	if chk := s.Goal.Check; chk == nil || chk.Command != "make test" || chk.Running || chk.Process != nil {
		t.Fatalf("check after undo: %+v", chk)
	}
	if !s.CompletionCheck(updateComplete(t, "")) {
		t.Error("the goal brought back completes without its check")
	}
}

// TestRestoreCheck: undoing a person's change of the check brings the
// command before it back (a cleared check returns, a set one goes), and is
// refused while the check runs.
func TestRestoreCheck(t *testing.T) {
	c := newClock()
	s := withCheck(t, c, "make test")
	withCmd := s.Snapshot(c.now())
	_, err := s.SetCheck(nil, alice, c.now())
	mustNoErr(t, err)
	cs, err := s.Restore(withCmd, "undo of goal.check", c.now())
	mustNoErr(t, err)
	if chk := s.Goal.Check; chk == nil || chk.Command != "make test" || len(cs) != 1 || cs[0].Kind != ChangeUndo {
		t.Fatalf("after undoing the removal: check %+v, changes %v", chk, kinds(cs))
	}

	other := "go test ./..."
	noCmd := withCmd
	noCmd.Check = nil
	_, err = s.SetCheck(&other, alice, c.now())
	mustNoErr(t, err)
	_, _, err = s.StartCheck(User, "run-1", c.now())
	mustNoErr(t, err)
	if _, err := s.Restore(noCmd, "undo of goal.check", c.now()); codeOf(err) != CodeCheckRunning {
		t.Fatalf("undo while the check runs: %v, want %s", err, CodeCheckRunning)
	}
	if s.Goal.Check.Command != other || !s.Goal.Check.Running {
		t.Fatalf("a refused undo changed the check: %+v", s.Goal.Check)
	}
}

func TestRestoreReplace(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	_, err := s.Pause("lunch", c.now())
	mustNoErr(t, err)
	before := s.Snapshot(c.now())
	_, err = s.Create(CreateParams{Objective: "another", Replace: true}, c.now())
	mustNoErr(t, err)

	cs, err := s.Restore(before, "undo of goal.create", c.now())
	mustNoErr(t, err)
	want := []Change{
		{Kind: ChangeReplace, Reason: reasonRestoredReplaced, Actor: System},
		{Kind: ChangeUndo, Status: Paused, Reason: "undo of goal.create", Actor: User},
	}
	if diff := cmp.Diff(want, cs, ignoreGoal); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if cs[0].Goal.GoalID != "goal-2" || s.Goal.ID != "goal-1" || s.Goal.Status != Paused || s.Goal.TerminalReason != "lunch" {
		t.Errorf("cleared %q, current %+v", cs[0].Goal.GoalID, s.Goal)
	}
}

// TestRestoreStatus: undoing a status change of the same goal restores
// the status and its reason; counters stay as they are.
func TestRestoreStatus(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	before := s.Snapshot(c.now())
	_, err := s.Pause("", c.advance(time.Minute))
	mustNoErr(t, err)
	s.Goal.TokensUsed = 70 // progress after the pause stays

	cs, err := s.Restore(before, "undo of goal.pause", c.advance(time.Hour))
	mustNoErr(t, err)
	want := []Change{{Kind: ChangeUndo, Status: Active, Reason: "undo of goal.pause", Actor: User}}
	if diff := cmp.Diff(want, cs, ignoreGoal); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if s.Goal.Status != Active || s.Goal.TerminalReason != "" || s.Goal.TokensUsed != 70 {
		t.Errorf("goal after undoing the pause: %+v", s.Goal)
	}
	if ms := s.Snapshot(c.now()).WallClockMs; ms != 60_000 {
		t.Errorf("wall clock: %d ms, want the minute before the pause only", ms)
	}

	// Undoing a resume: paused again, with the reason it had.
	_, err = s.Pause("", c.now())
	mustNoErr(t, err)
	paused := s.Snapshot(c.now())
	_, err = s.Resume(c.now())
	mustNoErr(t, err)
	if _, err := s.Restore(paused, "undo of goal.resume", c.now()); err != nil {
		t.Fatal(err)
	}
	if s.Goal.Status != Paused || s.Goal.TerminalReason != reasonUserPause {
		t.Errorf("after undoing the resume: %s %q", s.Goal.Status, s.Goal.TerminalReason)
	}
}

// TestRestoreBudget: undoing a budget change that blocked the goal
// restores the limits and makes it active again.
func TestRestoreBudget(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	beginTurn(t, s, "t1", c.now())
	step(t, s, "t1", 10, FinishStop, c.now())
	endTurn(t, s, "t1", OutcomeCompleted, c.now())
	before := s.Snapshot(c.now())
	cs, err := s.SetBudget(BudgetUpdate{Turns: LimitUpdate{Set: true, Value: f64(1)}}, c.now())
	mustNoErr(t, err)
	if s.Status() != Blocked || len(cs) == 0 || cs[len(cs)-1].Kind != ChangeBlock {
		t.Fatalf("budget of 1 turn after 1 turn: %s, %v", s.Status(), kinds(cs))
	}
	_, err = s.Restore(before, "undo of goal.block", c.now())
	mustNoErr(t, err)
	if s.Status() != Active || s.Goal.Limits.TurnBudget != nil || s.Goal.TerminalReason != "" {
		t.Errorf("after undo: %s, limits %+v, reason %q", s.Status(), s.Goal.Limits, s.Goal.TerminalReason)
	}
}

// TestRestoreRefusals: a restore that would run a goal over its budget is
// refused with goal.not_resumable and changes nothing; no goal now and
// none before is goal.not_found.
func TestRestoreRefusals(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	_, err := s.SetBudget(BudgetUpdate{WallClockMs: LimitUpdate{Set: true, Value: f64(60_000)}}, c.now())
	mustNoErr(t, err)
	before := s.Snapshot(c.now())
	_, err = s.Pause("", c.advance(2*time.Minute)) // the minute is spent by now
	mustNoErr(t, err)
	was := s.Clone()
	if _, err := s.Restore(before, "undo", c.now()); codeOf(err) != CodeNotResumable {
		t.Errorf("restoring an active goal whose budget is spent: %v, want %s", err, CodeNotResumable)
	}
	if diff := cmp.Diff(was, *s); diff != "" {
		t.Errorf("a refused restore changed the state (-was +now):\n%s", diff)
	}
	// An active goal whose restored, lower limit its counters have passed.
	s = withGoal(t, c)
	_, err = s.SetBudget(BudgetUpdate{Turns: LimitUpdate{Set: true, Value: f64(10)}}, c.now())
	mustNoErr(t, err)
	before = s.Snapshot(c.now())
	_, err = s.SetBudget(BudgetUpdate{Turns: LimitUpdate{Set: true, Value: f64(20)}}, c.now())
	mustNoErr(t, err)
	s.Goal.TurnsUsed = 12
	if _, err := s.Restore(before, "undo", c.now()); codeOf(err) != CodeNotResumable || *s.Goal.Limits.TurnBudget != 20 {
		t.Errorf("restoring a limit the goal has passed: %v, limit %d", err, *s.Goal.Limits.TurnBudget)
	}
	if _, err := (&State{}).Restore(nil, "undo", c.now()); codeOf(err) != CodeNotFound {
		t.Errorf("nothing now, nothing before: %v, want %s", err, CodeNotFound)
	}
}
