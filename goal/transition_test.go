package goal

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/commands/protocol"
	"github.com/google/go-cmp/cmp"
)

func TestCreateLimits(t *testing.T) {
	long := strings.Repeat("é", MaxObjectiveChars)
	tests := []struct {
		name          string
		objective     string
		criterion     string
		wantObjective string
		wantCriterion string
		wantCode      string
	}{
		{"trimmed", "  ship it \n", "  tests pass ", "ship it", "tests pass", ""},
		{"empty", "   \t", "", "", "", CodeObjectiveEmpty},
		{"exactly 4000 characters", " " + long + " ", "", long, "", ""},
		{"4001 characters", long + "x", "", "", "", CodeObjectiveTooLong},
		{"blank criterion is none", "a", "   ", "a", "", ""},
		{"long criterion cut to 4000", "a", strings.Repeat("c", 4100), "a", strings.Repeat("c", 4000), ""},
		{"lines and tabs kept", "step one\n\tstep two\r\nthree\u2028four", "a\nb", "step one\n\tstep two\r\nthree\u2028four", "a\nb", ""},
		{"escape in the objective", "a\x1b[2Jb", "", "", "", CodeArgsInvalid},
		{"bell in the objective", "a\ab", "", "", "", CodeArgsInvalid},
		{"NUL in the objective", "a\x00b", "", "", "", CodeArgsInvalid},
		{"C1 control in the objective", "a\u009bb", "", "", "", CodeArgsInvalid},
		{"escape in the criterion", "a", "done\x1b]0;x\a", "", "", CodeArgsInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fixedIDs(t)
			c := newClock()
			s := &State{}
			changes, err := s.Create(CreateParams{Objective: tt.objective, CompletionCriterion: tt.criterion}, c.now())
			if got := codeOf(err); got != tt.wantCode {
				t.Fatalf("error code: got %q, want %q", got, tt.wantCode)
			}
			if tt.wantCode != "" {
				if s.Goal != nil || changes != nil {
					t.Errorf("a refused create changed the state: %+v", s.Goal)
				}
				return
			}
			if s.Goal.Objective != tt.wantObjective || s.Goal.CompletionCriterion != tt.wantCriterion {
				t.Errorf("got %q / %q, want %q / %q", s.Goal.Objective, s.Goal.CompletionCriterion, tt.wantObjective, tt.wantCriterion)
			}
		})
	}
}

// TestControlCharacterNamed: the refusal names the field and the character.
func TestControlCharacterNamed(t *testing.T) {
	_, err := (&State{}).Create(CreateParams{Objective: "a\x1bb"}, newClock().now())
	if err == nil || !strings.Contains(err.Error(), "the objective has the control character U+001B") {
		t.Errorf("objective refusal: %v", err)
	}
	_, err = (&State{}).Create(CreateParams{Objective: "a", CompletionCriterion: "b\x00"}, newClock().now())
	if err == nil || !strings.Contains(err.Error(), "completionCriterion has the control character U+0000") {
		t.Errorf("criterion refusal: %v", err)
	}
}

func TestTooLongAdvice(t *testing.T) {
	_, err := (&State{}).Create(CreateParams{Objective: strings.Repeat("x", 4001)}, newClock().now())
	if !strings.Contains(err.Error(), "file") || !strings.Contains(err.Error(), "path") {
		t.Errorf("the refusal does not advise a file and its path: %q", err)
	}
}

func TestCreateSnapshot(t *testing.T) {
	fixedIDs(t)
	c := newClock()
	s := &State{}
	tf := &TaskFileInfo{Path: "docs/task.md", Exists: true, SHA256: "ab", Size: 3}
	changes, err := s.Create(CreateParams{Objective: "ship it", CompletionCriterion: "tests pass", TaskFile: tf}, c.now())
	mustNoErr(t, err)
	tf.Path = "changed later by the caller"
	want := &Snapshot{
		GoalID:              "goal-1",
		Objective:           "ship it",
		CompletionCriterion: "tests pass",
		Status:              Active,
		WallClockMs:         90_000,
		TaskFile:            &TaskFileInfo{Path: "docs/task.md", Exists: true, SHA256: "ab", Size: 3},
		CreatedAt:           c.wall,
		UpdatedAt:           c.wall,
		LastActor:           User,
		RequireTodos:        true,
	}
	got := s.Snapshot(c.advance(90 * time.Second))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"create/user/active"}, kinds(changes)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
}

func TestCreateOverExisting(t *testing.T) {
	tests := []struct {
		status      Status
		replace     bool
		wantCode    string
		wantChanges []string
	}{
		{Active, false, CodeAlreadyExists, nil},
		{Paused, false, CodeAlreadyExists, nil},
		{Blocked, false, CodeAlreadyExists, nil},
		{Complete, false, "", []string{"replace/system/", "create/user/active"}},
		{Active, true, "", []string{"replace/system/", "create/user/active"}},
		{Blocked, true, "", []string{"replace/system/", "create/user/active"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.status)+map[bool]string{true: " replace"}[tt.replace], func(t *testing.T) {
			c := newClock()
			s := withGoal(t, c)
			s.Goal.Status = tt.status
			changes, err := s.Create(CreateParams{Objective: "next", Replace: tt.replace}, c.advance(time.Second))
			if got := codeOf(err); got != tt.wantCode {
				t.Fatalf("error code: got %q, want %q", got, tt.wantCode)
			}
			if diff := cmp.Diff(tt.wantChanges, kinds(changes)); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			if tt.wantCode == "" {
				if s.Goal.ID != "goal-2" || s.Goal.Objective != "next" {
					t.Errorf("current goal: got %s %q, want goal-2 \"next\"", s.Goal.ID, s.Goal.Objective)
				}
				if old := changes[0].Goal; old == nil || old.GoalID != "goal-1" || old.Objective != "ship it" {
					t.Errorf("the replace change does not carry the old goal: %+v", old)
				}
			}
		})
	}
}

// TestTransitions covers every user transition, allowed and refused, with
// actor, reason and error code (docs/runtime.md §2.3).
func TestTransitions(t *testing.T) {
	type op func(s *State, now Instant) ([]Change, error)
	pause := func(s *State, now Instant) ([]Change, error) { return s.Pause("", now) }
	resume := func(s *State, now Instant) ([]Change, error) { return s.Resume(now) }
	cancel := func(s *State, now Instant) ([]Change, error) { return s.Cancel(now) }
	tests := []struct {
		name       string
		from       Status // "" = no goal
		op         op
		wantCode   string
		wantStatus Status // "" = no goal after
		want       []Change
	}{
		{"pause active", Active, pause, "", Paused, []Change{{Kind: ChangePause, Status: Paused, Reason: "paused by the user", Actor: User}}},
		{"pause paused is a no-op", Paused, pause, "", Paused, nil},
		{"pause blocked", Blocked, pause, CodeStatusInvalid, Blocked, nil},
		{"pause complete", Complete, pause, CodeStatusInvalid, Complete, nil},
		{"pause none", "", pause, CodeNotFound, "", nil},
		{"resume paused", Paused, resume, "", Active, []Change{{Kind: ChangeResume, Status: Active, Reason: "resumed by the user", Actor: User}}},
		{"resume blocked", Blocked, resume, "", Active, []Change{{Kind: ChangeResume, Status: Active, Reason: "resumed by the user", Actor: User}}},
		{"resume active is a no-op", Active, resume, "", Active, nil},
		{"resume complete", Complete, resume, CodeNotResumable, Complete, nil},
		{"resume none", "", resume, CodeNotFound, "", nil},
		{"cancel active", Active, cancel, "", "", []Change{{Kind: ChangeCancel, Reason: "cancelled by the user", Actor: User}}},
		{"cancel paused", Paused, cancel, "", "", []Change{{Kind: ChangeCancel, Reason: "cancelled by the user", Actor: User}}},
		{"cancel blocked", Blocked, cancel, "", "", []Change{{Kind: ChangeCancel, Reason: "cancelled by the user", Actor: User}}},
		{"cancel complete", Complete, cancel, "", "", []Change{{Kind: ChangeCancel, Reason: "cancelled by the user", Actor: User}}},
		{"cancel none", "", cancel, CodeNotFound, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			s := &State{}
			if tt.from != "" {
				s = withGoal(t, c)
				s.Goal.Status = tt.from
				if tt.from != Active {
					s.Goal.TerminalReason = "earlier reason"
					s.Goal.unstamp()
				}
			}
			changes, err := tt.op(s, c.advance(time.Minute))
			if got := codeOf(err); got != tt.wantCode {
				t.Fatalf("error code: got %q, want %q", got, tt.wantCode)
			}
			if err != nil {
				if msg := err.Error(); msg == "" || strings.HasSuffix(msg, ".") || msg != strings.ToLower(msg[:1])+msg[1:] {
					t.Errorf("error string %q is not lowercase without a final period", msg)
				}
			}
			if diff := cmp.Diff(tt.want, changes, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Goal" }, cmp.Ignore())); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			if got := s.Status(); got != tt.wantStatus {
				t.Errorf("status: got %q, want %q", got, tt.wantStatus)
			}
			if s.Goal != nil && len(changes) > 0 {
				wantReason := tt.want[0].Reason
				if tt.wantStatus == Active {
					wantReason = ""
				}
				if s.Goal.TerminalReason != wantReason || s.Goal.LastActor != User {
					t.Errorf("terminalReason %q lastActor %q, want %q user", s.Goal.TerminalReason, s.Goal.LastActor, wantReason)
				}
			}
		})
	}
}

func TestPauseWithReason(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	changes, err := s.Pause("  lunch  ", c.now())
	mustNoErr(t, err)
	if changes[0].Reason != "lunch" || s.Goal.TerminalReason != "lunch" {
		t.Errorf("got reason %q / %q, want lunch", changes[0].Reason, s.Goal.TerminalReason)
	}
}

// TestPauseReasonLimit: a pause reason of 500 characters is kept; a longer
// one is refused with args.invalid naming the limit, and the goal stays
// active.
func TestPauseReasonLimit(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	_, err := s.Pause(" "+strings.Repeat("é", MaxReasonChars+1)+" ", c.now())
	if codeOf(err) != CodeArgsInvalid || err.Error() != "the reason is 501 characters long; at most 500 are allowed" {
		t.Fatalf("Pause with 501 characters: %v", err)
	}
	if s.Goal.Status != Active {
		t.Fatalf("status %s after a refused pause", s.Goal.Status)
	}
	reason := strings.Repeat("é", MaxReasonChars)
	_, err = s.Pause(" "+reason+" ", c.now())
	mustNoErr(t, err)
	if s.Goal.TerminalReason != reason {
		t.Errorf("reason of %d characters stored as %q", MaxReasonChars, s.Goal.TerminalReason)
	}
}

func TestCancelNotice(t *testing.T) {
	tests := []struct {
		from Status
		want bool
	}{
		{Active, true}, {Paused, true}, {Blocked, true}, {Complete, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.from), func(t *testing.T) {
			c := newClock()
			s := withGoal(t, c)
			s.Goal.Status = tt.from
			_, err := s.Cancel(c.now())
			mustNoErr(t, err)
			if s.CancelNoticePending != tt.want {
				t.Errorf("cancel notice pending: got %v, want %v", s.CancelNoticePending, tt.want)
			}
		})
	}
}

// TestWallClock: the clock runs only while active; paused time is not
// counted; it is settled on every status change (docs/runtime.md §2.4).
func TestWallClock(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	c.advance(10 * time.Second)
	_, err := s.Pause("", c.now())
	mustNoErr(t, err)
	if s.Goal.WallClockMs != 10_000 {
		t.Errorf("settled at pause: got %d, want 10000", s.Goal.WallClockMs)
	}
	if got := s.Snapshot(c.advance(time.Hour)).WallClockMs; got != 10_000 {
		t.Errorf("while paused: got %d, want 10000", got)
	}
	_, err = s.Resume(c.now())
	mustNoErr(t, err)
	if got := s.Snapshot(c.advance(5 * time.Second)).WallClockMs; got != 15_000 {
		t.Errorf("live after resume: got %d, want 15000", got)
	}
}

// TestWallClockIgnoresSystemClockSteps: the wall clock of an active goal
// runs on the monotonic clock: the system clock set back an hour neither
// freezes it nor makes it run backwards, set forward a day it spends
// nothing, and the wall-clock budget fires after exactly its time, with the
// stored times taken from the wall clock as it reads then (docs/runtime.md
// §2.4.1).
func TestWallClockIgnoresSystemClockSteps(t *testing.T) {
	for _, step := range []time.Duration{-time.Hour, 24 * time.Hour} {
		t.Run(step.String(), func(t *testing.T) {
			c := newClock()
			s := withGoal(t, c)
			_, err := s.SetBudget(BudgetUpdate{WallClockMs: LimitUpdate{Set: true, Value: f64(60_000)}}, c.advance(10*time.Second))
			mustNoErr(t, err)
			c.stepWall(step)
			if got := s.Snapshot(c.now()).WallClockMs; got != 10_000 {
				t.Errorf("right after the step: %d ms, want 10000", got)
			}
			beginTurn(t, s, "t1", c.advance(20*time.Second))
			if got := s.Snapshot(c.now()).WallClockMs; got != 30_000 {
				t.Errorf("20 s after the step: %d ms, want 30000", got)
			}
			if left, ok := s.WallClockLeft(c.now()); !ok || left != 30*time.Second {
				t.Errorf("time left: %v %v, want 30s", left, ok)
			}
			c.stepWall(-step) // and back again
			if got := kinds(s.CheckWallClock(c.advance(29 * time.Second))); !slices.Equal(got, []string{"budgetWarning/runtime/active"}) {
				t.Errorf("after 59 s of a 60 s budget: %v, want the 80 %% warning only", got)
			}
			got := s.CheckWallClock(c.advance(time.Second))
			if diff := cmp.Diff([]string{"block/runtime/blocked"}, kinds(got)); diff != "" {
				t.Fatalf("at 60 s (-want +got):\n%s", diff)
			}
			if g := s.Goal; g.WallClockMs != 60_000 || !g.UpdatedAt.Equal(c.wall) {
				t.Errorf("blocked goal: %d ms, updated %v; want 60000 ms, updated %v", g.WallClockMs, g.UpdatedAt, c.wall)
			}
		})
	}
}

// TestWallClockSettledOnEveryCall: every lifecycle call settles the clock
// in whole milliseconds and keeps the remainder running, so that the
// stored value is what the process counted up to its last call, and
// settling often loses nothing.
func TestWallClockSettledOnEveryCall(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	beginTurn(t, s, "t1", c.now())
	for i := 0; i < 1000; i++ {
		step(t, s, "t1", 1, FinishToolCalls, c.advance(1500*time.Microsecond))
	}
	if got := s.Goal.WallClockMs; got != 1500 {
		t.Errorf("settled after 1000 steps 1.5 ms apart: %d ms, want 1500", got)
	}
	if got := s.Snapshot(c.advance(999 * time.Microsecond)).WallClockMs; got != 1500 {
		t.Errorf("live 0.999 ms later: %d ms, want 1500", got)
	}
}

// TestRecoverAfterRestart: an open by a serving process (after a restart) pauses an
// active goal only when a main-agent turn was driving it when the earlier
// process ended, and counts nothing after that process's last call.
func TestRecoverAfterRestart(t *testing.T) {
	t.Run("driving turn live", func(t *testing.T) {
		c := newClock()
		s := withGoal(t, c)
		beginTurn(t, s, "t1", c.now())
		s.ContinuationOutstanding = true
		step(t, s, "t1", 5, FinishToolCalls, c.advance(30*time.Second)) // the last call
		c.advance(10 * time.Minute)                                     // the process runs on, then dies
		now := c.restart(2 * time.Hour)
		_, changes := s.RecoverAfterRestart(now, c.wall.Add(-2*time.Hour))
		want := []Change{{Kind: ChangePause, Status: Paused, Reason: "paused because the agentd process that ran the agent's turn ended before the turn did", Actor: Runtime}}
		if diff := cmp.Diff(want, changes, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Goal" }, cmp.Ignore())); diff != "" {
			t.Errorf("changes (-want +got):\n%s", diff)
		}
		if got := s.Snapshot(c.advance(time.Hour)).WallClockMs; got != 30_000 {
			t.Errorf("wall clock: got %d, want 30000 (counted to the last call)", got)
		}
		if !s.Turns[0].Ended || s.ContinuationOutstanding {
			t.Errorf("live turns and the continuation marker survive a restart: %+v", s)
		}
		if _, got := s.RecoverAfterRestart(c.now(), c.wall); got != nil {
			t.Errorf("a paused goal changed again: %v", got)
		}
		// The turn is remembered: a late end is refused as a call on a
		// turn agentd ended (docs/runtime.md §2.4.6), not as an unknown turn.
		if _, err := s.EndTurn("t1", OutcomeCompleted, "", "", 0, c.now()); protocol.ErrorCode(err) != protocol.CodeTurnEnded {
			t.Errorf("EndTurn after restart: got %v, want turn.ended", err)
		}
	})
	t.Run("no turn live", func(t *testing.T) {
		c := newClock()
		s := withGoal(t, c)
		beginTurn(t, s, "t1", c.now())
		endTurn(t, s, "t1", OutcomeCompleted, c.advance(time.Minute))
		beginTurn(t, s, "other agent", c.now()) // a live turn that drives nothing
		s.Turns[len(s.Turns)-1].Agent = "reviewer"
		c.advance(time.Hour) // idle, then the process ends
		_, changes := s.RecoverAfterRestart(c.restart(time.Hour), c.wall.Add(-time.Hour))
		if changes != nil || s.Goal.Status != Active || s.OpenTurn("reviewer") != "" {
			t.Fatalf("restart without a driving turn: changes %v, status %s, live turn %q; want no change, active, none", changes, s.Goal.Status, s.OpenTurn("reviewer"))
		}
		if got := s.Snapshot(c.advance(5 * time.Second)).WallClockMs; got != 65_000 {
			t.Errorf("wall clock: got %d, want 65000 (to the last call, then on in the new process)", got)
		}
	})
	t.Run("detached turn live", func(t *testing.T) {
		// A turn an agent's hooks drive outlives the agentd process: the
		// next process finds it live, leaves it live and the goal active,
		// and the agent's next step and turn end count on it.
		c := newClock()
		s := withGoal(t, c)
		beginTurn(t, s, "hooked", c.now())
		s.Detach("hooked")
		step(t, s, "hooked", 5, FinishToolCalls, c.advance(time.Second))
		if _, changes := s.RecoverAfterRestart(c.restart(time.Minute), c.wall); changes != nil || s.Goal.Status != Active || s.OpenTurn("") != "hooked" {
			t.Fatalf("restart with a detached turn live: changes %v, status %s, open turn %q; want no change, active, the turn live", changes, s.Goal.Status, s.OpenTurn(""))
		}
		step(t, s, "hooked", 7, FinishStop, c.advance(time.Second))
		endTurn(t, s, "hooked", OutcomeCompleted, c.now())
		if g := s.Snapshot(c.now()); g.TurnsUsed != 1 || g.TokensUsed != 12 {
			t.Errorf("usage after the restart: %d turns, %d tokens; want 1 turn, 12 tokens", g.TurnsUsed, g.TokensUsed)
		}
		s.Detach("hooked") // ended: left alone
		if s.Turns[0].Detached != true || !s.Turns[0].Ended {
			t.Errorf("turn record %+v", s.Turns[0])
		}
	})
	t.Run("a paused goal's turn", func(t *testing.T) {
		c := newClock()
		s := withGoal(t, c)
		_, err := s.Pause("", c.now())
		mustNoErr(t, err)
		beginTurn(t, s, "t1", c.now())
		if _, changes := s.RecoverAfterRestart(c.restart(time.Hour), c.wall); changes != nil || s.Goal.TerminalReason != "paused by the user" || s.OpenTurn("") != "" {
			t.Errorf("paused goal: changes %v, reason %q, live turn %q", changes, s.Goal.TerminalReason, s.OpenTurn(""))
		}
	})
	t.Run("state of an older agentd", func(t *testing.T) {
		// Written before monotonic stamps: no activeClock; the stretch
		// counts from activeSince to the session's last write, as the
		// older agentd counted it, and no turn record means no turn live.
		var s State
		mustNoErr(t, json.Unmarshal([]byte(`{"goal":{"id":"g","objective":"old","status":"active","turnsUsed":0,"tokensUsed":0,"wallClockMs":1000,"activeSince":"2026-03-01T09:00:00Z","limits":{"turnBudget":null,"tokenBudget":null,"wallClockBudgetMs":null},"createdAt":"2026-03-01T09:00:00Z","updatedAt":"2026-03-01T09:00:00Z","lastActor":"user"}}`), &s))
		c := newClock()
		if got := s.Snapshot(c.advance(time.Minute)).WallClockMs; got != 61_000 {
			t.Errorf("older state read by a one-shot: %d ms, want 61000", got)
		}
		lastSeen := c.wall.Add(-30 * time.Second)
		if _, changes := s.RecoverAfterRestart(c.restart(time.Hour), lastSeen); changes != nil || s.Goal.Status != Active {
			t.Fatalf("older state: changes %v, status %s; want none, active", changes, s.Goal.Status)
		}
		if got := s.Snapshot(c.advance(time.Second)).WallClockMs; got != 32_000 {
			t.Errorf("older state after the open: %d ms, want 32000", got)
		}
	})
}

// TestActivationSkipsLeftTurns: a turn a killed process left live has no
// agent behind it. A goal created or resumed later, by another process (a
// one-shot shell command), takes it neither as a starter nor as a driving
// turn (a resumed goal the turn drove before it was paused drops it), so
// the next serving process ends it without pausing that goal. Live
// turns of the activating process and detached turns still become starters.
func TestActivationSkipsLeftTurns(t *testing.T) {
	for _, how := range []string{"replace", "cancel and create", "pause and resume"} {
		t.Run(how, func(t *testing.T) {
			c := newClock()
			s := withGoal(t, c)
			beginTurn(t, s, "dead", c.now())
			beginTurn(t, s, "hooked", c.now())
			s.Detach("hooked")
			now := c.restart(time.Minute) // the process was killed; a shell command runs
			beginTurn(t, s, "own", now)   // a turn of this process (began with the goal active)
			var err error
			switch how {
			case "replace":
				_, err = s.Create(CreateParams{Objective: "G2", Replace: true}, now)
			case "cancel and create":
				if _, err = s.Cancel(now); err == nil {
					_, err = s.Create(CreateParams{Objective: "G2"}, now)
				}
			default:
				if _, err = s.Pause("", now); err == nil {
					_, err = s.Resume(now)
				}
			}
			mustNoErr(t, err)
			for _, tt := range []struct {
				id     string
				driven bool
			}{{"dead", false}, {"hooked", true}, {"own", true}} {
				tr := s.turn(tt.id)
				if got := tr.DrivenGoalID == s.Goal.ID; got != tt.driven {
					t.Errorf("turn %q drives the goal: %v, want %v (%+v)", tt.id, got, tt.driven, *tr)
				}
			}
			endTurn(t, s, "own", OutcomeCompleted, now)
			changed, cs := s.RecoverAfterRestart(c.restart(time.Minute), c.wall)
			if !changed || cs != nil || s.Goal.Status != Active || s.turn("dead").Ended != true || s.OpenTurn("") != "hooked" {
				t.Fatalf("next serving process: changed %v, changes %v, status %s, dead ended %v, open turn %q; want the dead turn ended, the goal active, the detached turn live",
					changed, cs, s.Goal.Status, s.turn("dead").Ended, s.OpenTurn(""))
			}
		})
	}
}

// TestRecoverAtReopen: a serving process applies the rule at every open of
// a folder: the turns another process left live meanwhile are ended (and
// pause the goal they drove); its own live turns are never touched. A turn
// from a state written before owners were recorded is no running
// process's: it is ended, and a goal activated later does not take it.
func TestRecoverAtReopen(t *testing.T) {
	t.Run("own and left turns", func(t *testing.T) {
		c := newClock()
		s := withGoal(t, c)
		daemon := c.now()
		beginTurn(t, s, "mine", daemon)
		other := c.restart(0) // another process, since killed
		beginTurn(t, s, "dead", other)
		c.id = daemon.Clock // the daemon reopens the folder
		now := c.advance(time.Minute)
		if !s.HasLeftTurn(now.Clock) {
			t.Fatal("HasLeftTurn: false with a dead process's turn live")
		}
		changed, cs := s.RecoverAfterRestart(now, c.wall)
		if !changed || len(cs) != 1 || cs[0].Reason != reasonRestart || !s.turn("dead").Ended || s.turn("mine").Ended {
			t.Fatalf("reopen: changed %v, changes %v, dead %+v, mine %+v; want the pause, dead ended, mine live", changed, cs, *s.turn("dead"), *s.turn("mine"))
		}
		if s.HasLeftTurn(now.Clock) {
			t.Error("HasLeftTurn: true with only the process's own turn live")
		}
		if changed, cs := s.RecoverAfterRestart(c.advance(time.Second), c.wall); changed || cs != nil || s.turn("mine").Ended {
			t.Errorf("reopen with only own turns: changed %v, changes %v, mine ended %v; want nothing", changed, cs, s.turn("mine").Ended)
		}
	})
	t.Run("turn without owner", func(t *testing.T) {
		var s State
		mustNoErr(t, json.Unmarshal([]byte(`{"turns":[{"id":"old","origin":"user","agent":"main","lastStepBegin":{},"lastStepEnd":{}}]}`), &s))
		c := newClock()
		fixedIDs(t)
		if _, err := s.Create(CreateParams{Objective: "new"}, c.now()); err != nil {
			t.Fatal(err)
		}
		if tr := s.turn("old"); tr.DrivenGoalID != "" || tr.Starter {
			t.Fatalf("an older state's live turn became a starter: %+v", *tr)
		}
		if changed, cs := s.RecoverAfterRestart(c.now(), c.wall); !changed || cs != nil || !s.turn("old").Ended || s.Goal.Status != Active {
			t.Fatalf("open: changed %v, changes %v, old %+v, status %s; want the turn ended, the goal active", changed, cs, *s.turn("old"), s.Goal.Status)
		}
	})
}

// TestAdopt: a serving process that opens a folder takes over the clock of
// an active goal stamped by another process (here a one-shot command): the
// time in between is not counted, and from then on it runs on this
// process's monotonic clock.
func TestAdopt(t *testing.T) {
	c := newClock()
	s := withGoal(t, c) // created by a one-shot command, which then exits
	c.restart(5 * time.Minute)
	if got := s.Snapshot(c.now()).WallClockMs; got != 0 {
		t.Errorf("before the open: %d ms, want 0 (no process ran it)", got)
	}
	if !s.Adopt(c.now(), c.wall) {
		t.Fatal("Adopt changed nothing")
	}
	if s.Adopt(c.now(), c.wall) {
		t.Error("a second Adopt by the same clock changed the state")
	}
	c.stepWall(-time.Hour)
	if got := s.Snapshot(c.advance(time.Minute)).WallClockMs; got != 60_000 {
		t.Errorf("a minute after the open: %d ms, want 60000", got)
	}
	mustNoErr(t, firstErr(s.Pause("", c.now())))
	if s.Adopt(c.restart(time.Hour), c.wall) {
		t.Error("Adopt changed a paused goal")
	}
}

func TestWallClockLeft(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	if _, ok := s.WallClockLeft(c.now()); ok {
		t.Errorf("time left without a wall-clock budget")
	}
	c.advance(20 * time.Second)
	_, err := s.SetBudget(BudgetUpdate{WallClockMs: LimitUpdate{Set: true, Value: f64(60_000)}}, c.now())
	mustNoErr(t, err)
	if left, ok := s.WallClockLeft(c.now()); !ok || left != 40*time.Second {
		t.Errorf("time left: got %v %v, want 40s", left, ok)
	}
	if got := s.CheckWallClock(c.advance(39 * time.Second)); len(got) != 1 || got[0].Kind != ChangeBudgetWarning || got[0].Percent != FinalBudgetWarning {
		t.Errorf("at 59 s of 60: %v, want one 80 %% warning (50 %% passed with it), not a block", kinds(got))
	}
	// The budget fires while idle (no turn live).
	got := s.CheckWallClock(c.advance(time.Second))
	want := []Change{{Kind: ChangeBlock, Status: Blocked, Reason: "budget reached: wall-clock budget of 1 minute", Actor: Runtime}}
	if diff := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Goal" }, cmp.Ignore())); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if _, ok := s.WallClockLeft(c.now()); ok {
		t.Errorf("time left of a blocked goal")
	}
	if got := s.Snapshot(c.advance(time.Hour)).WallClockMs; got != 60_000 {
		t.Errorf("wall clock after block: got %d, want 60000", got)
	}
}

func TestRaiseBudgetThenResume(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	_, err := s.SetBudget(BudgetUpdate{Tokens: LimitUpdate{Set: true, Value: f64(100)}}, c.now())
	mustNoErr(t, err)
	s.Goal.TokensUsed = 150
	changes := s.CheckWallClock(c.now()) // token budgets are not the timer's business: it may warn, never block
	if s.Status() != Active {
		t.Fatalf("CheckWallClock blocked on tokens: %v", kinds(changes))
	}
	changes, err = s.SetBudget(BudgetUpdate{Turns: LimitUpdate{Set: true, Value: f64(9)}}, c.now())
	mustNoErr(t, err)
	if diff := cmp.Diff([]string{"budget/user/active", "block/runtime/blocked"}, kinds(changes)); diff != "" {
		t.Fatalf("a budget change on a spent goal (-want +got):\n%s", diff)
	}
	if _, err := s.Resume(c.now()); codeOf(err) != CodeNotResumable {
		t.Fatalf("resume with the budget still spent: got %v, want %s", err, CodeNotResumable)
	}
	_, err = s.SetBudget(BudgetUpdate{Tokens: LimitUpdate{Set: true, Value: f64(1000)}}, c.now())
	mustNoErr(t, err)
	if s.Status() != Blocked {
		t.Fatalf("raising a budget resumed the goal")
	}
	_, err = s.Resume(c.now())
	mustNoErr(t, err)
	if s.Status() != Active || s.Goal.TerminalReason != "" {
		t.Errorf("after raise and resume: %s %q", s.Status(), s.Goal.TerminalReason)
	}
}

func TestSetBudgetRefusals(t *testing.T) {
	c := newClock()
	s := &State{}
	if _, err := s.SetBudget(BudgetUpdate{}, c.now()); codeOf(err) != CodeNotFound {
		t.Errorf("no goal: got %v", err)
	}
	s = withGoal(t, c)
	s.Goal.Status = Complete
	if _, err := s.SetBudget(BudgetUpdate{Turns: LimitUpdate{Set: true, Value: f64(1)}}, c.now()); codeOf(err) != CodeStatusInvalid {
		t.Errorf("complete goal: got %v", err)
	}
	s.Goal.Status = Paused
	changes, err := s.SetBudget(BudgetUpdate{}, c.now())
	if err != nil || changes != nil {
		t.Errorf("an empty update: got %v %v, want nothing", changes, err)
	}
}

func TestUpdateTaskFile(t *testing.T) {
	c := newClock()
	fixedIDs(t)
	s := &State{}
	_, err := s.Create(CreateParams{Objective: "do docs/task.md", TaskFile: &TaskFileInfo{Path: "docs/task.md", Exists: true, SHA256: "a", Size: 1}}, c.now())
	mustNoErr(t, err)
	if got := s.UpdateTaskFile(TaskFileInfo{Path: "other.md", Exists: true, SHA256: "b"}, c.now()); got != nil {
		t.Errorf("another file changed the goal: %v", got)
	}
	mod := c.advance(time.Second).Wall
	if got := s.UpdateTaskFile(TaskFileInfo{Path: "docs/task.md", Exists: true, SHA256: "a", Size: 1, ModifiedAt: &mod}, c.now()); got != nil {
		t.Errorf("a save without change changed the goal: %v", got)
	}
	got := s.UpdateTaskFile(TaskFileInfo{Path: "docs/task.md", Exists: true, SHA256: "b", Size: 2, ModifiedAt: &mod}, c.now())
	if diff := cmp.Diff([]string{"taskFile/runtime/active"}, kinds(got)); diff != "" {
		t.Fatalf("changes (-want +got):\n%s", diff)
	}
	want := &TaskFileInfo{Path: "docs/task.md", Exists: true, SHA256: "b", Size: 2, ModifiedAt: &mod, ChangedSinceLastTurn: true}
	if diff := cmp.Diff(want, s.Snapshot(c.now()).TaskFile); diff != "" {
		t.Errorf("task file (-want +got):\n%s", diff)
	}
	if got := s.UpdateTaskFile(TaskFileInfo{Path: "docs/task.md"}, c.now()); got[0].Reason != "the task file was removed" {
		t.Errorf("removal reason: %q", got[0].Reason)
	}
}

// TestCompleteGoalReleasesTaskFile: a goal references its task file while
// it is active, paused or blocked; once complete it no longer does, and a
// change of the file is not recorded.
func TestCompleteGoalReleasesTaskFile(t *testing.T) {
	if got := (&State{}).ReferencedTaskFile(); got != nil {
		t.Errorf("no goal references %+v", got)
	}
	for _, tt := range []struct {
		status Status
		refs   bool
	}{{Active, true}, {Paused, true}, {Blocked, true}, {Complete, false}} {
		t.Run(string(tt.status), func(t *testing.T) {
			c := newClock()
			fixedIDs(t)
			s := &State{}
			mustNoErr(t, firstErr(s.Create(CreateParams{Objective: "x", TaskFile: &TaskFileInfo{Path: "t.md", Exists: true, SHA256: "a"}}, c.now())))
			s.Goal.Status = tt.status
			ref := s.ReferencedTaskFile()
			if (ref != nil) != tt.refs || ref != nil && ref.Path != "t.md" {
				t.Fatalf("ReferencedTaskFile() = %+v, want a reference: %v", ref, tt.refs)
			}
			if ref != nil {
				ref.Path = "changed.md"
				if s.Goal.TaskFile.Path != "t.md" {
					t.Fatalf("ReferencedTaskFile returned the stored value, not a copy")
				}
			}
			got := s.UpdateTaskFile(TaskFileInfo{Path: "t.md", Exists: true, SHA256: "b"}, c.now())
			if (got != nil) != tt.refs {
				t.Errorf("UpdateTaskFile on a %s goal = %v, want a change: %v", tt.status, got, tt.refs)
			}
		})
	}
}

func TestTaskFileCandidates(t *testing.T) {
	got := TaskFileCandidates(`Implement @docs/plan.md, see "spec.txt". https://x.y/z (notes/a.md)`)
	want := []string{"Implement", "docs/plan.md", "see", "spec.txt", "notes/a.md"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("candidates (-want +got):\n%s", diff)
	}
}

func TestStateJSONRoundTrip(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	s.Goal.Limits.TurnBudget = i64(3)
	s.Goal.TaskFile = &TaskFileInfo{Path: "a.md"}
	beginTurn(t, s, "t1", c.now())
	step(t, s, "t1", 10, FinishStop, c.now())
	b, err := json.Marshal(s)
	mustNoErr(t, err)
	var back State
	mustNoErr(t, json.Unmarshal(b, &back))
	if diff := cmp.Diff(*s, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	clone := s.Clone()
	*clone.Goal.Limits.TurnBudget = 99
	clone.Goal.TaskFile.Path = "b.md"
	clone.Turns[0].Steps = 42
	if *s.Goal.Limits.TurnBudget != 3 || s.Goal.TaskFile.Path != "a.md" || s.Turns[0].Steps != 1 {
		t.Errorf("Clone shares memory with the original")
	}
	var empty State
	mustNoErr(t, json.Unmarshal([]byte(`{"goal":null}`), &empty))
	if empty.Snapshot(c.now()) != nil {
		t.Errorf("snapshot of no goal is not nil")
	}
}

// TestRecoverLeftTurns: in a team folder, a second process opening the
// folder leaves the turns of a process that still holds its lease live and
// the goal active; once that process is gone, its driving turn is ended
// and the goal paused, as after a restart.
func TestRecoverLeftTurns(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	driver := c.now()
	beginTurn(t, s, "t1", driver)
	step(t, s, "t1", 5, FinishToolCalls, c.advance(time.Second))
	other := c.restart(time.Second) // a second daemon, on another machine
	if other.Clock == driver.Clock {
		t.Fatal("the test needs two clocks")
	}
	alive := map[string]bool{driver.Clock: true}
	isAlive := func(owner string) bool { return alive[owner] }
	if s.HasTurnLeftBy(other.Clock, isAlive) {
		t.Error("HasTurnLeftBy: the driver's turn reads as left while it is alive")
	}
	if changed, cs := s.RecoverLeftTurns(other, c.wall, isAlive); changed || cs != nil || s.Goal.Status != Active || s.OpenTurn("") != "t1" || s.Goal.ActiveClock != driver.Clock {
		t.Fatalf("opened while the driver lives: changed %v, changes %v, status %s, open turn %q, clock taken %v", changed, cs, s.Goal.Status, s.OpenTurn(""), s.Goal.ActiveClock != driver.Clock)
	}
	delete(alive, driver.Clock) // its lease expired
	if !s.HasTurnLeftBy(other.Clock, isAlive) {
		t.Error("HasTurnLeftBy: the gone driver's turn does not read as left")
	}
	_, cs := s.RecoverLeftTurns(other, c.wall, isAlive)
	if len(cs) != 1 || cs[0].Kind != ChangePause || s.Goal.Status != Paused || s.OpenTurn("") != "" {
		t.Fatalf("after the driver is gone: changes %v, status %s, open turn %q; want one pause, paused, none", cs, s.Goal.Status, s.OpenTurn(""))
	}
	// Its lease expired: it may have been stopped or cut off, not ended.
	if cs[0].Reason != reasonLeaseLost || !strings.Contains(cs[0].Reason, "stopped, or was cut off") {
		t.Errorf("pause reason %q, want %q", cs[0].Reason, reasonLeaseLost)
	}
}
