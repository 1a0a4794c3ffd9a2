package goal

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

var fuzzTools = []string{CreateGoalTool, GetGoalTool, SetGoalBudgetTool, UpdateGoalTool}

// FuzzNewCall feeds arbitrary input to every goal tool's decoder, NewCall,
// as the main agent and as a subagent. Invariants: no panic; a goal tool is
// never an error; the call either holds the tool's input type or is
// refused with IsError, a code (args.invalid for the main agent, the
// subagent's goal.unsupported_agent unless a key is given twice) and an
// output; the description always says something, and a goal-start display
// has a valid objective.
func FuzzNewCall(f *testing.F) {
	for i, s := range []string{
		`{"objective":"ship it","completionCriterion":"tests pass","replace":true,"taskFile":"TASK.md"}`,
		`{}`,
		`{"value":2.5,"unit":"hours"}`,
		`{"status":"complete"}`,
		`null`, ``, `[]`, `"x"`, `{"objective":null}`, `{"value":"5","unit":"turns"}`,
		`{"value":1e309,"unit":"tokens"}`, `{"status":"paused"}`, `{"extra":1}`, `{"objective":1}`,
		`{"replace":"yes","objective":"x"}`, `{"value":-0,"unit":"seconds"}`, `{"value":0.0001,"unit":"hours"}`,
		`{"status":"active","status":"blocked"}`,
	} {
		f.Add(uint8(i), []byte(s))
	}
	f.Fuzz(func(t *testing.T, which uint8, raw []byte) {
		name := fuzzTools[int(which)%len(fuzzTools)]
		agent := []string{MainAgent, "sub"}[int(which)/len(fuzzTools)%2]
		c, err := NewCall(name, raw, agent)
		if err != nil {
			t.Fatalf("NewCall(%s, %q): %v", name, raw, err)
		}
		if res, refused := c.Refused(); refused {
			wantCode := CodeArgsInvalid
			if agent != MainAgent && !strings.Contains(res.Output, "appears twice") {
				wantCode = CodeUnsupportedAgent
			}
			if !res.IsError || res.ErrorCode != wantCode || res.Output == "" {
				t.Fatalf("NewCall(%s, %q) as %s refused with %+v, want %s", name, raw, agent, res, wantCode)
			}
		} else if agent != MainAgent || c.Input.Tool() != name {
			t.Fatalf("NewCall(%s, %q) as %s = %T, not refused", name, raw, agent, c.Input)
		}
		d := c.Description
		if d.Description == "" {
			t.Fatalf("NewCall(%s, %q): no description", name, raw)
		}
		if d.Display != nil && (d.Display.Objective == "" || utf8.RuneCountInString(d.Display.Objective) > MaxObjectiveChars) {
			t.Fatalf("display objective %q", d.Display.Objective)
		}
	})
}

// fuzzTokens are step token counts, from ordinary to absurd.
var fuzzTokens = []int64{0, 1, 999, 1_000_000, 1 << 40, math.MaxInt64/2 + 1, math.MaxInt64, -1}

// FuzzCallTool drives a State through a sequence of operations chosen by ops
// (tool calls with the fuzzed input and with canned ones, turns and steps
// with any token counts, user controls, clock moves, system clock steps
// back and forward, restarts) on a fake clock. Invariants after every
// operation: no panic; refusals are coded errors or tool results with
// IsError, an error code and no change; the state survives its JSON round
// trip; counters and remaining budgets are never negative; within one
// process a goal's wall clock never goes back, whatever the system clock
// does; the objective obeys its limit; turn records stay bounded; no
// model call drops an unfinished goal with a person's check or limit, or
// completes a goal with a check (the fuzz runs no check), and every limit
// stays within the person's (docs/runtime.md §2.11).
func FuzzCallTool(f *testing.F) {
	f.Add([]byte{1, 4, 5, 6, 7}, []byte(`{"objective":"ship it"}`))
	f.Add([]byte{1, 2, 4, 5, 6 + 12*5, 5, 6 + 12*6, 7}, []byte(`{"value":3,"unit":"turns"}`))
	f.Add([]byte{0, 0, 3, 3 + 12, 3 + 24, 9, 9 + 12, 9 + 24}, []byte(`{"objective":"a","replace":true}`))
	f.Add([]byte{1, 10, 8 + 12*20, 11, 11 + 12, 4, 5, 6}, []byte(`{"status":"blocked"}`))
	f.Add([]byte{1, 4, 5, 6 + 12*3, 5, 6 + 12*3, 5, 6 + 12*3, 7}, []byte(`{}`))
	f.Add([]byte{1, 10, 4, 8 + 12*2, 8 + 12*3, 5, 8 + 12*5, 6, 8 + 12*4, 11 + 12*2, 8 + 12*2, 7}, []byte(`{"wallClockMs":60000}`))
	// A person's goal with a check, then the model's replace and complete;
	// a person's token budget, then the model's raise.
	f.Add([]byte{9 + 12*3, 4, 1 + 12*1, 3 + 12*1, 3 + 12*2, 1 + 12*1}, []byte(`{}`))
	f.Add([]byte{1, 10, 2 + 12*1, 0 + 12*2}, []byte(`{"tokens":5}`))
	f.Fuzz(func(t *testing.T, ops, input []byte) {
		if len(ops) > 200 {
			ops = ops[:200]
		}
		c := newClock()
		now := c.now()
		s := &State{}
		var last *Snapshot // the goal after the previous operation, in this process
		turns := []string{"t0", "t1", "t2", string(input)}
		for i, b := range ops {
			op, arg := b%12, int(b/12)
			before := stateJSON(t, s)
			switch op {
			case 0:
				name := fuzzTools[arg%len(fuzzTools)]
				checkToolCall(t, s, before, modelCall{Name: name, Input: input, TurnID: pick(turns, arg/4, true)}, now)
			case 1:
				in := []string{`{"objective":"ship it","completionCriterion":"done"}`, `{"objective":"other","replace":true}`,
					`{"objective":"` + strings.Repeat("x", MaxObjectiveChars+1) + `"}`, `{"objective":"  "}`}[arg%4]
				agent := []string{"", "main", "sub"}[arg/4%3]
				checkToolCall(t, s, before, modelCall{Name: CreateGoalTool, Input: json.RawMessage(in), Agent: agent, TurnID: pick(turns, arg, true)}, now)
			case 2:
				in := []string{`{"value":3,"unit":"turns"}`, `{"value":10,"unit":"tokens"}`, `{"value":2,"unit":"seconds"}`,
					`{"value":0.4,"unit":"turns"}`, `{"value":25,"unit":"hours"}`, `{"value":1e300,"unit":"tokens"}`}[arg%6]
				checkToolCall(t, s, before, modelCall{Name: SetGoalBudgetTool, Input: json.RawMessage(in), TurnID: pick(turns, arg/6, true)}, now)
			case 3:
				in := `{"status":"` + []string{"active", "complete", "blocked", "paused"}[arg%4] + `"}`
				checkToolCall(t, s, before, modelCall{Name: UpdateGoalTool, Input: json.RawMessage(in), TurnID: pick(turns, arg/4, true)}, now)
			case 4:
				agent := []string{"", "sub"}[arg%2]
				origin := []Origin{OriginUser, OriginContinuation, OriginResume, "bogus"}[arg/2%4]
				_, err := s.BeginTurn(pick(turns, arg/8, false), origin, agent, now)
				checkErr(t, err)
			case 5:
				_, err := s.BeginStep(pick(turns, arg, false), now)
				checkErr(t, err)
			case 6:
				finish := []FinishReason{FinishStop, FinishToolCalls}[arg%2]
				_, err := s.EndStep(pick(turns, arg/2, false), fuzzTokens[arg/2%len(fuzzTokens)], finish, now)
				checkErr(t, err)
			case 7:
				outcome := []Outcome{OutcomeCompleted, OutcomeCancelled, OutcomeFailed, OutcomeBlocked, OutcomeStepLimit}[arg%5]
				_, err := s.EndTurn(pick(turns, arg/5, false), outcome, "rate_limit", string(input), int(arg%4), now)
				checkErr(t, err)
			case 8:
				switch d := time.Duration(arg*arg) * 37 * time.Second; arg % 3 {
				case 0, 1:
					now = c.advance(d)
				default: // the system clock is set back or forward
					now = c.stepWall(d * time.Duration(arg%2*2-1))
				}
			case 9:
				var err error
				switch arg % 4 {
				case 0:
					_, err = s.Pause(string(input), now)
				case 1:
					_, err = s.Resume(now)
				case 2:
					_, err = s.Cancel(now)
				default: // a person's goal with a check
					_, err = s.Create(CreateParams{Objective: "checked", Replace: true, Check: "make test"}, now)
				}
				checkErr(t, err)
			case 10:
				var u BudgetUpdate
				if json.Unmarshal(input, &u) != nil {
					u = BudgetUpdate{Tokens: LimitUpdate{Set: true, Value: ptr(float64(arg * 100))}}
				}
				_, err := s.SetBudget(u, now)
				checkErr(t, err)
			case 11:
				switch arg % 4 {
				case 0:
					s.AbandonTurn(pick(turns, arg/4, false), now)
				case 1:
					s.CheckWallClock(now)
				case 2:
					lastSeen := now.Wall
					now = c.restart(time.Duration(arg) * time.Hour)
					s.RecoverAfterRestart(now, lastSeen)
					last = nil
				default:
					s.UpdateTaskFile(TaskFileInfo{Path: "TASK.md", Exists: arg%8 < 4}, now)
				}
			}
			checkState(t, s, now, i, op)
			snap := s.Snapshot(now)
			if last != nil && snap != nil && snap.GoalID == last.GoalID && snap.WallClockMs < last.WallClockMs {
				t.Fatalf("op %d (%d): the wall clock went back from %d to %d ms", i, op, last.WallClockMs, snap.WallClockMs)
			}
			last = snap
		}
	})
}

func ptr[T any](v T) *T { return &v }

// pick returns one of ids, or "" (an invalid id) when allowEmpty and n says so.
func pick(ids []string, n int, allowEmpty bool) string {
	if allowEmpty && n%(len(ids)+1) == len(ids) {
		return ""
	}
	return ids[n%len(ids)]
}

func stateJSON(t *testing.T, s *State) []byte {
	t.Helper()
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatalf("state does not encode: %v", err)
	}
	return data
}

func checkErr(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var e *Error
	if !errors.As(err, &e) || e.Code == "" || e.Msg == "" {
		t.Fatalf("refusal %T %v has no code", err, err)
	}
}

func checkToolCall(t *testing.T, s *State, before []byte, c modelCall, now Instant) {
	t.Helper()
	var prev State
	if err := json.Unmarshal(before, &prev); err != nil {
		t.Fatal(err)
	}
	res, changes := s.callTool(t, c, now)
	if g := prev.Goal; g != nil && g.Status != Complete && g.personSet() != "" {
		if s.Goal == nil || s.Goal.ID != g.ID || g.Check != nil && s.Goal.Status == Complete {
			t.Fatalf("%s(%s) dropped or completed a goal with %s the person set: %+v", c.Name, c.Input, g.personSet(), s.Goal)
		}
	}
	if res.Description == "" || res.Output == "" {
		t.Fatalf("%s(%s): empty description or output: %+v", c.Name, c.Input, res)
	}
	if res.IsError {
		if res.ErrorCode == "" {
			t.Fatalf("%s(%s): refusal without a code: %+v", c.Name, c.Input, res)
		}
		if len(changes) > 0 {
			t.Fatalf("%s(%s): refusal with changes %+v", c.Name, c.Input, changes)
		}
		if after := stateJSON(t, s); !bytes.Equal(before, after) {
			t.Fatalf("%s(%s): refusal changed the state\nbefore %s\nafter  %s", c.Name, c.Input, before, after)
		}
	}
}

func checkState(t *testing.T, s *State, now Instant, i int, op byte) {
	t.Helper()
	// What the store keeps is the decoded JSON: it must be stable under a
	// second round trip (the first may only replace invalid UTF-8).
	var stored, reread State
	if err := json.Unmarshal(stateJSON(t, s), &stored); err != nil {
		t.Fatalf("op %d (%d): state does not decode: %v", i, op, err)
	}
	data := stateJSON(t, &stored)
	if err := json.Unmarshal(data, &reread); err != nil {
		t.Fatalf("op %d (%d): stored state does not decode: %v", i, op, err)
	}
	if again := stateJSON(t, &reread); !bytes.Equal(data, again) {
		t.Fatalf("op %d (%d): state changes in its JSON round trip\n%s\n%s", i, op, data, again)
	}
	if n := len(s.Turns); n > MaxEndedTurns+MaxLiveTurns {
		t.Fatalf("op %d: %d turn records kept", i, n)
	}
	for _, tr := range s.Turns {
		if len(tr.ID) > MaxTurnIDBytes {
			t.Fatalf("op %d: a turn id of %d bytes kept", i, len(tr.ID))
		}
	}
	g := s.Goal
	if g == nil {
		return
	}
	switch g.Status {
	case Active, Paused, Blocked, Complete:
	default:
		t.Fatalf("op %d: status %q", i, g.Status)
	}
	if n := utf8.RuneCountInString(g.TerminalReason); n > MaxReasonChars {
		t.Fatalf("op %d (%d): a reason of %d characters kept", i, op, n)
	}
	if obj := g.Objective; obj == "" || utf8.RuneCountInString(obj) > MaxObjectiveChars || utf8.RuneCountInString(g.CompletionCriterion) > MaxCriterionChars {
		t.Fatalf("op %d: objective of %d runes, criterion of %d", i, utf8.RuneCountInString(obj), utf8.RuneCountInString(g.CompletionCriterion))
	}
	for _, k := range []BudgetKind{TurnBudget, TokenBudget, WallClockBudget} {
		p, l := g.PersonLimits.get(k), g.Limits.get(k)
		if p != nil && l == nil {
			t.Fatalf("op %d (%d): the person's %s limit %d was removed", i, op, k, *p)
		}
		if p != nil && *l > *p {
			t.Fatalf("op %d (%d): the %s limit %d is beyond the person's %d", i, op, k, *l, *p)
		}
	}
	snap := s.Snapshot(now)
	if snap.TurnsUsed < 0 || snap.TokensUsed < 0 || snap.WallClockMs < 0 {
		t.Fatalf("op %d (%d): negative usage: turns %d tokens %d wall %d ms", i, op, snap.TurnsUsed, snap.TokensUsed, snap.WallClockMs)
	}
	for _, r := range []*int64{snap.Budget.RemainingTurns, snap.Budget.RemainingTokens, snap.Budget.RemainingWallClockMs} {
		if r != nil && *r < 0 {
			t.Fatalf("op %d: negative remaining budget %d", i, *r)
		}
	}
	if snap.Budget.TokenBudget != nil && snap.TokensUsed >= *snap.Budget.TokenBudget && !snap.Budget.TokenBudgetReached {
		t.Fatalf("op %d: %d tokens used of %d and the budget is not reached", i, snap.TokensUsed, *snap.Budget.TokenBudget)
	}
}
