package goal

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// warnings lists the budgetWarning changes of cs as "percent: reason".
func warnings(cs []Change) []string {
	var out []string
	for _, c := range cs {
		if c.Kind == ChangeBudgetWarning {
			out = append(out, fmt.Sprintf("%d: %s", c.Percent, c.Reason))
		}
	}
	return out
}

// runTurn plays one goal turn of one step with tokens and ends it
// completed under stallTurns, returning every change of it.
func runTurn(t *testing.T, s *State, id string, tokens int64, stallTurns int, now Instant) (StepBegin, []Change) {
	t.Helper()
	var cs []Change
	b := beginTurn(t, s, id, now)
	cs = append(cs, b.Changes...)
	sb, se := step(t, s, id, tokens, FinishStop, now)
	cs = append(append(cs, sb.Changes...), se.Changes...)
	e, err := s.EndTurn(id, OutcomeCompleted, "", "", stallTurns, now)
	mustNoErr(t, err)
	return sb, append(cs, e.Changes...)
}

// TestTurnBudgetWarnings: a turn budget of 10 warns at the 5th turn (50 %)
// and the 8th (80 %), once each; the 80 % warning makes the wrap-up note
// due at that very step, once (docs/runtime.md §2.4.4).
func TestTurnBudgetWarnings(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	_, err := s.SetBudget(BudgetUpdate{Turns: LimitUpdate{Set: true, Value: f64(10)}}, c.now())
	mustNoErr(t, err)
	for i := 1; i <= 9; i++ {
		sb, cs := runTurn(t, s, fmt.Sprint("t", i), 0, 0, c.advance(time.Second))
		var want []string
		switch i {
		case 5:
			want = []string{"50: 50 % of the turn budget of 10 turns used"}
		case 8:
			want = []string{"80: 80 % of the turn budget of 10 turns used"}
		}
		if got := warnings(cs); !slices.Equal(got, want) {
			t.Errorf("turn %d: warnings %q, want %q", i, got, want)
		}
		if sb.WrapUpDue != (i == 8) {
			t.Errorf("turn %d: wrap-up due %v, want %v", i, sb.WrapUpDue, i == 8)
		}
	}
	if s.Goal.BudgetWarned.Turns != FinalBudgetWarning || s.Goal.WrapUpDue {
		t.Errorf("after 9 turns: warned %+v, wrap-up still due %v", s.Goal.BudgetWarned, s.Goal.WrapUpDue)
	}
}

// TestTokenBudgetWarningsJump: a step that passes 50 % and 80 % at once
// gives one warning, of 80 %; a later step gives none; the wrap-up note
// is due at the next step of the main agent only, once.
func TestTokenBudgetWarningsJump(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	s.Goal.Limits.TokenBudget = i64(1000)
	beginTurn(t, s, "t1", c.now())
	_, e := step(t, s, "t1", 499, FinishToolCalls, c.now())
	if got := warnings(e.Changes); got != nil {
		t.Fatalf("at 49.9 %%: %q", got)
	}
	_, e = step(t, s, "t1", 350, FinishToolCalls, c.now())
	if got := warnings(e.Changes); !slices.Equal(got, []string{"80: 80 % of the token budget of 1000 tokens used"}) {
		t.Fatalf("at 84.9 %%: %q, want one 80 %% warning", got)
	}
	if e.Changes[len(e.Changes)-1].Percent != 80 {
		t.Errorf("the last change (the one notified) is %+v, want the warning", e.Changes[len(e.Changes)-1])
	}
	b, e := step(t, s, "t1", 50, FinishToolCalls, c.now())
	if !b.WrapUpDue || warnings(e.Changes) != nil {
		t.Errorf("next step: wrap-up due %v, warnings %q; want due and no warning", b.WrapUpDue, warnings(e.Changes))
	}
	if b, _ := step(t, s, "t1", 0, FinishToolCalls, c.now()); b.WrapUpDue {
		t.Errorf("the wrap-up note is due twice")
	}
}

// TestWrapUpOnlyWhileActive: the note due when the goal is then blocked
// (the budget is spent in the same step) is dropped, not given later.
func TestWrapUpOnlyWhileActive(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	s.Goal.Limits.TokenBudget = i64(100)
	beginTurn(t, s, "t1", c.now())
	_, e := step(t, s, "t1", 100, FinishStop, c.now())
	if !slices.Equal(kinds(e.Changes), []string{"budgetWarning/runtime/active", "block/runtime/blocked"}) {
		t.Fatalf("changes %v", kinds(e.Changes))
	}
	endTurn(t, s, "t1", OutcomeCompleted, c.now())
	if b := beginStepOf(t, s, "t2", c.now()); b.WrapUpDue {
		t.Errorf("wrap-up due for a blocked goal")
	}
}

func beginStepOf(t *testing.T, s *State, id string, now Instant) StepBegin {
	t.Helper()
	beginTurn(t, s, id, now)
	b, err := s.BeginStep(id, now)
	mustNoErr(t, err)
	return b
}

// TestBudgetWarningsRearm: changing a budget's limit re-arms its
// thresholds and checks them at once; setting it to the same value, or
// changing another budget, does not (docs/runtime.md §2.4.4).
func TestBudgetWarningsRearm(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	s.Goal.Limits.TokenBudget = i64(100)
	s.Goal.Limits.TurnBudget = i64(100)
	beginTurn(t, s, "t1", c.now())
	step(t, s, "t1", 85, FinishStop, c.now())
	set := func(u BudgetUpdate) []string {
		cs, err := s.SetBudget(u, c.now())
		mustNoErr(t, err)
		return warnings(cs)
	}
	if got := set(BudgetUpdate{Tokens: LimitUpdate{Set: true, Value: f64(100)}}); got != nil {
		t.Errorf("the same limit again: %q", got)
	}
	if got := set(BudgetUpdate{Turns: LimitUpdate{Set: true, Value: f64(50)}}); got != nil {
		t.Errorf("another budget changed: %q", got)
	}
	if got := set(BudgetUpdate{Tokens: LimitUpdate{Set: true, Value: f64(1000)}}); got != nil || s.Goal.BudgetWarned.Tokens != 0 {
		t.Errorf("raised to 1000 (8.5 %% used): %q, warned %d; want none and re-armed", got, s.Goal.BudgetWarned.Tokens)
	}
	if got := set(BudgetUpdate{Tokens: LimitUpdate{Set: true, Value: f64(150)}}); !slices.Equal(got, []string{"50: 50 % of the token budget of 150 tokens used"}) {
		t.Errorf("lowered to 150 (56.7 %% used): %q, want the 50 %% warning at once", got)
	}
	s.Goal.WrapUpDue = false
	if got := set(BudgetUpdate{Tokens: LimitUpdate{Set: true, Value: nil}}); got != nil || s.Goal.BudgetWarned.Tokens != 0 {
		t.Errorf("removed: %q, warned %d", got, s.Goal.BudgetWarned.Tokens)
	}
}

// TestWallClockWarnings: the timer's next deadline is the next threshold
// not yet fired; CheckWallClock fires each once, then the block
// (docs/runtime.md §2.4.4).
func TestWallClockWarnings(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	_, err := s.SetBudget(BudgetUpdate{WallClockMs: LimitUpdate{Set: true, Value: f64(100_000)}}, c.now())
	mustNoErr(t, err)
	next := func() time.Duration {
		left, ok := s.NextWallClockWarning(c.now())
		if !ok {
			return -1
		}
		return left
	}
	if got := next(); got != 50*time.Second {
		t.Fatalf("first deadline %v, want 50s", got)
	}
	if got := warnings(s.CheckWallClock(c.advance(49 * time.Second))); got != nil {
		t.Errorf("at 49 s: %q", got)
	}
	if got := warnings(s.CheckWallClock(c.advance(time.Second))); !slices.Equal(got, []string{"50: 50 % of the wall-clock budget of 100 seconds used"}) {
		t.Errorf("at 50 s: %q", got)
	}
	if got := warnings(s.CheckWallClock(c.now())); got != nil {
		t.Errorf("at 50 s again: %q", got)
	}
	if got := next(); got != 30*time.Second {
		t.Errorf("second deadline %v, want 30s", got)
	}
	if got := warnings(s.CheckWallClock(c.advance(30 * time.Second))); !slices.Equal(got, []string{"80: 80 % of the wall-clock budget of 100 seconds used"}) || !s.Goal.WrapUpDue {
		t.Errorf("at 80 s: %q, wrap-up due %v", got, s.Goal.WrapUpDue)
	}
	if got := next(); got != -1 {
		t.Errorf("a deadline after both thresholds: %v", got)
	}
	if left, _ := s.WallClockLeft(c.now()); left != 20*time.Second {
		t.Errorf("budget left %v, want 20s", left)
	}
	_, err = s.Pause("", c.now())
	mustNoErr(t, err)
	if got := next(); got != -1 {
		t.Errorf("a deadline of a paused goal: %v", got)
	}
}

// TestStall: stallTurns goal turns in a row with no progress stall the
// goal once; a todo change or a task-file change clears it and restarts
// the count; 0 turns the rule off (docs/runtime.md §2.4.5).
func TestStall(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	s.Goal.TaskFile = &TaskFileInfo{Path: "TASK.md", Exists: true, SHA256: "a", Size: 1, Checkboxes: &Checkboxes{Checked: 0, Total: 2}}
	stalls := func(cs []Change) (out []string) {
		for _, c := range cs {
			if c.Kind == ChangeStall || c.Kind == ChangeStallCleared {
				out = append(out, string(c.Kind))
			}
		}
		return out
	}
	turn := 0
	play := func(stallTurns int) []string {
		turn++
		_, cs := runTurn(t, s, fmt.Sprint("t", turn), 10, stallTurns, c.advance(time.Second))
		return stalls(cs)
	}
	for i := 1; i <= 2; i++ {
		if got := play(3); got != nil || s.Goal.Stalled {
			t.Fatalf("quiet turn %d: %v stalled %v", i, got, s.Goal.Stalled)
		}
	}
	if got := play(3); !slices.Equal(got, []string{"stall"}) || !s.Snapshot(c.now()).Stalled {
		t.Fatalf("third quiet turn: %v, snapshot stalled %v", got, s.Snapshot(c.now()).Stalled)
	}
	if got := play(3); got != nil || !s.Goal.Stalled {
		t.Errorf("fourth quiet turn: %v (a stall is told once)", got)
	}
	if got := stalls(s.NoteProgress(c.now())); !slices.Equal(got, []string{"stallCleared"}) || s.Goal.Stalled {
		t.Errorf("todo change: %v, stalled %v", got, s.Goal.Stalled)
	}
	if got := s.NoteProgress(c.now()); got != nil {
		t.Errorf("a second todo change told again: %v", kinds(got))
	}
	// The turn after the change counts as progress: three more quiet turns stall again.
	for i := 1; i <= 3; i++ {
		if got := play(3); got != nil {
			t.Fatalf("after the change, turn %d: %v", i, got)
		}
	}
	if got := play(3); !slices.Equal(got, []string{"stall"}) {
		t.Fatalf("stalled again: %v", got)
	}
	// A checkbox change alone (same hash and size, as a file too large to hash) is progress.
	info := *s.Goal.TaskFile
	info.Checkboxes = &Checkboxes{Checked: 1, Total: 2}
	cs := s.UpdateTaskFile(info, c.now())
	if !slices.Equal(kinds(cs), []string{"taskFile/runtime/active"}) || s.Goal.Stalled || cs[0].Goal.Stalled {
		t.Errorf("checkbox change: %v, stalled %v", kinds(cs), s.Goal.Stalled)
	}
	// Off: no count reaches it.
	for i := 1; i <= 5; i++ {
		if got := play(0); got != nil {
			t.Fatalf("stallTurns 0, turn %d: %v", i, got)
		}
	}
	// A lower setting applies at the next turn end.
	if got := play(1); !slices.Equal(got, []string{"stall"}) {
		t.Errorf("stallTurns lowered to 1 after 6 quiet turns: %v", got)
	}
	// Turned off while stalled: the next turn end clears it, once.
	if got := play(0); !slices.Equal(got, []string{"stallCleared"}) || s.Goal.Stalled {
		t.Errorf("stallTurns 0 on a stalled goal: %v, stalled %v", got, s.Goal.Stalled)
	}
	if got := play(0); got != nil {
		t.Errorf("stallTurns 0 again: %v", got)
	}
}

// TestStallCountsOnlyGoingOnTurns: turns that pause or block the goal,
// and turns not driven by the goal, do not count.
func TestStallCountsOnlyGoingOnTurns(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	for i, o := range []Outcome{OutcomeCancelled, OutcomeFailed} {
		id := fmt.Sprint("t", i)
		beginTurn(t, s, id, c.now())
		step(t, s, id, 0, FinishStop, c.now())
		_, err := s.EndTurn(id, o, "", "", 1, c.now())
		mustNoErr(t, err)
		if s.Goal.QuietTurns != 0 || s.Goal.Stalled {
			t.Errorf("after a %s turn: %d quiet turns", o, s.Goal.QuietTurns)
		}
		_, err = s.Resume(c.now())
		mustNoErr(t, err)
	}
	_, err := s.Pause("", c.now())
	mustNoErr(t, err)
	beginTurn(t, s, "ordinary", c.now())
	if _, err := s.EndTurn("ordinary", OutcomeCompleted, "", "", 1, c.now()); err != nil || s.Goal.QuietTurns != 0 {
		t.Errorf("an ordinary turn counted: %d, %v", s.Goal.QuietTurns, err)
	}
}
