package goal

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/commands/protocol"
	"github.com/google/go-cmp/cmp"
)

var ignoreGoal = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Goal" }, cmp.Ignore())

// TestTurnBudget: a turn budget of 2 blocks the goal when turn 2 ends, not
// before, and before a continuation (docs/runtime.md §2.4).
func TestTurnBudget(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	_, err := s.SetBudget(BudgetUpdate{Turns: LimitUpdate{Set: true, Value: f64(2)}}, c.now())
	mustNoErr(t, err)

	if b := beginTurn(t, s, "t1", c.now()); !b.GoalDriven {
		t.Fatalf("turn 1 is not goal-driven")
	}
	step(t, s, "t1", 10, FinishToolCalls, c.now())
	step(t, s, "t1", 10, FinishStop, c.now())
	if e := endTurn(t, s, "t1", OutcomeCompleted, c.now()); e.Continuation != ContinuationNormal || e.Changes != nil {
		t.Fatalf("turn 1 end: got %q %v, want a continuation and no change", e.Continuation, kinds(e.Changes))
	}

	b, err := s.BeginTurn("t2", OriginContinuation, "", c.now())
	mustNoErr(t, err)
	if !b.GoalDriven || s.ContinuationOutstanding {
		t.Fatalf("turn 2: driven %v, continuation outstanding %v", b.GoalDriven, s.ContinuationOutstanding)
	}
	_, e := step(t, s, "t2", 10, FinishToolCalls, c.now())
	if e.StopTurn || e.GraceStep || s.Status() != Active || s.Goal.TurnsUsed != 2 {
		t.Fatalf("turn 2 was stopped mid-turn: %+v, status %s, turns %d", e, s.Status(), s.Goal.TurnsUsed)
	}
	step(t, s, "t2", 10, FinishStop, c.now())
	end := endTurn(t, s, "t2", OutcomeCompleted, c.now())
	want := []Change{{Kind: ChangeBlock, Status: Blocked, Reason: "budget reached: turn budget of 2 turns", Actor: Runtime}}
	if diff := cmp.Diff(want, end.Changes, ignoreGoal); diff != "" {
		t.Errorf("turn 2 end changes (-want +got):\n%s", diff)
	}
	if end.Continuation != NoContinuation {
		t.Errorf("continuation after the last turn: %q", end.Continuation)
	}
	if b := beginTurn(t, s, "t3", c.now()); b.GoalDriven || b.Changes != nil {
		t.Errorf("turn 3: driven %v changes %v", b.GoalDriven, kinds(b.Changes))
	}
}

// TestCompletedInLastTurn: a goal completed during its last allowed turn
// stays complete.
func TestCompletedInLastTurn(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	s.Goal.Limits.TurnBudget = i64(1)
	beginTurn(t, s, "t1", c.now())
	mustNoErr(t, firstErr(s.BeginStep("t1", c.now())))
	res, _ := s.callTool(t, modelCall{Name: UpdateGoalTool, Input: raw(`{"status":"complete"}`), TurnID: "t1"}, c.now())
	if res.IsError || !res.StopTurn || !res.StopBatch {
		t.Fatalf("UpdateGoal complete: %+v", res)
	}
	mustNoErr(t, firstErr(s.EndStep("t1", 5, FinishToolCalls, c.now())))
	step(t, s, "t1", 5, FinishStop, c.now())
	end := endTurn(t, s, "t1", OutcomeCompleted, c.now())
	if s.Status() != Complete || end.Changes != nil || end.Continuation != NoContinuation {
		t.Errorf("got %s %v %q, want complete, no change, no continuation", s.Status(), kinds(end.Changes), end.Continuation)
	}
	if s.Goal.TokensUsed != 10 {
		t.Errorf("tokens: got %d, want 10 (every step of the goal-driven turn)", s.Goal.TokensUsed)
	}
}

func firstErr[T any](_ T, err error) error { return err }

// TestTokenBudgetGrace: crossing the token budget in a step that ended with
// tool calls gives exactly one grace step, then the turn is told to stop.
func TestTokenBudgetGrace(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	s.Goal.Limits.TokenBudget = i64(100)
	beginTurn(t, s, "t1", c.now())
	_, e := step(t, s, "t1", 60, FinishToolCalls, c.now())
	if e.StopTurn || e.GraceStep {
		t.Fatalf("below the budget: %+v", e)
	}
	_, e = step(t, s, "t1", 60, FinishToolCalls, c.now())
	want := []Change{
		{Kind: ChangeBudgetWarning, Status: Active, Reason: "80 % of the token budget of 100 tokens used", Actor: Runtime, Percent: 80},
		{Kind: ChangeBlock, Status: Blocked, Reason: "budget reached: token budget of 100 tokens", Actor: Runtime},
	}
	if !e.GraceStep || e.StopTurn {
		t.Fatalf("crossing step: %+v, want a grace step", e)
	}
	if diff := cmp.Diff(want, e.Changes, ignoreGoal); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if e.Goal == nil || e.Goal.Status != Blocked || !e.Goal.Budget.TokenBudgetReached {
		t.Errorf("the step end does not carry the blocked goal: %+v", e.Goal)
	}
	if !s.InGraceStep("t1") {
		t.Fatalf("InGraceStep is false after the grant")
	}
	b, err := s.BeginStep("t1", c.now())
	mustNoErr(t, err)
	if !b.GraceStep || !s.InGraceStep("t1") {
		t.Errorf("grace step begin: %+v, in grace %v", b, s.InGraceStep("t1"))
	}
	e, err = s.EndStep("t1", 20, FinishToolCalls, c.now())
	mustNoErr(t, err)
	if !e.StopTurn || e.GraceStep || s.InGraceStep("t1") {
		t.Errorf("grace step end: %+v, want stop and no second grace", e)
	}
	if s.Goal.TokensUsed != 140 {
		t.Errorf("tokens: got %d, want 140", s.Goal.TokensUsed)
	}
	end := endTurn(t, s, "t1", OutcomeCompleted, c.now())
	if end.Continuation != NoContinuation || end.Changes != nil || s.Status() != Blocked {
		t.Errorf("turn end: %+v", end)
	}
	r := GraceStepRefusal("Creating a goal")
	if !r.IsError || r.ErrorCode != "" || !strings.Contains(r.Output, "budget") {
		t.Errorf("GraceStepRefusal: %+v", r)
	}
}

func TestTokenBudgetStopWithoutGrace(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	s.Goal.Limits.TokenBudget = i64(100)
	beginTurn(t, s, "t1", c.now())
	_, e := step(t, s, "t1", 100, FinishStop, c.now())
	if !e.StopTurn || e.GraceStep || s.InGraceStep("t1") || s.Status() != Blocked {
		t.Errorf("got %+v status %s, want stop without grace", e, s.Status())
	}
}

// TestWallClockMidTurn: the timer blocks the goal during a turn; the next
// step end then applies the mid-turn budget stop.
func TestWallClockMidTurn(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	s.Goal.Limits.WallClockBudgetMs = i64(60_000)
	beginTurn(t, s, "t1", c.now())
	mustNoErr(t, firstErr(s.BeginStep("t1", c.now())))
	if got := kinds(s.CheckWallClock(c.advance(time.Minute))); !slices.Equal(got, []string{"budgetWarning/runtime/active", "block/runtime/blocked"}) {
		t.Fatalf("CheckWallClock: %v", got)
	}
	e, err := s.EndStep("t1", 1, FinishToolCalls, c.now())
	mustNoErr(t, err)
	if !e.GraceStep || e.Changes == nil {
		t.Errorf("got %+v, want a grace step and a progress change", e)
	}
}

// TestBudgetReachedAtTurnBegin: the goal is blocked and the turn runs as an
// ordinary, uncounted turn.
func TestBudgetReachedAtTurnBegin(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	s.Goal.Limits.TokenBudget = i64(100)
	s.Goal.TokensUsed = 100
	b := beginTurn(t, s, "t1", c.now())
	want := []Change{{Kind: ChangeBlock, Status: Blocked, Reason: "budget reached: token budget of 100 tokens", Actor: Runtime}}
	if diff := cmp.Diff(want, b.Changes, ignoreGoal); diff != "" || b.GoalDriven {
		t.Errorf("driven %v, changes (-want +got):\n%s", b.GoalDriven, diff)
	}
	_, e := step(t, s, "t1", 50, FinishToolCalls, c.now())
	if e.StopTurn || e.GraceStep || s.Goal.TokensUsed != 100 || s.Goal.TurnsUsed != 0 {
		t.Errorf("an ordinary turn was counted or stopped: %+v, %d tokens, %d turns", e, s.Goal.TokensUsed, s.Goal.TurnsUsed)
	}
}

// TestContinuationOutstanding: only one continuation may be outstanding;
// the next main-agent turn begin clears the marker.
func TestContinuationOutstanding(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	beginTurn(t, s, "t1", c.now())
	beginTurn(t, s, "t2", c.now())
	if e := endTurn(t, s, "t1", OutcomeCompleted, c.now()); e.Continuation != ContinuationNormal {
		t.Fatalf("first end: %q", e.Continuation)
	}
	if e := endTurn(t, s, "t2", OutcomeCompleted, c.now()); e.Continuation != NoContinuation {
		t.Fatalf("second end while one is outstanding: %q", e.Continuation)
	}
	if _, err := s.BeginTurn("sub", OriginUser, "helper", c.now()); err != nil || !s.ContinuationOutstanding {
		t.Fatalf("a subagent turn cleared the marker")
	}
	b, err := s.BeginTurn("t3", OriginContinuation, "", c.now())
	mustNoErr(t, err)
	if !b.GoalDriven || s.ContinuationOutstanding {
		t.Fatalf("continuation turn: driven %v outstanding %v", b.GoalDriven, s.ContinuationOutstanding)
	}
	if e := endTurn(t, s, "t3", OutcomeStepLimit, c.now()); e.Continuation != ContinuationStepLimit {
		t.Errorf("after stepLimit: %q", e.Continuation)
	}
}

// TestStarterTurn: a turn in which the goal became active counts +1 at its
// end if it ended normally, and gets a continuation.
func TestStarterTurn(t *testing.T) {
	tests := []struct {
		name         string
		activate     func(t *testing.T, s *State, now Instant)
		outcome      Outcome
		wantTurns    int64
		wantTokens   int64
		wantStatus   Status
		wantContinue Continuation
	}{
		{"model CreateGoal, completed", func(t *testing.T, s *State, now Instant) {
			res, _ := s.callTool(t, modelCall{Name: CreateGoalTool, Input: raw(`{"objective":"ship it"}`), TurnID: "t1"}, now)
			if res.IsError {
				t.Fatalf("CreateGoal: %+v", res)
			}
		}, OutcomeCompleted, 1, 30, Active, ContinuationNormal},
		{"user create, completed", func(t *testing.T, s *State, now Instant) {
			mustNoErr(t, firstErr(s.Create(CreateParams{Objective: "ship it"}, now)))
		}, OutcomeCompleted, 1, 30, Active, ContinuationNormal},
		{"model CreateGoal, stepLimit", func(t *testing.T, s *State, now Instant) {
			s.callTool(t, modelCall{Name: CreateGoalTool, Input: raw(`{"objective":"ship it"}`), TurnID: "t1"}, now)
		}, OutcomeStepLimit, 1, 30, Active, ContinuationStepLimit},
		{"model CreateGoal, cancelled", func(t *testing.T, s *State, now Instant) {
			s.callTool(t, modelCall{Name: CreateGoalTool, Input: raw(`{"objective":"ship it"}`), TurnID: "t1"}, now)
		}, OutcomeCancelled, 0, 30, Paused, NoContinuation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fixedIDs(t)
			c := newClock()
			s := &State{}
			if b := beginTurn(t, s, "t1", c.now()); b.GoalDriven {
				t.Fatalf("a turn without a goal is goal-driven")
			}
			step(t, s, "t1", 100, FinishToolCalls, c.now()) // before the goal: not counted
			mustNoErr(t, firstErr(s.BeginStep("t1", c.now())))
			tt.activate(t, s, c.now())
			mustNoErr(t, firstErr(s.EndStep("t1", 10, FinishToolCalls, c.now())))
			step(t, s, "t1", 20, FinishStop, c.now())
			if s.Goal.TurnsUsed != 0 {
				t.Fatalf("a starter turn counted before its end")
			}
			end := endTurn(t, s, "t1", tt.outcome, c.now())
			if s.Goal.TurnsUsed != tt.wantTurns || s.Goal.TokensUsed != tt.wantTokens || s.Status() != tt.wantStatus || end.Continuation != tt.wantContinue {
				t.Errorf("got turns %d tokens %d %s %q, want %d %d %s %q", s.Goal.TurnsUsed, s.Goal.TokensUsed, s.Status(), end.Continuation,
					tt.wantTurns, tt.wantTokens, tt.wantStatus, tt.wantContinue)
			}
		})
	}
}

// TestResumeDuringTurn: a goal resumed during a turn that was not driven by
// it makes that turn a starter; a turn already driven by it is not counted
// twice.
func TestResumeDuringTurn(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	mustNoErr(t, firstErr(s.Pause("", c.now())))
	beginTurn(t, s, "t1", c.now())
	step(t, s, "t1", 5, FinishToolCalls, c.now())
	mustNoErr(t, firstErr(s.Resume(c.now())))
	step(t, s, "t1", 5, FinishStop, c.now())
	endTurn(t, s, "t1", OutcomeCompleted, c.now())
	if s.Goal.TurnsUsed != 1 || s.Goal.TokensUsed != 5 {
		t.Errorf("starter by resume: turns %d tokens %d, want 1 and 5", s.Goal.TurnsUsed, s.Goal.TokensUsed)
	}

	beginTurn(t, s, "t2", c.now())
	step(t, s, "t2", 5, FinishToolCalls, c.now())
	mustNoErr(t, firstErr(s.Pause("", c.now())))
	mustNoErr(t, firstErr(s.Resume(c.now())))
	endTurn(t, s, "t2", OutcomeCompleted, c.now())
	if s.Goal.TurnsUsed != 2 {
		t.Errorf("driven turn paused and resumed: turns %d, want 2", s.Goal.TurnsUsed)
	}
}

// TestAbnormalEnds follows the docs/runtime.md §2.6 table.
func TestAbnormalEnds(t *testing.T) {
	tests := []struct {
		name     string
		outcome  Outcome
		kind     string
		msg      string
		want     []Change
		wantCont Continuation
	}{
		{"cancelled", OutcomeCancelled, "", "", []Change{{Kind: ChangePause, Status: Paused, Reason: "paused after the user interrupted the turn", Actor: User}}, NoContinuation},
		{"blocked by a hook", OutcomeBlocked, "", "", []Change{{Kind: ChangeBlock, Status: Blocked, Reason: "blocked by a host hook that refused the prompt", Actor: Runtime}}, NoContinuation},
		{"rate limit", OutcomeFailed, "rate_limit", "429  too\nmany", []Change{{Kind: ChangePause, Status: Paused, Reason: "paused after a rate-limit error: 429 too many", Actor: Runtime}}, NoContinuation},
		{"connection", OutcomeFailed, "connection", "", []Change{{Kind: ChangePause, Status: Paused, Reason: "paused after a connection error", Actor: Runtime}}, NoContinuation},
		{"auth", OutcomeFailed, "auth", "", []Change{{Kind: ChangePause, Status: Paused, Reason: "paused after an authentication error", Actor: Runtime}}, NoContinuation},
		{"safety", OutcomeFailed, "safety", "", []Change{{Kind: ChangePause, Status: Paused, Reason: "paused after a safety refusal", Actor: Runtime}}, NoContinuation},
		{"api", OutcomeFailed, "api", "bad", []Change{{Kind: ChangePause, Status: Paused, Reason: "paused after an API error: bad", Actor: Runtime}}, NoContinuation},
		{"config", OutcomeFailed, "config", "", []Change{{Kind: ChangePause, Status: Paused, Reason: "paused after a configuration error", Actor: Runtime}}, NoContinuation},
		{"other", OutcomeFailed, "other", "", []Change{{Kind: ChangePause, Status: Paused, Reason: "paused after an error", Actor: Runtime}}, NoContinuation},
		{"unknown kind counts as other", OutcomeFailed, "weird", "", []Change{{Kind: ChangePause, Status: Paused, Reason: "paused after an error", Actor: Runtime}}, NoContinuation},
		{"stepLimit stays active", OutcomeStepLimit, "", "", nil, ContinuationStepLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			s := withGoal(t, c)
			beginTurn(t, s, "t1", c.now())
			step(t, s, "t1", 1, FinishStop, c.now())
			end, err := s.EndTurn("t1", tt.outcome, tt.kind, tt.msg, 0, c.now())
			mustNoErr(t, err)
			if diff := cmp.Diff(tt.want, end.Changes, ignoreGoal); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			if end.Continuation != tt.wantCont {
				t.Errorf("continuation: got %q, want %q", end.Continuation, tt.wantCont)
			}
		})
	}
}

// TestAgentLimitCountsNoTurn: a turn the agent ended at a limit of its own
// before calling the model (failed, kind agent_limit) takes back the count
// its first step made, or counts nothing when it had no step, and pauses
// the goal with the message as the reason (docs/runtime.md §2.6).
func TestAgentLimitCountsNoTurn(t *testing.T) {
	for _, steps := range []int{0, 1} {
		c := newClock()
		s := withGoal(t, c)
		beginTurn(t, s, "t1", c.now())
		step(t, s, "t1", 4, FinishStop, c.now())
		endTurn(t, s, "t1", OutcomeCompleted, c.now())
		beginTurn(t, s, "t2", c.now())
		if steps == 1 {
			if _, err := s.BeginStep("t2", c.now()); err != nil {
				t.Fatal(err)
			}
			if s.Goal.TurnsUsed != 2 {
				t.Fatalf("the first step counted %d turns, want 2", s.Goal.TurnsUsed)
			}
		}
		end, err := s.EndTurn("t2", OutcomeFailed, KindAgentLimit, "Claude Code stopped after 8 continuations in a row: its CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", 0, c.now())
		mustNoErr(t, err)
		if s.Goal.TurnsUsed != 1 || s.Goal.TokensUsed != 4 {
			t.Errorf("%d steps: turns %d tokens %d, want 1 and 4", steps, s.Goal.TurnsUsed, s.Goal.TokensUsed)
		}
		want := "paused: Claude Code stopped after 8 continuations in a row: its CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"
		if s.Status() != Paused || s.Goal.TerminalReason != want || end.Continuation != NoContinuation {
			t.Errorf("%d steps: goal %s %q, continuation %q; want paused %q and none", steps, s.Status(), s.Goal.TerminalReason, end.Continuation, want)
		}
		if k := kinds(end.Changes); len(k) != 1 || k[0] != "pause/runtime/paused" || end.Changes[0].Goal.TurnsUsed != 1 {
			t.Errorf("%d steps: changes %v, want the pause, its goal at 1 turn", steps, k)
		}
	}
}

// TestAbnormalEndNotTarget: abnormal ends touch only an active goal that is
// the turn's target.
func TestAbnormalEndNotTarget(t *testing.T) {
	t.Run("subagent turn", func(t *testing.T) {
		c := newClock()
		s := withGoal(t, c)
		_, err := s.BeginTurn("sub", OriginUser, "helper", c.now())
		mustNoErr(t, err)
		if end := endTurn(t, s, "sub", OutcomeCancelled, c.now()); end.Changes != nil || s.Status() != Active {
			t.Errorf("a subagent turn changed the goal: %v", kinds(end.Changes))
		}
	})
	t.Run("goal paused by the user during the turn", func(t *testing.T) {
		c := newClock()
		s := withGoal(t, c)
		beginTurn(t, s, "t1", c.now())
		step(t, s, "t1", 1, FinishStop, c.now())
		mustNoErr(t, firstErr(s.Pause("lunch", c.now())))
		if end := endTurn(t, s, "t1", OutcomeFailed, c.now()); end.Changes != nil || s.Goal.TerminalReason != "lunch" {
			t.Errorf("a paused goal changed: %v %q", kinds(end.Changes), s.Goal.TerminalReason)
		}
	})
	t.Run("goal replaced by another turn's model", func(t *testing.T) {
		c := newClock()
		s := withGoal(t, c)
		beginTurn(t, s, "t1", c.now())
		s.Turns[0].DrivenGoalID = "goal-0" // driven by a goal that is gone
		if end := endTurn(t, s, "t1", OutcomeCancelled, c.now()); end.Changes != nil || s.Status() != Active {
			t.Errorf("another goal's turn changed the goal: %v", kinds(end.Changes))
		}
	})
}

func TestAbandonTurn(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	beginTurn(t, s, "t1", c.now())
	step(t, s, "t1", 1, FinishToolCalls, c.now())
	got := s.AbandonTurn("t1", c.now())
	want := []Change{{Kind: ChangePause, Status: Paused, Reason: "paused because the connection that ran the turn closed before the turn ended", Actor: Runtime}}
	if diff := cmp.Diff(want, got, ignoreGoal); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if got := s.AbandonTurn("t1", c.now()); got != nil {
		t.Errorf("abandoning twice: %v", got)
	}
	if got := s.AbandonTurn("nope", c.now()); got != nil {
		t.Errorf("abandoning an unknown turn: %v", got)
	}
	if _, err := s.EndTurn("t1", OutcomeCompleted, "", "", 0, c.now()); protocol.ErrorCode(err) != protocol.CodeTurnEnded {
		t.Errorf("a late end of an abandoned turn: got %v, want turn.ended", err)
	}
}

// TestReminderAndNotices: the per-turn goal reminder is due at the first
// step of each main-agent turn for an active, paused or blocked goal; the
// cancel notice at the next main-agent step, once.
func TestReminderAndNotices(t *testing.T) {
	tests := []struct {
		status Status // "" = no goal
		want   bool
	}{
		{Active, true}, {Paused, true}, {Blocked, true}, {Complete, false}, {"", false},
	}
	for _, tt := range tests {
		t.Run("status "+string(tt.status), func(t *testing.T) {
			c := newClock()
			s := &State{}
			if tt.status != "" {
				s = withGoal(t, c)
				s.Goal.Status = tt.status
			}
			beginTurn(t, s, "t1", c.now())
			b, _ := step(t, s, "t1", 0, FinishToolCalls, c.now())
			if !b.FirstStep || b.GoalReminderDue != tt.want {
				t.Errorf("first step: %+v, want reminder %v", b, tt.want)
			}
			b, _ = step(t, s, "t1", 0, FinishStop, c.now())
			if b.FirstStep || b.GoalReminderDue {
				t.Errorf("second step: %+v, want no reminder", b)
			}
		})
	}
	t.Run("subagent", func(t *testing.T) {
		c := newClock()
		s := withGoal(t, c)
		s.CancelNoticePending = true
		_, err := s.BeginTurn("sub", OriginUser, "helper", c.now())
		mustNoErr(t, err)
		b, _ := step(t, s, "sub", 5, FinishStop, c.now())
		if b.GoalReminderDue || b.CancelNoticeDue || !s.CancelNoticePending || s.Goal.TokensUsed != 0 {
			t.Errorf("a subagent step: %+v, tokens %d", b, s.Goal.TokensUsed)
		}
	})
	t.Run("cancel notice once", func(t *testing.T) {
		c := newClock()
		s := withGoal(t, c)
		beginTurn(t, s, "t1", c.now())
		step(t, s, "t1", 0, FinishToolCalls, c.now())
		mustNoErr(t, firstErr(s.Cancel(c.now())))
		b, _ := step(t, s, "t1", 0, FinishToolCalls, c.now())
		if !b.CancelNoticeDue {
			t.Errorf("the step after a cancel has no notice")
		}
		b, _ = step(t, s, "t1", 0, FinishToolCalls, c.now())
		if b.CancelNoticeDue {
			t.Errorf("the notice came twice")
		}
	})
	t.Run("create drops a pending cancel notice", func(t *testing.T) {
		c := newClock()
		s := withGoal(t, c)
		mustNoErr(t, firstErr(s.Cancel(c.now())))
		mustNoErr(t, firstErr(s.Create(CreateParams{Objective: "next"}, c.now())))
		if s.CancelNoticePending {
			t.Errorf("the old goal's cancel notice survives a new goal")
		}
	})
}

// TestTaskFileFlag: changedSinceLastTurn is shown once, in the reminder of
// the next goal-driven turn, then cleared (docs/runtime.md §4).
func TestTaskFileFlag(t *testing.T) {
	c := newClock()
	fixedIDs(t)
	s := &State{}
	mustNoErr(t, firstErr(s.Create(CreateParams{Objective: "x", TaskFile: &TaskFileInfo{Path: "t.md", Exists: true, SHA256: "a"}}, c.now())))
	s.UpdateTaskFile(TaskFileInfo{Path: "t.md", Exists: true, SHA256: "b"}, c.now())
	beginTurn(t, s, "t1", c.now())
	b, err := s.BeginStep("t1", c.now())
	mustNoErr(t, err)
	if !b.GoalReminderDue || !b.Goal.TaskFile.ChangedSinceLastTurn {
		t.Errorf("the reminder does not see the change: %+v", b.Goal.TaskFile)
	}
	if s.Goal.TaskFile.ChangedSinceLastTurn {
		t.Errorf("the flag was not cleared")
	}
	retry, err := s.BeginStep("t1", c.now())
	mustNoErr(t, err)
	if !retry.Goal.TaskFile.ChangedSinceLastTurn || retry.Changes != nil {
		t.Errorf("a retried step begin lost the change or changed again: %+v", retry)
	}
}

// TestIdempotentRetries: retried lifecycle calls count once and answer as
// the first call did.
func TestIdempotentRetries(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	s.CancelNoticePending = true
	b1 := beginTurn(t, s, "t1", c.now())
	b2 := beginTurn(t, s, "t1", c.now())
	if b1.GoalDriven != b2.GoalDriven || b2.Changes != nil || len(s.Turns) != 1 {
		t.Errorf("turn begin retry: %+v vs %+v", b1, b2)
	}
	sb1, err := s.BeginStep("t1", c.now())
	mustNoErr(t, err)
	sb2, err := s.BeginStep("t1", c.now())
	mustNoErr(t, err)
	if diff := cmp.Diff(sb1, sb2, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Changes" }, cmp.Ignore())); diff != "" {
		t.Errorf("step begin retry (-first +retry):\n%s", diff)
	}
	if !sb2.CancelNoticeDue || s.Goal.TurnsUsed != 1 || sb2.Changes != nil {
		t.Errorf("step begin retry: %+v, turns %d", sb2, s.Goal.TurnsUsed)
	}
	s.Goal.Limits.TokenBudget = i64(10)
	se1, err := s.EndStep("t1", 10, FinishToolCalls, c.now())
	mustNoErr(t, err)
	se2, err := s.EndStep("t1", 10, FinishToolCalls, c.now())
	mustNoErr(t, err)
	if !se1.GraceStep || !se2.GraceStep || se2.Changes != nil || s.Goal.TokensUsed != 10 {
		t.Errorf("step end retry: %+v / %+v, tokens %d", se1, se2, s.Goal.TokensUsed)
	}
	s.Goal.Limits.TokenBudget = nil
	mustNoErr(t, firstErr(s.Resume(c.now())))
	e1 := endTurn(t, s, "t1", OutcomeCompleted, c.now())
	e2 := endTurn(t, s, "t1", OutcomeCompleted, c.now())
	if e1.Continuation != ContinuationNormal || e2.Continuation != ContinuationNormal || e2.Changes != nil || s.Goal.TurnsUsed != 1 {
		t.Errorf("turn end retry: %+v / %+v, turns %d", e1, e2, s.Goal.TurnsUsed)
	}
	if _, err := s.BeginStep("t1", c.now()); codeOf(err) != CodeArgsInvalid {
		t.Errorf("a step after the turn ended: %v", err)
	}
}

// TestEndedTurnLateCalls: on an ended turn an exact retry of its last step
// end answers as before, while any other step end (other tokens, other
// finish reason, a step left open at turn end) and a turn begin with its id
// are refused with args.invalid, and nothing is counted.
func TestEndedTurnLateCalls(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	beginTurn(t, s, "t1", c.now())
	_, se := step(t, s, "t1", 7, FinishStop, c.now())
	endTurn(t, s, "t1", OutcomeCompleted, c.now())
	tokens, turns := s.Goal.TokensUsed, s.Goal.TurnsUsed

	retry, err := s.EndStep("t1", 7, FinishStop, c.now())
	mustNoErr(t, err)
	if retry.StopTurn != se.StopTurn || retry.GraceStep != se.GraceStep || retry.Changes != nil {
		t.Errorf("retried step end of an ended turn: %+v, first %+v", retry, se)
	}
	for _, late := range []struct {
		tokens int64
		finish FinishReason
	}{{8, FinishStop}, {7, FinishToolCalls}, {0, FinishStop}} {
		_, err := s.EndStep("t1", late.tokens, late.finish, c.now())
		if codeOf(err) != CodeArgsInvalid || !strings.Contains(err.Error(), `turn "t1" has already ended`) {
			t.Errorf("late step end %+v on an ended turn: %v, want args.invalid saying the turn ended", late, err)
		}
	}
	_, err = s.BeginTurn("t1", OriginUser, "", c.now())
	if codeOf(err) != CodeArgsInvalid || !strings.Contains(err.Error(), `turn "t1" has already ended; use a new turnId`) {
		t.Errorf("turn begin with the id of an ended turn: %v", err)
	}
	if s.Goal.TokensUsed != tokens || s.Goal.TurnsUsed != turns {
		t.Errorf("late calls on t1 counted: tokens %d→%d, turns %d→%d", tokens, s.Goal.TokensUsed, turns, s.Goal.TurnsUsed)
	}

	// A turn ended while its second step was open: a step end after it is
	// late, not a retry of the first step's end.
	beginTurn(t, s, "t2", c.now())
	step(t, s, "t2", 3, FinishToolCalls, c.now())
	mustNoErr(t, firstErr(s.BeginStep("t2", c.now())))
	endTurn(t, s, "t2", OutcomeCompleted, c.now())
	tokens, turns = s.Goal.TokensUsed, s.Goal.TurnsUsed
	if _, err := s.EndStep("t2", 3, FinishToolCalls, c.now()); codeOf(err) != CodeArgsInvalid {
		t.Errorf("step end after a turn ended with its step open: %v, want args.invalid", err)
	}
	if s.Goal.TokensUsed != tokens || s.Goal.TurnsUsed != turns {
		t.Errorf("refused late calls counted: tokens %d→%d, turns %d→%d", tokens, s.Goal.TokensUsed, turns, s.Goal.TurnsUsed)
	}
}

func TestLifecycleRefusals(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	beginTurn(t, s, "t1", c.now())
	tests := []struct {
		name string
		err  error
	}{
		{"begin with empty id", firstErr(s.BeginTurn("", OriginUser, "", c.now()))},
		{"begin with bad origin", firstErr(s.BeginTurn("t2", "robot", "", c.now()))},
		{"begin with an id over 256 bytes", firstErr(s.BeginTurn(strings.Repeat("é", 129), OriginUser, "", c.now()))},
		{"step begin of an unknown turn", firstErr(s.BeginStep("nope", c.now()))},
		{"step end of an unknown turn", firstErr(s.EndStep("nope", 1, FinishStop, c.now()))},
		{"step end before any step", firstErr(s.EndStep("t1", 1, FinishStop, c.now()))},
		{"step end with a bad finish reason", firstErr(s.EndStep("t1", 1, "length", c.now()))},
		{"step end with negative tokens", firstErr(s.EndStep("t1", -1, FinishStop, c.now()))},
		{"turn end of an unknown turn", firstErr(s.EndTurn("nope", OutcomeCompleted, "", "", 0, c.now()))},
		{"turn end with a bad outcome", firstErr(s.EndTurn("t1", "done", "", "", 0, c.now()))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := codeOf(tt.err); got != CodeArgsInvalid {
				t.Errorf("got %q, want %s", got, CodeArgsInvalid)
			}
		})
	}
	if n := len(s.Turns); n != 1 {
		t.Errorf("%d turns recorded after the refusals, want 1", n)
	}
}

// TestTurnIDLimit: a turnId of 256 bytes is a turn; a longer one is refused
// naming the limit and never echoed back.
func TestTurnIDLimit(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	id := strings.Repeat("x", MaxTurnIDBytes)
	beginTurn(t, s, id, c.now())
	if _, err := s.BeginStep(id, c.now()); err != nil {
		t.Fatalf("BeginStep with a 256-byte turnId: %v", err)
	}
	long := id + "y"
	_, err := s.BeginTurn(long, OriginUser, "", c.now())
	if err == nil || err.Error() != "turnId is 257 bytes long; at most 256 are allowed" {
		t.Errorf("BeginTurn with 257 bytes: %v", err)
	}
	_, err = s.EndTurn(long, OutcomeCompleted, "", "", 0, c.now())
	if err == nil || strings.Contains(err.Error(), long) || !strings.Contains(err.Error(), "257 bytes") {
		t.Errorf("EndTurn of a 257-byte turnId: %v", err)
	}
}

func TestTurnsBounded(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	for i := range 40 {
		id := string(rune('a'+i%26)) + string(rune('0'+i/26))
		beginTurn(t, s, id, c.now())
		endTurn(t, s, id, OutcomeCompleted, c.now())
	}
	for i := range 20 {
		beginTurn(t, s, "live"+string(rune('a'+i)), c.now())
	}
	ended, live := 0, 0
	for _, tr := range s.Turns {
		if tr.Ended {
			ended++
		} else {
			live++
		}
	}
	if ended != MaxEndedTurns || live != MaxLiveTurns {
		t.Errorf("kept %d ended and %d live turns, want %d and %d", ended, live, MaxEndedTurns, MaxLiveTurns)
	}
	if s.turn("livet") == nil || s.turn("livea") != nil {
		t.Errorf("pruning did not keep the newest live turns")
	}
}

// TestTurnBudgetSetDuringLastTurn: setting a turn budget equal to the turns
// used while that turn runs lets the turn finish; the goal is blocked at its
// end.
func TestTurnBudgetSetDuringLastTurn(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	beginTurn(t, s, "t1", c.now())
	mustNoErr(t, firstErr(s.BeginStep("t1", c.now())))
	res, _ := s.callTool(t, modelCall{Name: SetGoalBudgetTool, Input: raw(`{"value":1,"unit":"turns"}`), TurnID: "t1"}, c.now())
	if res.StopTurn || s.Status() != Active {
		t.Fatalf("turn 1 of 1 was stopped: %+v", res)
	}
	mustNoErr(t, firstErr(s.EndStep("t1", 1, FinishStop, c.now())))
	endTurn(t, s, "t1", OutcomeCompleted, c.now())
	if s.Status() != Blocked {
		t.Errorf("status after the last turn: %s", s.Status())
	}
}

// TestOpenTurn: the session's open turn of an agent is its newest turn not
// ended; ended turns and other agents' turns are not it.
func TestOpenTurn(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	if got := s.OpenTurn(""); got != "" {
		t.Fatalf("OpenTurn with no turn = %q, want none", got)
	}
	beginTurn(t, s, "t1", c.now())
	if _, err := s.BeginTurn("sub", OriginUser, "helper", c.now()); err != nil {
		t.Fatal(err)
	}
	beginTurn(t, s, "t2", c.now())
	for agent, want := range map[string]string{"": "t2", MainAgent: "t2", "helper": "sub", "other": ""} {
		if got := s.OpenTurn(agent); got != want {
			t.Errorf("OpenTurn(%q) = %q, want %q", agent, got, want)
		}
	}
	step(t, s, "t2", 1, FinishStop, c.now())
	endTurn(t, s, "t2", OutcomeCompleted, c.now())
	if got := s.OpenTurn(MainAgent); got != "t1" {
		t.Errorf("after t2 ended: OpenTurn = %q, want t1", got)
	}
}
