package tests

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentd/agentd/tests/lsptest"
	"github.com/google/go-cmp/cmp"
)

// Calls on an ended turn (docs/runtime.md §2.4.6), over the real binary:
// a host that goes on with a turn agentd ended (here: the process that
// began it was killed, so the next one ended it) changes nothing.

// expectTurnEnded fails the test unless err is the JSON-RPC refusal
// turn.ended naming turn.
func expectTurnEnded(t testing.TB, what string, err error, turn string) {
	t.Helper()
	var we *lsptest.Error
	if !errors.As(err, &we) || we.Code != -32803 || we.DataCode() != "turn.ended" || !strings.Contains(we.Message, `turn "`+turn+`" has ended`) {
		t.Fatalf("%s: got %v, want the refusal turn.ended naming turn %q", what, err, turn)
	}
}

// endEndedTurn sends agentd.turn.end for turn, which agentd ended itself,
// and expects the refusal turn.ended.
func (h *host) endEndedTurn(turn string) {
	h.t.Helper()
	ctx, cancel := limit()
	defer cancel()
	_, err := h.h.EndTurn(ctx, turn, "completed", nil)
	expectTurnEnded(h.t, "agentd.turn.end of a turn agentd ended", err, turn)
}

// TestCallsOnEndedTurnRefused: after the restart rule ended a host's turn
// (its agentd was killed mid-turn), the host's TodoList and goal tool calls
// on that turn are refused with turn.ended and change neither the list a
// person wrote since nor the goal; its step and turn ends are refused the
// same way. A turn the host ended itself refuses tool calls too, but its
// retried end is answered as before.
func TestCallsOnEndedTurnRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.start()
	a := p.connect()
	a.Initialize(nil, e.ws)
	a.MustExec("agentd.goal.create", map[string]any{"objective": "fenced work"}, nil)
	h := newHost(a)
	turn, _ := h.beginTurn("user")
	h.beginStep(turn)
	p.Cmd.Process.Kill()
	p.waitExit()

	c := e.start().connect()
	c.Initialize(nil, e.ws)
	if g := c.goal(); g.Status != "paused" {
		t.Fatalf("goal after the restart: %+v, want paused", g)
	}
	c.MustExec("agentd.todo.set", map[string]any{"items": []item{{Title: "the person's plan", Status: "pending"}}}, nil)
	c.MustExec("agentd.goal.resume", nil, nil)
	before := c.state()

	h.reconnect(c)
	for _, call := range []struct {
		name  string
		input any
	}{
		{"TodoList", map[string]any{"todos": []item{{Title: "a stale plan", Status: "in_progress"}}}},
		{"TodoList", map[string]any{}},
		{"UpdateGoal", map[string]any{"status": "complete"}},
		{"SetGoalBudget", map[string]any{"value": 1, "unit": "turns"}},
		{"GetGoal", map[string]any{}},
	} {
		res := c.toolIn(turn, call.name, call.input)
		if !res.IsError || res.ErrorCode != "turn.ended" || !strings.Contains(res.Output, "Not run: the turn this call belongs to has ended") {
			t.Fatalf("%s on the ended turn = %+v, want the refusal turn.ended", call.name, res)
		}
	}
	after := c.state()
	if diff := cmp.Diff(before.Todos, after.Todos); diff != "" || after.Revision != before.Revision {
		t.Fatalf("calls on the ended turn changed the session: revision %d → %d, todos (-before +after):\n%s", before.Revision, after.Revision, diff)
	}
	ctx, cancel := limit()
	defer cancel()
	_, err := h.h.BeginStep(ctx, turn)
	expectTurnEnded(t, "agentd.step.begin", err, turn)
	_, err = h.h.EndStep(ctx, turn, 100, "stop")
	expectTurnEnded(t, "agentd.step.end", err, turn)
	h.endEndedTurn(turn)
	if g := c.goal(); g.Status != "active" || g.TokensUsed != 0 {
		t.Fatalf("goal after the refused calls: %+v, want active with no tokens counted", g)
	}

	// A turn its host ended: tool calls on it are refused, its end's
	// retry is answered as the first end was.
	own, _ := h.beginTurn("user")
	h.beginStep(own)
	h.endStep(own, 10, "stop")
	first := h.endTurn(own, "completed")
	if res := c.toolIn(own, "TodoList", map[string]any{"todos": []item{{Title: "late", Status: "pending"}}}); res.ErrorCode != "turn.ended" {
		t.Fatalf("TodoList on a turn its host ended = %+v, want turn.ended", res)
	}
	if again := h.endTurn(own, "completed"); (again.Continuation == nil) != (first.Continuation == nil) {
		t.Fatalf("retried turn end = %+v, want the first answer %+v", again, first)
	}
	if got := c.state().Todos.Items; len(got) != 1 || got[0].Title != "the person's plan" {
		t.Fatalf("todo list = %+v, want the person's plan only", got)
	}
}
