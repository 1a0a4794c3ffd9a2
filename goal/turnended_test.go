package goal

import (
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/commands/protocol"
)

// TestCallsOnEndedTurn: a tool call on a turn that has ended is refused
// with turn.ended and changes nothing, whoever ended the turn; a lifecycle
// call on a turn agentd ended itself (a closed connection, a restart, a
// lost lease) is refused too, naming why, while a turn its host ended keeps
// its retries (docs/runtime.md §2.4.2, §2.4.6).
func TestCallsOnEndedTurn(t *testing.T) {
	ends := []struct {
		name string
		end  func(s *State, now Instant)
		why  string // "" when the host ended it
	}{
		{"host", func(s *State, now Instant) { _, _ = s.EndTurn("t1", OutcomeCompleted, "", "", 0, now) }, ""},
		{"disconnect", func(s *State, now Instant) { s.AbandonTurn("t1", now) }, EndedDisconnect},
		{"restart", func(s *State, now Instant) { s.RecoverAfterRestart(Instant{Wall: now.Wall, Clock: "next"}, now.Wall) }, EndedRestart},
		{"lease", func(s *State, now Instant) {
			s.RecoverLeftTurns(Instant{Wall: now.Wall, Clock: "other-daemon"}, now.Wall, func(string) bool { return false })
		}, EndedLeaseLost},
	}
	for _, end := range ends {
		t.Run(end.name, func(t *testing.T) {
			c := newClock()
			s := withGoal(t, c)
			beginTurn(t, s, "t1", c.now())
			mustNoErr(t, errOf(s.BeginStep("t1", c.now())))
			end.end(s, c.advance(time.Second))
			if got := s.Turns[0].EndedBy; got != end.why {
				t.Fatalf("EndedBy = %q, want %q", got, end.why)
			}
			if end.why != "" {
				s.Goal.Status, s.Goal.TerminalReason = Active, "" // as a person's resume would
			}
			before := s.Snapshot(c.now())
			for _, call := range []modelCall{
				updateCall("complete", "t1"),
				inTurn(budgetCall(1, "turns"), "t1"),
				createCall("another goal", true, "t1"),
				{Name: GetGoalTool, Input: raw(`{}`), TurnID: "t1"},
			} {
				res, cs := s.callTool(t, call, c.now())
				if !res.IsError || res.ErrorCode != protocol.CodeTurnEnded || len(cs) != 0 || !strings.Contains(res.Output, "Not run: the turn this call belongs to has ended") {
					t.Fatalf("%s on the ended turn = %+v, %v; want the refusal turn.ended", call.Name, res, cs)
				}
			}
			if err := s.CheckTurn("t1"); protocol.ErrorCode(err) != protocol.CodeTurnEnded {
				t.Fatalf("CheckTurn = %v, want turn.ended", err)
			}
			if s.CompletionCheck(ToolCall{Call: mustCall(t, updateCall("complete", "t1")), TurnID: "t1"}) {
				t.Fatal("a complete on the ended turn would run the check")
			}
			if after := s.Snapshot(c.now()); after.Status != before.Status || after.GoalID != before.GoalID {
				t.Fatalf("the goal changed: %+v, was %+v", after, before)
			}
			_, errBegin := s.BeginStep("t1", c.now())
			_, errEnd := s.EndTurn("t1", OutcomeCompleted, "", "", 0, c.now())
			if end.why == "" {
				if protocol.ErrorCode(errBegin) != CodeArgsInvalid || errEnd != nil {
					t.Fatalf("a turn its host ended: step begin %v (want args.invalid), turn end retry %v (want nil)", errBegin, errEnd)
				}
				return
			}
			_, errStep := s.EndStep("t1", 5, FinishStop, c.now())
			for what, err := range map[string]error{"step begin": errBegin, "step end": errStep, "turn end": errEnd} {
				if protocol.ErrorCode(err) != protocol.CodeTurnEnded || !strings.Contains(err.Error(), "agentd ended it: "+endedWhy[end.why]) {
					t.Errorf("%s on a turn agentd ended: %v, want turn.ended naming %q", what, err, end.why)
				}
			}
		})
	}
	t.Run("live and unknown turns", func(t *testing.T) {
		c := newClock()
		s := withGoal(t, c)
		beginTurn(t, s, "t1", c.now())
		for _, id := range []string{"", "t1", "never-begun"} {
			if err := s.CheckTurn(id); err != nil {
				t.Errorf("CheckTurn(%q) = %v, want nil", id, err)
			}
		}
	})
}

func errOf[T any](_ T, err error) error { return err }

func mustCall(t *testing.T, c modelCall) Call {
	t.Helper()
	call, err := NewCall(c.Name, c.Input, c.Agent)
	mustNoErr(t, err)
	return call
}
