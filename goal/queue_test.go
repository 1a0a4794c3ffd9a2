package goal

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// ids lists the ids of the queue, first first.
func ids(s *State) []string {
	var out []string
	for _, q := range s.Queue {
		out = append(out, q.ID)
	}
	return out
}

// enqueue adds objective to s's queue and fails the test on error.
func enqueue(t testing.TB, s *State, objective string, now Instant) QueuedGoal {
	t.Helper()
	ch, err := s.Enqueue(QueueParams{Objective: objective}, now)
	mustNoErr(t, err)
	return *ch.Item
}

func completeByModel(t testing.TB, s *State, turnID string, now Instant) (ToolResult, []Change) {
	t.Helper()
	return s.callTool(t, modelCall{Name: UpdateGoalTool, Input: raw(`{"status":"complete"}`), TurnID: turnID}, now)
}

// TestEnqueue: an item is normalized as a goal's texts are, gets a fresh
// id and the time; limits and a bad check are refused, changing nothing
// (docs/runtime.md §2.9.1).
func TestEnqueue(t *testing.T) {
	c := newClock()
	fixedIDs(t)
	s := &State{}
	ch, err := s.Enqueue(QueueParams{Objective: "  write docs \n", CompletionCriterion: " docs build ", Check: ptr("  make docs  "), CheckSetBy: alice}, c.now())
	mustNoErr(t, err)
	want := QueuedGoal{ID: "goal-1", Objective: "write docs", CompletionCriterion: "docs build", Check: "make docs", CheckSetBy: &alice, AddedAt: c.wall}
	if diff := cmp.Diff(QueueChange{Kind: QueueAdd, Item: &want, Index: 0}, ch); diff != "" {
		t.Fatalf("change (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]QueuedGoal{want}, s.QueueItems()); diff != "" {
		t.Fatalf("queue (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name string
		p    QueueParams
		code string
		msg  string
	}{
		{"empty objective", QueueParams{Objective: "  "}, CodeObjectiveEmpty, "the objective is empty"},
		{"long objective", QueueParams{Objective: strings.Repeat("x", MaxObjectiveChars+1)}, CodeObjectiveTooLong, "at most 4000"},
		{"control char", QueueParams{Objective: "a\x1bb"}, CodeArgsInvalid, "U+001B"},
		{"blank check", QueueParams{Objective: "a", Check: ptr("   ")}, CodeArgsInvalid, "the check is blank"},
		{"long check", QueueParams{Objective: "a", Check: ptr(strings.Repeat("y", MaxCheckChars+1))}, CodeArgsInvalid, "at most 2000"},
		{"check with newline", QueueParams{Objective: "a", Check: ptr("make\nrm -rf x")}, CodeArgsInvalid, "U+000A"},
	} {
		_, err := s.Enqueue(tc.p, c.now())
		if codeOf(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: got %q (%s), want %s containing %q", tc.name, err, codeOf(err), tc.code, tc.msg)
		}
	}
	if len(s.Queue) != 1 {
		t.Fatalf("refused adds changed the queue: %v", ids(s))
	}
}

// TestQueueFull: the queue holds MaxQueuedGoals items; one more is
// args.invalid naming the limit.
func TestQueueFull(t *testing.T) {
	c := newClock()
	fixedIDs(t)
	s := &State{}
	for range MaxQueuedGoals {
		enqueue(t, s, "g", c.now())
	}
	_, err := s.Enqueue(QueueParams{Objective: "one more"}, c.now())
	if codeOf(err) != CodeArgsInvalid || !strings.Contains(err.Error(), "already holds 50 goals") {
		t.Fatalf("got %v (%s)", err, codeOf(err))
	}
	if len(s.Queue) != MaxQueuedGoals {
		t.Fatalf("queue has %d items", len(s.Queue))
	}
}

// TestDequeueAndMove: remove and move name items by id; the others keep
// their order; an unknown id or an index outside the queue is args.invalid.
func TestDequeueAndMove(t *testing.T) {
	c := newClock()
	fixedIDs(t)
	s := &State{}
	for _, o := range []string{"a", "b", "c", "d"} {
		enqueue(t, s, o, c.now())
	}
	ch, ok, err := s.MoveQueued("goal-4", 0)
	mustNoErr(t, err)
	if !ok || ch.Kind != QueueMove || ch.Index != 0 || ch.Item.ID != "goal-4" {
		t.Fatalf("move: %+v %v", ch, ok)
	}
	if diff := cmp.Diff([]string{"goal-4", "goal-1", "goal-2", "goal-3"}, ids(s)); diff != "" {
		t.Fatalf("after move to 0 (-want +got):\n%s", diff)
	}
	if _, _, err := s.MoveQueued("goal-4", 3); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"goal-1", "goal-2", "goal-3", "goal-4"}, ids(s)); diff != "" {
		t.Fatalf("after move to 3 (-want +got):\n%s", diff)
	}
	if _, ok, err := s.MoveQueued("goal-2", 1); err != nil || ok {
		t.Fatalf("a move to the same place: ok %v err %v", ok, err)
	}
	for _, idx := range []int{-1, 4} {
		if _, _, err := s.MoveQueued("goal-1", idx); codeOf(err) != CodeArgsInvalid || !strings.Contains(err.Error(), "use 0 to 3") {
			t.Errorf("index %d: %v", idx, err)
		}
	}
	ch, err = s.Dequeue("goal-2")
	mustNoErr(t, err)
	if ch.Kind != QueueRemove || ch.Index != 1 || ch.Item.Objective != "b" {
		t.Fatalf("remove: %+v", ch)
	}
	if diff := cmp.Diff([]string{"goal-1", "goal-3", "goal-4"}, ids(s)); diff != "" {
		t.Fatalf("after remove (-want +got):\n%s", diff)
	}
	for _, err := range []error{func() error { _, err := s.Dequeue("goal-2"); return err }(), func() error { _, _, err := s.MoveQueued("nope", 0); return err }()} {
		if codeOf(err) != CodeArgsInvalid || !strings.Contains(err.Error(), "no queued goal has the id") {
			t.Errorf("unknown id: %v", err)
		}
	}
}

// TestAdvanceOnComplete: the model's UpdateGoal complete makes the first
// queued goal the current one in the same call: a complete change, then an
// advance (actor runtime) to a fresh active goal with zero usage and no
// budget; the turn that completed becomes its starter turn, so it ends with
// a continuation, while a later goal tool call in that turn is stale
// (docs/runtime.md §2.9).
func TestAdvanceOnComplete(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	mustNoErr(t, func() error {
		_, err := s.SetBudget(BudgetUpdate{Turns: LimitUpdate{Set: true, Value: f64(5)}}, c.now())
		return err
	}())
	next := enqueue(t, s, "second", c.now())
	enqueue(t, s, "third", c.now())
	beginTurn(t, s, "t1", c.now())
	step(t, s, "t1", 300, FinishToolCalls, c.advance(time.Minute))
	res, cs := completeByModel(t, s, "t1", c.advance(time.Second))
	if diff := cmp.Diff([]string{"complete/model/complete", "advance/runtime/active"}, kinds(cs)); diff != "" {
		t.Fatalf("changes (-want +got):\n%s", diff)
	}
	if cs[0].Goal.Objective != "ship it" || cs[0].Goal.TokensUsed != 300 {
		t.Errorf("the complete change is not about the old goal: %+v", cs[0].Goal)
	}
	if !strings.Contains(res.Output, `The next goal of the queue is now active and starts with the next turn: "second".`) || !res.StopTurn {
		t.Errorf("output: %q", res.Output)
	}
	g := s.Goal
	if g.Objective != "second" || g.Status != Active || g.ID == next.ID || g.ID == "goal-1" || g.LastActor != Runtime {
		t.Fatalf("current goal: %+v", g)
	}
	snap := s.Snapshot(c.now())
	if snap.TurnsUsed != 0 || snap.TokensUsed != 0 || snap.WallClockMs != 0 || snap.Budget.TurnBudget != nil || snap.TaskFile != nil {
		t.Errorf("the new goal does not start fresh: %+v", snap)
	}
	if diff := cmp.Diff([]string{"third"}, objectives(s)); diff != "" {
		t.Errorf("queue (-want +got):\n%s", diff)
	}
	res, cs = completeByModel(t, s, "t1", c.now())
	if res.ErrorCode != CodeStaleCall || cs != nil || s.Goal.Status != Active {
		t.Fatalf("a second complete in the same turn: %+v %v", res, cs)
	}
	end := endTurn(t, s, "t1", OutcomeCompleted, c.advance(time.Second))
	if end.Continuation != ContinuationNormal || s.Goal.TurnsUsed != 1 {
		t.Fatalf("turn end: continuation %q, turns %d", end.Continuation, s.Goal.TurnsUsed)
	}
}

func objectives(s *State) []string {
	var out []string
	for _, q := range s.Queue {
		out = append(out, q.Objective)
	}
	return out
}

// TestNoAdvance: auto-advance off, a blocked goal, a cancelled goal and an
// empty queue leave the queue alone (docs/runtime.md §2.9).
func TestNoAdvance(t *testing.T) {
	t.Run("auto-advance off", func(t *testing.T) {
		c := newClock()
		s := withGoal(t, c)
		enqueue(t, s, "next", c.now())
		if _, ok := s.SetAutoAdvance(false); !ok || s.AutoAdvance() {
			t.Fatal("SetAutoAdvance(false) did not turn it off")
		}
		if _, ok := s.SetAutoAdvance(false); ok {
			t.Fatal("turning it off twice reported a change")
		}
		_, cs := completeByModel(t, s, "", c.now())
		if diff := cmp.Diff([]string{"complete/model/complete"}, kinds(cs)); diff != "" {
			t.Fatalf("changes (-want +got):\n%s", diff)
		}
		if s.Goal.Status != Complete || len(s.Queue) != 1 {
			t.Fatalf("goal %s, queue %d", s.Goal.Status, len(s.Queue))
		}
	})
	t.Run("blocked", func(t *testing.T) {
		c := newClock()
		s := withGoal(t, c)
		enqueue(t, s, "next", c.now())
		_, cs := s.callTool(t, modelCall{Name: UpdateGoalTool, Input: raw(`{"status":"blocked"}`)}, c.now())
		if diff := cmp.Diff([]string{"block/model/blocked"}, kinds(cs)); diff != "" || len(s.Queue) != 1 {
			t.Fatalf("changes (-want +got):\n%s queue %d", diff, len(s.Queue))
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		c := newClock()
		s := withGoal(t, c)
		enqueue(t, s, "next", c.now())
		cs, err := s.Cancel(c.now())
		mustNoErr(t, err)
		if diff := cmp.Diff([]string{"cancel/user/"}, kinds(cs)); diff != "" || s.Goal != nil || len(s.Queue) != 1 {
			t.Fatalf("changes (-want +got):\n%s goal %v queue %d", diff, s.Goal, len(s.Queue))
		}
	})
	t.Run("empty queue", func(t *testing.T) {
		c := newClock()
		s := withGoal(t, c)
		res, cs := completeByModel(t, s, "", c.now())
		if len(cs) != 1 || s.Goal.Status != Complete || strings.Contains(res.Output, "queue") {
			t.Fatalf("changes %v, output %q", kinds(cs), res.Output)
		}
	})
}

// TestQueueClone: a clone shares no queue memory with its original.
func TestQueueClone(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	enqueue(t, s, "a", c.now())
	cl := s.Clone()
	cl.Queue[0].Objective = "changed"
	if s.Queue[0].Objective != "a" {
		t.Fatal("the clone shares the queue")
	}
}

// TestQueuedBudgets: a queued goal takes budgets by the rules of
// SetBudget (a bad one is goal.budget_invalid naming the field, the queue
// unchanged; null is no limit); the goal it starts has them as the
// person's limits, which the model's SetGoalBudget may lower but not raise
// (docs/runtime.md §2.9.1, §2.11). A queued goal without budgets starts
// without (TestAdvanceOnComplete).
func TestQueuedBudgets(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	for _, tc := range []struct {
		u    BudgetUpdate
		name string
	}{
		{BudgetUpdate{Turns: LimitUpdate{Set: true, Value: f64(2.5)}}, "turns must be a whole number"},
		{BudgetUpdate{Tokens: LimitUpdate{Set: true, Value: f64(0)}}, "tokens must be a whole number"},
		{BudgetUpdate{WallClockMs: LimitUpdate{Set: true, Value: f64(10)}}, "wallClockMs must be between"},
	} {
		_, err := s.Enqueue(QueueParams{Objective: "bad", Budget: tc.u}, c.now())
		if codeOf(err) != CodeBudgetInvalid || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("%+v: got %v (%s), want %s saying %q", tc.u, err, codeOf(err), CodeBudgetInvalid, tc.name)
		}
	}
	if len(s.Queue) != 0 {
		t.Fatalf("refused adds changed the queue: %v", ids(s))
	}
	u := BudgetUpdate{Turns: LimitUpdate{Set: true, Value: f64(2)}, Tokens: LimitUpdate{Set: true}, WallClockMs: LimitUpdate{Set: true, Value: f64(5400000.4)}}
	ch, err := s.Enqueue(QueueParams{ID: "q1", Objective: "second", Budget: u}, c.now())
	mustNoErr(t, err)
	want := Limits{TurnBudget: i64(2), WallClockBudgetMs: i64(5_400_000)}
	if diff := cmp.Diff(want, ch.Item.Limits()); diff != "" {
		t.Fatalf("queued budgets (-want +got):\n%s", diff)
	}
	if _, err := s.Enqueue(QueueParams{ID: "q1", Objective: "second"}, c.now()); codeOf(err) != CodeArgsInvalid {
		t.Fatalf("the same id with other budgets: %v, want %s", err, CodeArgsInvalid)
	}
	if ch, err := s.Enqueue(QueueParams{ID: "q1", Objective: "second", Budget: u}, c.now()); err != nil || ch.Item != nil {
		t.Fatalf("the same add again: %+v, %v; want nothing changed", ch, err)
	}
	beginTurn(t, s, "t1", c.now())
	completeByModel(t, s, "t1", c.advance(time.Second))
	endTurn(t, s, "t1", OutcomeCompleted, c.advance(time.Second))
	if s.Goal.Objective != "second" {
		t.Fatalf("no advance: %+v", s.Goal)
	}
	if diff := cmp.Diff(want, s.Goal.Limits); diff != "" {
		t.Fatalf("the new goal's limits (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, s.Goal.PersonLimits); diff != "" {
		t.Fatalf("the new goal's person limits (-want +got):\n%s", diff)
	}
	beginTurn(t, s, "t2", c.now())
	raise, lower := budgetCall(50, "turns"), budgetCall(1, "turns")
	raise.TurnID, lower.TurnID = "t2", "t2"
	if res, _ := s.callTool(t, raise, c.now()); res.ErrorCode != CodePersonSet || *s.Goal.Limits.TurnBudget != 2 {
		t.Fatalf("the model raised the queued goal's turn budget: %+v, limits %+v", res, s.Goal.Limits)
	}
	if res, _ := s.callTool(t, lower, c.now()); res.IsError || *s.Goal.Limits.TurnBudget != 1 {
		t.Fatalf("the model may lower it: %+v, limits %+v", res, s.Goal.Limits)
	}
}
