package goal

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// failingRun is a run of the person's check that fails: the work is not
// done.
var failingRun = CheckRun{ExitCode: 1, DurationMs: 1000, OutputTail: "--- FAIL: TestDeploySafety\n"}

// modelStep runs one goal tool call of the model as the service does
// (service/check.go): an UpdateGoal complete that the goal's check must
// pass first marks the check running, runs it (here it gives run) and
// answers with CompleteAfterCheck; any other call goes to CallTool.
func (s *State) modelStep(t *testing.T, c modelCall, run CheckRun, now Instant) ToolResult {
	t.Helper()
	call, err := NewCall(c.Name, c.Input, c.Agent)
	mustNoErr(t, err)
	tc := ToolCall{Call: call, TurnID: c.TurnID}
	if !s.CompletionCheck(tc) {
		res, _ := s.CallTool(tc, now)
		return res
	}
	start, _, err := s.StartCheck(Model, "run-1", now)
	mustNoErr(t, err)
	_, recorded := s.FinishCheck(start, run, now)
	res, _ := s.CompleteAfterCheck(tc, start, run, recorded, now)
	return res
}

func createCall(objective string, replace bool, turnID string) modelCall {
	in, _ := json.Marshal(CreateGoalInput{Objective: objective, Replace: replace})
	return modelCall{Name: CreateGoalTool, Input: in, TurnID: turnID}
}

func updateCall(status, turnID string) modelCall {
	return modelCall{Name: UpdateGoalTool, Input: raw(`{"status":"` + status + `"}`), TurnID: turnID}
}

func budgetCall(value float64, unit string) modelCall {
	in, _ := json.Marshal(SetGoalBudgetInput{Value: value, Unit: unit})
	return modelCall{Name: SetGoalBudgetTool, Input: in, TurnID: "t1"}
}

// inTurn is c made in the turn turnID.
func inTurn(c modelCall, turnID string) modelCall {
	c.TurnID = turnID
	return c
}

// TestModelCannotGetAroundAPersonsCheck: whatever sequence of goal tool
// calls the model makes, a goal whose person-set check fails is never
// completed, stays the current goal, and the queue never advances to the
// next goal (docs/runtime.md §2.11). Every sequence completes the goal
// without its check on the code before goal.person_set.
func TestModelCannotGetAroundAPersonsCheck(t *testing.T) {
	const objective = "make the deploy safe"
	tests := []struct {
		name  string
		setup func(t *testing.T, s *State, now Instant) // after the goal, the queue and turn t1
		calls []modelCall
	}{
		{"replace with the same objective, then complete", nil,
			[]modelCall{createCall(objective, true, "t1"), updateCall("complete", "t1")}},
		{"complete fails, replace, complete", nil,
			[]modelCall{updateCall("complete", "t1"), createCall(objective, true, "t1"), updateCall("complete", "t1")}},
		{"replace outside any turn, then complete", nil,
			[]modelCall{createCall(objective, true, ""), updateCall("complete", "")}},
		{"replace in a turn agentd does not know, then complete", nil,
			[]modelCall{createCall("something else", true, "t-unknown"), updateCall("complete", "t-unknown")}},
		{"block, replace, complete", nil,
			[]modelCall{updateCall("blocked", "t1"), createCall(objective, true, "t1"), updateCall("complete", "t1")}},
		{"block, create without replace, resume, complete", nil,
			[]modelCall{updateCall("blocked", "t1"), createCall(objective, false, "t1"), updateCall("active", "t1"), updateCall("complete", "t1")}},
		{"pause and cancel attempts, then replace and complete", nil,
			[]modelCall{updateCall("paused", "t1"), updateCall("cancelled", "t1"), updateCall("cancel", "t1"),
				createCall(objective, true, "t1"), updateCall("complete", "t1")}},
		{"a subagent replaces and completes", nil,
			[]modelCall{{Name: CreateGoalTool, Input: raw(`{"objective":"x","replace":true}`), Agent: "reviewer"},
				{Name: UpdateGoalTool, Input: raw(`{"status":"complete"}`), Agent: "reviewer"}}},
		{"a paused goal: replace, resume, complete", func(t *testing.T, s *State, now Instant) {
			_, err := s.Pause("", now)
			mustNoErr(t, err)
		}, []modelCall{createCall(objective, true, "t1"), updateCall("active", "t1"), updateCall("complete", "t1")}},
		{"a budget-blocked goal: raise, resume, replace, complete", func(t *testing.T, s *State, now Instant) {
			_, err := s.SetBudget(BudgetUpdate{Tokens: LimitUpdate{Set: true, Value: f64(100)}}, now)
			mustNoErr(t, err)
			step(t, s, "t1", 100, FinishToolCalls, now)
		}, []modelCall{budgetCall(1e6, "tokens"), updateCall("active", "t1"), createCall(objective, true, "t1"), updateCall("complete", "t1")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			s := withCheck(t, c, "./check-deploy-safety")
			person := s.Goal.ID
			deploy := enqueue(t, s, "deploy to production", c.now())
			beginTurn(t, s, "t1", c.now())
			if tt.setup != nil {
				tt.setup(t, s, c.now())
			}
			for i, call := range tt.calls {
				res := s.modelStep(t, call, failingRun, c.advance(time.Second))
				if !res.IsError && res.ErrorCode == "" && strings.Contains(res.Output, "marked complete") {
					t.Fatalf("call %d %s(%s) completed the goal: %+v", i, call.Name, call.Input, res)
				}
			}
			if s.Goal == nil || s.Goal.ID != person || s.Goal.Status == Complete || s.Goal.Check == nil {
				t.Fatalf("the person's goal was dropped or completed: %+v", s.Goal)
			}
			if len(s.Queue) != 1 || s.Queue[0].ID != deploy.ID {
				t.Fatalf("the queue advanced: %+v", s.Queue)
			}
		})
	}
}

// TestModelReplaceRefusal: the model's CreateGoal replace of an unfinished
// goal with a person's check or budget is goal.person_set, telling the
// model to ask the user, and changes nothing; a goal with only the
// model's own budget, a complete goal and a person's replace go on as
// before (docs/runtime.md §2.11).
func TestModelReplaceRefusal(t *testing.T) {
	tests := []struct {
		name     string
		check    string
		budget   func(t *testing.T, s *State, now Instant) // who sets a turn budget
		status   Status
		replace  bool
		wantCode string
		wantText string
	}{
		{"check, active", "make test", nil, Active, true, CodePersonSet, "It has a check the user set, so you cannot replace it"},
		{"check, blocked", "make test", nil, Blocked, true, CodePersonSet, "the current goal is blocked"},
		{"check, paused", "make test", nil, Paused, true, CodePersonSet, "ask them to cancel or replace the current one themselves"},
		{"person's budget", "", personBudget(3), Active, true, CodePersonSet, "It has a budget the user set"},
		{"check and person's budget", "make test", personBudget(3), Active, true, CodePersonSet, "It has a check and a budget the user set"},
		{"person's budget lowered by the model", "", func(t *testing.T, s *State, now Instant) {
			personBudget(3)(t, s, now)
			s.callTool(t, budgetCall(2, "turns"), now)
		}, Active, true, CodePersonSet, "a budget the user set"},
		{"person's budget removed by the person", "", func(t *testing.T, s *State, now Instant) {
			personBudget(3)(t, s, now)
			s.SetBudget(BudgetUpdate{Turns: LimitUpdate{Set: true}}, now)
		}, Active, true, "", ""},
		{"without replace, check", "make test", nil, Active, false, CodeAlreadyExists, "so only the user can replace it"},
		{"model's own budget", "", func(t *testing.T, s *State, now Instant) { s.callTool(t, budgetCall(3, "turns"), now) }, Active, true, "", ""},
		{"complete goal with a check", "make test", nil, Complete, true, "", ""},
		{"complete goal with a person's budget, no replace", "", personBudget(3), Complete, false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			s := withCheck(t, c, tt.check)
			if tt.budget != nil {
				tt.budget(t, s, c.now())
			}
			s.Goal.Status = tt.status
			before := stateJSON(t, s)
			res, cs := s.callTool(t, createCall("a new goal", tt.replace, ""), c.now())
			if res.ErrorCode != tt.wantCode || res.IsError != (tt.wantCode != "") || !strings.Contains(res.Output, tt.wantText) {
				t.Fatalf("CreateGoal: %+v, want code %q saying %q", res, tt.wantCode, tt.wantText)
			}
			if tt.wantCode != "" {
				if cs != nil || string(stateJSON(t, s)) != string(before) {
					t.Fatalf("the refusal changed the state: %v", kinds(cs))
				}
				return
			}
			if s.Goal.Objective != "a new goal" || s.Goal.Check != nil || s.Goal.PersonLimits.any() {
				t.Fatalf("the new goal: %+v", s.Goal)
			}
		})
	}
	t.Run("a person's replace still works", func(t *testing.T) {
		c := newClock()
		s := withCheck(t, c, "make test")
		personBudget(3)(t, s, c.now())
		cs, err := s.Create(CreateParams{Objective: "the person's new goal", Replace: true}, c.now())
		mustNoErr(t, err)
		if diff := cmp.Diff([]string{"replace/system/", "create/user/active"}, kinds(cs)); diff != "" || s.Goal.Check != nil || s.Goal.Limits.any() {
			t.Fatalf("changes (-want +got):\n%s goal %+v", diff, s.Goal)
		}
	})
}

// personBudget sets a turn budget as the person.
func personBudget(turns float64) func(t *testing.T, s *State, now Instant) {
	return func(t *testing.T, s *State, now Instant) {
		_, err := s.SetBudget(BudgetUpdate{Turns: LimitUpdate{Set: true, Value: f64(turns)}}, now)
		mustNoErr(t, err)
	}
}

// TestModelBudgetWithinThePersons: the model's SetGoalBudget may lower a
// person's limit and raise it again up to the person's, set a limit of its
// own where the person set none and change that freely, but never raise a
// person's limit (goal.person_set, nothing changes) nor remove one (the
// tool takes no null nor 0); the person may do either (docs/runtime.md
// §2.11).
func TestModelBudgetWithinThePersons(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	_, err := s.SetBudget(BudgetUpdate{Turns: LimitUpdate{Set: true, Value: f64(3)}, WallClockMs: LimitUpdate{Set: true, Value: f64(3_600_000)}}, c.now())
	mustNoErr(t, err)
	steps := []struct {
		call       modelCall
		wantCode   string
		wantText   string
		wantLimits Limits
	}{
		{budgetCall(4, "turns"), CodePersonSet, "the user set a turn budget of 3 turns; only the user can raise it", Limits{TurnBudget: i64(3), WallClockBudgetMs: i64(3_600_000)}},
		{budgetCall(1e9, "turns"), CodePersonSet, "ask them to raise it themselves", Limits{TurnBudget: i64(3), WallClockBudgetMs: i64(3_600_000)}},
		{budgetCall(61, "minutes"), CodePersonSet, "wall-clock budget of 1 hour", Limits{TurnBudget: i64(3), WallClockBudgetMs: i64(3_600_000)}},
		{budgetCall(2, "turns"), "", "Budget recorded: 2 turns", Limits{TurnBudget: i64(2), WallClockBudgetMs: i64(3_600_000)}},
		{budgetCall(3, "turns"), "", "Budget recorded: 3 turns", Limits{TurnBudget: i64(3), WallClockBudgetMs: i64(3_600_000)}},
		{budgetCall(3.4, "turns"), "", "Budget recorded: 3 turns", Limits{TurnBudget: i64(3), WallClockBudgetMs: i64(3_600_000)}},
		{budgetCall(3.5, "turns"), CodePersonSet, "3 turns", Limits{TurnBudget: i64(3), WallClockBudgetMs: i64(3_600_000)}},
		{budgetCall(30, "minutes"), "", "30 minutes", Limits{TurnBudget: i64(3), WallClockBudgetMs: i64(1_800_000)}},
		{budgetCall(100, "tokens"), "", "100 tokens", Limits{TurnBudget: i64(3), TokenBudget: i64(100), WallClockBudgetMs: i64(1_800_000)}},
		{budgetCall(5000, "tokens"), "", "5000 tokens", Limits{TurnBudget: i64(3), TokenBudget: i64(5000), WallClockBudgetMs: i64(1_800_000)}},
		{modelCall{Name: SetGoalBudgetTool, Input: raw(`{"value":null,"unit":"turns"}`)}, CodeArgsInvalid, "Value is required", Limits{TurnBudget: i64(3), TokenBudget: i64(5000), WallClockBudgetMs: i64(1_800_000)}},
		{modelCall{Name: SetGoalBudgetTool, Input: raw(`{"value":0,"unit":"turns"}`)}, CodeBudgetInvalid, "greater than 0", Limits{TurnBudget: i64(3), TokenBudget: i64(5000), WallClockBudgetMs: i64(1_800_000)}},
		{modelCall{Name: SetGoalBudgetTool, Input: raw(`{"turns":null}`)}, CodeArgsInvalid, "Unknown field", Limits{TurnBudget: i64(3), TokenBudget: i64(5000), WallClockBudgetMs: i64(1_800_000)}},
	}
	for i, st := range steps {
		before := stateJSON(t, s)
		res, cs := s.callTool(t, st.call, c.now())
		if res.ErrorCode != st.wantCode || res.IsError != (st.wantCode != "") || !strings.Contains(res.Output, st.wantText) {
			t.Fatalf("step %d %s: %+v, want code %q saying %q", i, st.call.Input, res, st.wantCode, st.wantText)
		}
		if st.wantCode != "" && (cs != nil || string(stateJSON(t, s)) != string(before)) {
			t.Fatalf("step %d: the refusal changed the state", i)
		}
		if diff := cmp.Diff(st.wantLimits, s.Goal.Limits); diff != "" {
			t.Fatalf("step %d %s: limits (-want +got):\n%s", i, st.call.Input, diff)
		}
	}
	// The person's limits are as the person set them; the model's token
	// budget is the model's.
	if diff := cmp.Diff(Limits{TurnBudget: i64(3), WallClockBudgetMs: i64(3_600_000)}, s.Goal.PersonLimits); diff != "" {
		t.Errorf("person's limits (-want +got):\n%s", diff)
	}
	// The person raises theirs; the model may then go up to it. The person
	// removes it; the model's next limit is its own.
	_, err = s.SetBudget(BudgetUpdate{Turns: LimitUpdate{Set: true, Value: f64(10)}}, c.now())
	mustNoErr(t, err)
	if res, _ := s.callTool(t, budgetCall(10, "turns"), c.now()); res.IsError {
		t.Fatalf("up to the person's new limit: %+v", res)
	}
	_, err = s.SetBudget(BudgetUpdate{Turns: LimitUpdate{Set: true}}, c.now())
	mustNoErr(t, err)
	for _, v := range []float64{50, 500} {
		if res, _ := s.callTool(t, budgetCall(v, "turns"), c.now()); res.IsError || *s.Goal.Limits.TurnBudget != int64(v) || s.Goal.PersonLimits.TurnBudget != nil {
			t.Fatalf("the model's own limit %v: %+v, limits %+v", v, res, s.Goal.Limits)
		}
	}
}

// TestModelCannotOutlastAPersonsBudget: a goal blocked by a person's turn
// budget stays blocked: the model's resume is goal.not_resumable, its
// raise goal.person_set, its replace goal.person_set. A budget the model
// set itself it may raise and resume, as before.
func TestModelCannotOutlastAPersonsBudget(t *testing.T) {
	for _, who := range []string{"person", "model"} {
		t.Run(who, func(t *testing.T) {
			c := newClock()
			s := withGoal(t, c)
			if who == "person" {
				personBudget(3)(t, s, c.now())
			} else if res, _ := s.callTool(t, budgetCall(3, "turns"), c.now()); res.IsError {
				t.Fatalf("the model's budget: %+v", res)
			}
			for i, id := range []string{"t1", "t2", "t3"} {
				origin := OriginContinuation
				if i == 0 {
					origin = OriginUser
				}
				_, err := s.BeginTurn(id, origin, "", c.now())
				mustNoErr(t, err)
				step(t, s, id, 10, FinishStop, c.advance(time.Minute))
				endTurn(t, s, id, OutcomeCompleted, c.now())
			}
			if s.Status() != Blocked {
				t.Fatalf("after 3 turns the goal is %s", s.Status())
			}
			beginTurn(t, s, "t4", c.now())
			seq := []struct {
				call modelCall
				want string // code for the person's budget
			}{
				{updateCall("active", "t4"), CodeNotResumable},
				{inTurn(budgetCall(10, "turns"), "t4"), CodePersonSet},
				{updateCall("active", "t4"), CodeNotResumable},
				{createCall("ship it", true, "t4"), CodePersonSet},
			}
			for i, st := range seq {
				res, _ := s.callTool(t, st.call, c.now())
				if who == "person" && res.ErrorCode != st.want {
					t.Fatalf("step %d %s(%s): %+v, want %s", i, st.call.Name, st.call.Input, res, st.want)
				}
			}
			if who == "person" && (s.Status() != Blocked || *s.Goal.Limits.TurnBudget != 3 || s.Goal.ID != "goal-1") {
				t.Fatalf("the person's budget did not hold: %+v", s.Goal)
			}
			if who == "model" && (s.Goal.ID != "goal-2" || s.Status() != Active) {
				t.Fatalf("the model's own budget: the goal is %+v", s.Goal)
			}
		})
	}
}

// TestUndoRecordsThePersonsLimits: an undo is the person's act: a limit it
// changes becomes the person's, and a goal it brings back has every limit
// the person's (their origin is not in the history).
func TestUndoRecordsThePersonsLimits(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	before := s.Snapshot(c.now())
	s.callTool(t, budgetCall(5, "turns"), c.now())
	s.callTool(t, budgetCall(100, "tokens"), c.now())
	if s.Goal.PersonLimits.any() {
		t.Fatalf("the model's limits count as the person's: %+v", s.Goal.PersonLimits)
	}
	mid := s.Snapshot(c.now()) // 5 turns, 100 tokens, both the model's
	s.callTool(t, budgetCall(9, "turns"), c.now())
	_, err := s.Restore(mid, "undo", c.now())
	mustNoErr(t, err)
	if diff := cmp.Diff(Limits{TurnBudget: i64(5)}, s.Goal.PersonLimits); diff != "" {
		t.Errorf("after undoing the model's raise (-want +got):\n%s", diff)
	}
	if res, _ := s.callTool(t, budgetCall(9, "turns"), c.now()); res.ErrorCode != CodePersonSet {
		t.Errorf("the model raises the limit the undo restored: %+v", res)
	}
	_, err = s.Restore(before, "undo", c.now())
	mustNoErr(t, err)
	if s.Goal.Limits.any() || s.Goal.PersonLimits.any() {
		t.Errorf("after undoing to no budget: %+v %+v", s.Goal.Limits, s.Goal.PersonLimits)
	}

	// A cleared goal brought back: its limits are the person's.
	s.callTool(t, budgetCall(4, "turns"), c.now())
	gone := s.Snapshot(c.now())
	_, err = s.Create(CreateParams{Objective: "other", Replace: true}, c.now())
	mustNoErr(t, err)
	_, err = s.Restore(gone, "undo", c.now())
	mustNoErr(t, err)
	if diff := cmp.Diff(Limits{TurnBudget: i64(4)}, s.Goal.PersonLimits); diff != "" || s.Goal.ID != gone.GoalID {
		t.Errorf("the goal brought back: %s (-want +got):\n%s", s.Goal.ID, diff)
	}
}
