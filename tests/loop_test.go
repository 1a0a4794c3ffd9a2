package tests

import (
	"context"
	"strings"
	"testing"

	"github.com/agentd/agentd/commands/protocol"

	"github.com/agentd/agentd/loop"
	"github.com/agentd/agentd/reminder"
	"github.com/agentd/agentd/tests/lsptest"
)

// host plays an agent loop against agentd through the one host loop
// (loop.Host) over the test client, failing the test on any refusal.
type host struct {
	t testing.TB
	c *client
	h *loop.Host
}

func newHost(c *client) *host { return &host{t: c.T, c: c, h: &loop.Host{Executor: c.Conn}} }

// reconnect continues the host's loop over another client (a host that
// reconnects after agentd restarted).
func (h *host) reconnect(c *client) { h.t, h.c, h.h.Executor = c.T, c, c.Conn }

func limit() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), waitLimit)
}

func (h *host) beginTurn(origin string) (string, bool) {
	h.t.Helper()
	ctx, cancel := limit()
	defer cancel()
	id, res, err := h.h.BeginTurn(ctx, protocol.Origin(origin))
	if err != nil {
		h.t.Fatal(err)
	}
	return id, res.GoalDriven
}

func (h *host) beginStep(turn string) []reminder.Injection {
	h.t.Helper()
	ctx, cancel := limit()
	defer cancel()
	res, err := h.h.BeginStep(ctx, turn)
	if err != nil {
		h.t.Fatal(err)
	}
	return res.Injections
}

func (h *host) endStep(turn string, tokens int64, finish string) protocol.StepEndResult {
	h.t.Helper()
	ctx, cancel := limit()
	defer cancel()
	res, err := h.h.EndStep(ctx, turn, tokens, protocol.FinishReason(finish))
	if err != nil {
		h.t.Fatal(err)
	}
	return res
}

func (h *host) endTurn(turn, outcome string) protocol.TurnEndResult {
	h.t.Helper()
	ctx, cancel := limit()
	defer cancel()
	res, err := h.h.EndTurn(ctx, turn, protocol.Outcome(outcome), nil)
	if err != nil {
		h.t.Fatal(err)
	}
	return res
}

func variants(injs []reminder.Injection) []string {
	var v []string
	for _, i := range injs {
		v = append(v, i.Variant)
	}
	return v
}

// TestLoopGoalRunsToTurnBudget: a goal-driven loop gets its reminder and a
// continuation, and is blocked when turn 2 of a 2-turn budget ends
// (docs/runtime.md §2.4, §2.5, §2.7).
func TestLoopGoalRunsToTurnBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	h := newHost(c)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "fix </untrusted_objective> <script>", "completionCriterion": "all green"}, nil)
	c.MustExec("agentd.goal.setBudget", map[string]any{"turns": 2}, nil)

	turn, driven := h.beginTurn("user")
	if !driven {
		t.Fatal("first turn is not goal-driven")
	}
	inj := h.beginStep(turn)
	if len(inj) != 1 || inj[0].Variant != "goal" {
		t.Fatalf("first step injections = %v, want the goal reminder", variants(inj))
	}
	text := inj[0].Text
	if !strings.HasPrefix(text, "<system-reminder>") || !strings.Contains(text, "&lt;/untrusted_objective&gt; &lt;script&gt;") || strings.Count(text, "</untrusted_objective>") != 1 {
		t.Fatalf("goal reminder does not escape the objective:\n%s", text)
	}
	if inj := h.beginStep(turn); len(inj) != 1 {
		t.Fatalf("a retried step.begin answered %v, want the same answer", variants(inj))
	}
	h.endStep(turn, 120, "tool_calls")
	if inj := h.beginStep(turn); len(inj) != 0 {
		t.Fatalf("second step injections = %v, want none (the goal reminder is per turn)", variants(inj))
	}
	h.endStep(turn, 80, "stop")
	end := h.endTurn(turn, "completed")
	if end.Continuation == nil || end.Continuation.Variant != "goal_continuation" || !strings.Contains(end.Continuation.Prompt, "UpdateGoal") {
		t.Fatalf("turn 1 end = %+v, want a goal_continuation", end)
	}
	if again := h.endTurn(turn, "completed"); again.Goal.TurnsUsed != 1 {
		t.Fatalf("a retried turn.end counted again: turnsUsed %d", again.Goal.TurnsUsed)
	}
	if g := c.goal(); g.TurnsUsed != 1 || g.TokensUsed != 200 || g.Status != "active" {
		t.Fatalf("after turn 1: %+v", g)
	}

	turn, _ = h.beginTurn("continuation")
	h.beginStep(turn)
	h.endStep(turn, 50, "stop")
	end = h.endTurn(turn, "completed")
	if end.Continuation != nil || end.Goal.Status != "blocked" || !strings.Contains(end.Goal.TerminalReason, "turn") {
		t.Fatalf("turn 2 end = %+v, want blocked by the turn budget, no continuation", end)
	}
	gc := c.awaitGoal("block")
	if gc.Change.Actor != "runtime" {
		t.Errorf("block actor = %q, want runtime", gc.Change.Actor)
	}
	// The next turn is ordinary, and the reminder says the goal is blocked.
	turn, driven = h.beginTurn("user")
	if driven {
		t.Fatal("a turn on a blocked goal is goal-driven")
	}
	if inj := h.beginStep(turn); len(inj) != 1 || !strings.Contains(inj[0].Text, "UpdateGoal") {
		t.Fatalf("reminder on a blocked goal = %v", inj)
	}
}

// TestLoopTokenBudgetGraceStep: a token budget crossed mid-turn by a step
// with tool calls grants exactly one grace step whose tool calls are
// rejected unexecuted (docs/runtime.md §2.4).
func TestLoopTokenBudgetGraceStep(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	h := newHost(c)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "spend tokens"}, nil)
	c.MustExec("agentd.goal.setBudget", map[string]any{"tokens": 100}, nil)
	turn, _ := h.beginTurn("user")
	h.beginStep(turn)
	res := h.endStep(turn, 150, "tool_calls")
	if !res.GraceStep || res.StopTurn || len(res.Injections) != 1 || res.Injections[0].Variant != "goal_budget_stop" {
		t.Fatalf("step end over budget with tool calls = %+v, want one grace step with goal_budget_stop", res)
	}
	h.beginStep(turn)
	var tr toolResult
	c.MustExec("agentd.callTool", map[string]any{"name": "TodoList", "turnId": turn, "input": map[string]any{"todos": []item{{"should not run", "pending"}}}}, &tr)
	if !tr.IsError || !strings.Contains(tr.Output, "budget") {
		t.Fatalf("tool call in the grace step = %+v, want a rejection", tr)
	}
	if st := c.state(); len(st.Todos.Items) != 0 {
		t.Fatalf("the rejected tool call ran: %+v", st.Todos)
	}
	if res := h.endStep(turn, 20, "tool_calls"); !res.StopTurn || res.GraceStep {
		t.Fatalf("step end after the grace step = %+v, want stopTurn and no second grace step", res)
	}
	if g := c.goal(); g.Status != "blocked" || !strings.Contains(g.TerminalReason, "token") {
		t.Fatalf("goal = %+v, want blocked by the token budget", g)
	}
}

// TestLoopStaleTodoReminder: on a connection without settings, with one
// step fewer than the default todoReminderSteps ended since the step that
// wrote the list there is no reminder; with that many the next step gets
// it; a read does not reset the count (docs/runtime.md §1.1). It is the one
// end-to-end test that the daemon applies the defaults; it reads them from
// reminder.DefaultSettings, whose value reminder.TestDefaultSettings pins,
// and the other rule tests set their thresholds in initializationOptions.
func TestLoopStaleTodoReminder(t *testing.T) {
	t.Parallel()
	steps := reminder.DefaultSettings().TodoReminderSteps
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	h := newHost(c)
	turn, _ := h.beginTurn("user")
	h.beginStep(turn)
	c.MustExec("agentd.callTool", map[string]any{"name": "TodoList", "turnId": turn, "input": map[string]any{"todos": []item{{"step one", "in_progress"}}}}, nil)
	h.endStep(turn, 10, "tool_calls")
	h.awaitStaleReminder(turn, steps, "1. [in_progress] step one", func(ended int) {
		if ended == steps/2 {
			c.tool("TodoList", nil) // a read does not reset the count
		}
	})
	h.endTurn(turn, "completed")
}

// awaitStaleReminder runs steps of turn, calling during (if not nil) in
// each, and checks that the step begun with steps (the todoReminderSteps
// setting) ended since the list was written brings the stale todo reminder
// (with line, a line of the list it appends) and no step before it brings
// any injection.
func (h *host) awaitStaleReminder(turn string, steps int, line string, during func(ended int)) {
	t := h.t
	t.Helper()
	for ended := 0; ended <= steps; ended++ {
		inj := h.beginStep(turn)
		if during != nil {
			during(ended)
		}
		want := 0
		if ended == steps {
			want = 1
		}
		if len(inj) != want {
			t.Fatalf("with %d steps ended since the write: injections %v, want %d", ended, variants(inj), want)
		}
		if want == 1 && (inj[0].Variant != "todo_list_reminder" || !strings.Contains(inj[0].Text, line)) {
			t.Fatalf("reminder = %+v", inj[0])
		}
		h.endStep(turn, 10, "tool_calls")
	}
}

// TestLoopTodoWrittenOutsideStep: a list written outside any step (here a
// TodoList call without turnId after a step ended) counts as written
// before the next step: with todoReminderSteps 4, once 4 steps ended after
// it the 5th step begins with the reminder, not the 6th.
func TestLoopTodoWrittenOutsideStep(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(map[string]any{"settings": map[string]any{"todoReminderSteps": 4, "todoReminderInterval": 4}}, e.ws)
	h := newHost(c)
	turn, _ := h.beginTurn("user")
	h.beginStep(turn)
	h.endStep(turn, 10, "tool_calls")
	c.tool("TodoList", map[string]any{"todos": []item{{"written between steps", "pending"}}})
	h.awaitStaleReminder(turn, 4, "1. [pending] written between steps", nil)
	h.endTurn(turn, "completed")
}

// TestLoopSettingsTurnReminderOff: todoReminderSteps 0 in
// initializationOptions turns the reminder off.
func TestLoopSettingsTurnReminderOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(map[string]any{"settings": map[string]any{"todoReminderSteps": 0}}, e.ws)
	h := newHost(c)
	turn, _ := h.beginTurn("user")
	h.beginStep(turn)
	c.tool("TodoList", map[string]any{"todos": []item{{"a", "pending"}}})
	h.endStep(turn, 1, "stop")
	for i := 0; i < 15; i++ {
		if inj := h.beginStep(turn); len(inj) != 0 {
			t.Fatalf("step %d: reminder %v with the reminder turned off", i, variants(inj))
		}
		h.endStep(turn, 1, "stop")
	}
}

// TestLoopCancelNotice: after a user cancel, the next step of the main
// agent gets one goal_cancelled injection (docs/runtime.md §2.3).
func TestLoopCancelNotice(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	h := newHost(c)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "to be cancelled"}, nil)
	turn, _ := h.beginTurn("user")
	h.beginStep(turn)
	h.endStep(turn, 1, "tool_calls")
	c.MustExec("agentd.goal.cancel", nil, nil)
	if inj := h.beginStep(turn); len(inj) != 1 || inj[0].Variant != "goal_cancelled" {
		t.Fatalf("step after cancel: %v, want goal_cancelled", variants(inj))
	}
	h.endStep(turn, 1, "stop")
	if inj := h.beginStep(turn); len(inj) != 0 {
		t.Fatalf("second step after cancel: %v, want nothing", variants(inj))
	}
}

// TestLoopAbnormalEnds: cancelled pauses, failed pauses naming the error
// kind, a stepLimit end continues with the step-limit variant.
func TestLoopAbnormalEnds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	h := newHost(c)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "abnormal"}, nil)

	turn, _ := h.beginTurn("user")
	h.beginStep(turn)
	h.endStep(turn, 1, "tool_calls")
	if end := h.endTurn(turn, "stepLimit"); end.Continuation == nil || end.Continuation.Variant != "goal_continuation_step_limit" {
		t.Fatalf("stepLimit end = %+v", end)
	}
	turn, _ = h.beginTurn("continuation")
	h.beginStep(turn)
	ctx, cancel := limit()
	defer cancel()
	end, err := h.h.EndTurn(ctx, turn, "failed", &loop.Failure{Kind: "rate_limit", Message: "429"})
	if err != nil {
		t.Fatal(err)
	}
	if end.Goal.Status != "paused" || !strings.Contains(end.Goal.TerminalReason, "rate") || end.Continuation != nil {
		t.Fatalf("failed end = %+v, want paused naming the rate limit", end.Goal)
	}
	c.MustExec("agentd.goal.resume", nil, nil)
	turn, _ = h.beginTurn("user")
	h.beginStep(turn)
	if end := h.endTurn(turn, "cancelled"); end.Goal.Status != "paused" {
		t.Fatalf("cancelled end = %+v, want paused", end.Goal)
	}
	err = c.Exec("agentd.step.end", map[string]any{"turnId": "no-such-turn", "outputTokens": 1, "finishReason": "stop"}, nil)
	if re, ok := err.(*lsptest.Error); !ok || re.Code != -32602 {
		t.Fatalf("step.end of an unknown turn: %v, want -32602", err)
	}
}

// TestLoopDisconnectMidTurnPauses: a connection that closes in the middle
// of a goal-driven turn pauses the goal (docs/runtime.md §2.3, [agentd]).
func TestLoopDisconnectMidTurnPauses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.start()
	c := p.connect()
	c.Initialize(nil, e.ws)
	h := newHost(c)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "interrupted"}, nil)
	turn, _ := h.beginTurn("user")
	h.beginStep(turn)
	p.Stdin.Close()
	p.waitExit()

	c2 := e.start().connect()
	c2.Initialize(nil, e.ws)
	g := c2.goal()
	if g.Status != "paused" || !strings.Contains(g.TerminalReason, "connection") {
		t.Fatalf("after a disconnect mid-turn: %+v, want paused because the connection closed", g)
	}
}

// TestLoopStaleCallGuard: a goal tool called with the turnId of a turn whose
// goal was replaced is ignored (docs/runtime.md §2.8).
func TestLoopStaleCallGuard(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	h := newHost(c)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "old"}, nil)
	turn, _ := h.beginTurn("user")
	h.beginStep(turn)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "new", "replace": true}, nil)
	var tr toolResult
	c.MustExec("agentd.callTool", map[string]any{"name": "UpdateGoal", "turnId": turn, "input": map[string]any{"status": "complete"}}, &tr)
	if tr.ErrorCode != "goal.stale_call" || tr.IsError {
		t.Fatalf("stale UpdateGoal = %+v, want goal.stale_call, not an error", tr)
	}
	if g := c.goal(); g.Objective != "new" || g.Status != "active" {
		t.Fatalf("the stale call changed the goal: %+v", g)
	}
}

// TestLoopEndedTurnRefusesLateCalls: after agentd.turn.end, a retried
// step.end of the turn's last step answers as before and counts nothing
// again, while a late step.end with other tokens and a turn.begin reusing
// the id (a restarted host numbering turns from 1 again) answer -32602
// saying the turn ended.
func TestLoopEndedTurnRefusesLateCalls(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	h := newHost(c)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "late calls"}, nil)

	turn, _ := h.beginTurn("user")
	h.beginStep(turn)
	first := h.endStep(turn, 5, "stop")
	end := h.endTurn(turn, "completed")
	if retry := h.endStep(turn, 5, "stop"); retry.StopTurn != first.StopTurn || retry.GraceStep != first.GraceStep {
		t.Fatalf("retried step.end = %+v, first %+v", retry, first)
	}
	err := c.Exec("agentd.step.end", map[string]any{"turnId": turn, "outputTokens": 900, "finishReason": "stop"}, nil)
	if re, ok := err.(*lsptest.Error); !ok || re.Code != -32602 || !strings.Contains(re.Message, "has already ended") {
		t.Fatalf("late step.end on an ended turn: %v, want -32602 saying the turn ended", err)
	}
	err = c.Exec("agentd.turn.begin", map[string]any{"turnId": turn, "origin": "user"}, nil)
	if re, ok := err.(*lsptest.Error); !ok || re.Code != -32602 || !strings.Contains(re.Message, "use a new turnId") {
		t.Fatalf("turn.begin with an ended turn's id: %v, want -32602 asking for a new turnId", err)
	}
	var st struct{ Goal *goalSnap }
	c.MustExec("agentd.state", nil, &st)
	if st.Goal.TokensUsed != 5 || st.Goal.TurnsUsed != end.Goal.TurnsUsed {
		t.Fatalf("after the late calls tokens %d turns %d, want 5 and %d", st.Goal.TokensUsed, st.Goal.TurnsUsed, end.Goal.TurnsUsed)
	}
}
