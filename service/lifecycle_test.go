package service_test

import (
	"strings"
	"testing"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/reminder"
	"github.com/agentd/agentd/service"
	"github.com/agentd/agentd/workspace"
)

// TestTurnLifecycle: a goal-driven turn through the service, one
// transaction per host call. A completed turn of an active goal answers
// the normal continuation; a step whose tokens reach the budget answers a
// grace step with the budget-stop injection; the main agent's steps count
// for the stale todo reminder, a subagent's do not.
func TestTurnLifecycle(t *testing.T) {
	opts, root := folder(t)
	svc, ws := open(t, opts, service.Daemon, root)
	update(t, svc, ws, func(g *goal.State) ([]goal.Change, error) {
		return g.Create(goal.CreateParams{Objective: "ship the parser"}, svc.Now())
	})
	const session = workspace.DefaultSession
	settings := reminder.Settings{TodoReminderSteps: 50, TodoReminderInterval: 50} // far from due: no reminder in this test

	begin, err := svc.BeginTurn(ws, session, goal.MainAgent, "t1", goal.OriginUser, false)
	if err != nil || !begin.GoalDriven {
		t.Fatalf("BeginTurn: %+v, %v; want a goal-driven turn", begin, err)
	}
	if _, err := svc.BeginStep(ws, session, goal.MainAgent, "t1", settings); err != nil {
		t.Fatal(err)
	}
	step, injections, err := svc.EndStep(ws, session, goal.MainAgent, "t1", 40, goal.FinishStop)
	if err != nil || step.StopTurn || step.GraceStep || injections == nil || len(injections) != 0 {
		t.Fatalf("EndStep: %+v %v %v; want no stop, no grace step, no injections (an empty list)", step, injections, err)
	}
	if got := view(t, ws).TodoUsage.StepsSinceWrite; got != 1 {
		t.Errorf("main agent's step: %d steps since the todo write, want 1", got)
	}
	if again, _, err := svc.EndStep(ws, session, goal.MainAgent, "t1", 40, goal.FinishStop); err != nil || again.StopTurn != step.StopTurn {
		t.Fatalf("EndStep retried: %+v %v", again, err)
	}
	if got := view(t, ws).TodoUsage.StepsSinceWrite; got != 1 {
		t.Errorf("a retried step end counted for the todo reminder: %d steps since the todo write, want 1", got)
	}
	end, cont, err := svc.EndTurn(ws, session, "t1", goal.OutcomeCompleted, "", "", settings)
	if err != nil || cont == nil || cont.Variant != goal.ContinuationNormal || !strings.Contains(cont.Prompt, "ship the parser") {
		t.Fatalf("EndTurn: %+v %+v %v; want the normal continuation naming the objective", end, cont, err)
	}

	tokens := float64(50)
	update(t, svc, ws, func(g *goal.State) ([]goal.Change, error) {
		return g.SetBudget(goal.BudgetUpdate{Tokens: goal.LimitUpdate{Set: true, Value: &tokens}}, svc.Now())
	})
	if _, err := svc.BeginTurn(ws, session, goal.MainAgent, "t2", goal.OriginContinuation, false); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.BeginStep(ws, session, goal.MainAgent, "t2", settings); err != nil {
		t.Fatal(err)
	}
	step, injections, err = svc.EndStep(ws, session, goal.MainAgent, "t2", 20, goal.FinishToolCalls)
	if err != nil || !step.GraceStep || len(injections) != 1 || injections[0].Variant != reminder.VariantGoalBudgetStop {
		t.Fatalf("EndStep at the token budget: %+v %v %v; want a grace step with the budget-stop injection", step, injections, err)
	}

	if _, err := svc.BeginTurn(ws, "other", "sub", "s1", goal.OriginUser, false); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.BeginStep(ws, "other", "sub", "s1", settings); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.EndStep(ws, "other", "sub", "s1", 1, goal.FinishStop); err != nil {
		t.Fatal(err)
	}
	other, err := ws.View("other")
	if err != nil {
		t.Fatal(err)
	}
	if got := other.TodoUsage.StepsSinceWrite; got != 0 {
		t.Errorf("subagent's step: %d steps since the todo write, want 0 (only the main agent's count)", got)
	}
}
