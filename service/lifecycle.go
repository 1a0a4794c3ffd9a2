package service

import (
	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/reminder"
	"github.com/agentd/agentd/todo"
	"github.com/agentd/agentd/workspace"
)

// The agent loop's lifecycle (docs/protocol.md §3): each function runs one
// call of the host on one session in one transaction, on the service's
// clock, and returns what the command answers.

// BeginTurn starts turn turnID of agent in session of ws
// (goal.State.BeginTurn, docs/runtime.md §2.4); a detached turn is marked
// so in the same transaction (goal.State.Detach). Errors: those of
// goal.State.BeginTurn (args.invalid for a turn id in use) and of
// workspace.Workspace.Update.
func (s *Service) BeginTurn(ws *workspace.Workspace, session, agent, turnID string, origin goal.Origin, detached bool) (goal.TurnBegin, error) {
	var res goal.TurnBegin
	_, err := s.UpdateGoal(ws, session, func(g *goal.State) (cs []goal.Change, err error) {
		res, err = g.BeginTurn(turnID, origin, agent, s.Now())
		if err == nil && detached {
			g.Detach(turnID)
		}
		return res.Changes, err
	})
	return res, err
}

// BeginStep opens the next step of turn turnID of agent in session of ws
// (goal.State.BeginStep) and returns what to inject before the model call,
// in the order of reminder.StepInjections (never nil). The todo usage that
// a delivered stale reminder marks is stored in the same transaction.
// Errors: args.invalid for an unknown or ended turn, and those of
// workspace.Workspace.Update.
func (s *Service) BeginStep(ws *workspace.Workspace, session, agent, turnID string, settings reminder.Settings) ([]reminder.Injection, error) {
	var out []reminder.Injection
	_, err := ws.Update(session, func(st *workspace.Session) (workspace.Change, error) {
		now := s.Now()
		before := st.Goal.Snapshot(now)
		var cs []goal.Change
		var err error
		out, cs, err = s.beginStep(ws, st, agent, turnID, settings, now)
		if err != nil {
			return workspace.Change{}, err
		}
		return StoredGoalChange(before, cs), nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// beginStep is BeginStep on st, the session of ws inside its
// transaction. The goal the reminder is built from says whether its check
// may run on this machine (ShowConsent), so that the model is told to ask
// the user while it waits (docs/runtime.md §2.10.4).
func (s *Service) beginStep(ws *workspace.Workspace, st *workspace.Session, agent, turnID string, settings reminder.Settings, now goal.Instant) ([]reminder.Injection, []goal.Change, error) {
	res, err := st.Goal.BeginStep(turnID, now)
	if err != nil {
		return nil, nil, err
	}
	if res.GoalReminderDue && res.Goal != nil && res.Goal.Check != nil {
		s.ShowConsent(ws, st.Name, res.Goal, nil)
	}
	if agent == goal.MainAgent {
		st.TodoUsage.BeginStep()
	}
	return reminder.StepInjections(res, &st.TodoUsage, st.Todos, settings, agent), res.Changes, nil
}

// AbandonTurn ends turn turnID of session in ws as if cancelled, for a
// connection that closed without ending it: a goal-driven turn pauses its
// goal (docs/runtime.md §2.3, [agentd]). A failure is logged, not returned:
// the connection is gone, and the restart rule ends the turn at the next
// open.
func (s *Service) AbandonTurn(ws *workspace.Workspace, session, turnID string) {
	_, err := s.UpdateGoal(ws, session, func(g *goal.State) ([]goal.Change, error) {
		return g.AbandonTurn(turnID, s.Now()), nil
	})
	if err != nil {
		s.log.Error("abandoned turn not recorded", "turn", turnID, "session", session, "err", err)
	}
}

// EndStep ends the open step of turn turnID of agent in session of ws
// (goal.State.EndStep: outputTokens count against the token budget,
// docs/runtime.md §2.4) and counts the step for the main agent's stale
// todo reminder (docs/runtime.md §1.1); a retry (no step open) counts
// nothing (docs/runtime.md §2.4.2). The injections are the budget-stop
// notice of a grace step, else none (never nil). Errors: those of
// goal.State.EndStep and of workspace.Workspace.Update.
func (s *Service) EndStep(ws *workspace.Workspace, session, agent, turnID string, outputTokens int64, finish goal.FinishReason) (goal.StepEnd, []reminder.Injection, error) {
	var res goal.StepEnd
	var injections []reminder.Injection
	_, err := ws.Update(session, func(st *workspace.Session) (workspace.Change, error) {
		// This may run more than once (another daemon of a team wrote the
		// session meanwhile): it sets what it returns, never adds to it.
		var err error
		now := s.Now()
		before := st.Goal.Snapshot(now)
		res, injections, err = endStep(st, agent, turnID, outputTokens, finish, now)
		if err != nil {
			return workspace.Change{}, err
		}
		return StoredGoalChange(before, res.Changes), nil
	})
	if err != nil {
		return goal.StepEnd{}, nil, err
	}
	return res, injections, nil
}

// endStep is EndStep on st, the session inside its transaction.
func endStep(st *workspace.Session, agent, turnID string, outputTokens int64, finish goal.FinishReason, now goal.Instant) (goal.StepEnd, []reminder.Injection, error) {
	res, err := st.Goal.EndStep(turnID, outputTokens, finish, now)
	if err != nil {
		return goal.StepEnd{}, nil, err
	}
	if agent == goal.MainAgent && !res.Retry {
		st.TodoUsage.EndStep()
	}
	injections := []reminder.Injection{}
	if res.GraceStep && res.Goal != nil {
		injections = append(injections, reminder.BudgetStop(res.Goal.ModelView()))
	}
	return res, injections, nil
}

// StepNext is the answer of NextStep: the step end, and the next step's
// begin (nil when the end stopped the turn).
type StepNext struct {
	End           goal.StepEnd
	EndInjections []reminder.Injection
	// BeginInjections is what to inject before the next model call, in the
	// order of reminder.StepInjections; nil when End.StopTurn.
	BeginInjections []reminder.Injection
}

// NextStep is EndStep then, unless that end stops the turn, BeginStep of
// the next step, on one session state in one transaction (one commit):
// agentd.step.next at a step boundary (docs/protocol.md §3). The state,
// the answers, the history event and the notifications are those of the
// two calls in sequence: a step begun after the turn's first adds no
// visible goal change (goal.State.BeginStep), so the one stored change is
// the end's (its goal changes, or quiet bookkeeping), and the begin's
// bookkeeping (the open step, consumed notices, the stale reminder's
// delivery) is stored with it. Errors: those of EndStep and of BeginStep
// (a begin refused after an end that was only a retry, of a turn already
// ended), each refusing the whole: nothing is stored.
func (s *Service) NextStep(ws *workspace.Workspace, session, agent, turnID string, outputTokens int64, finish goal.FinishReason, settings reminder.Settings) (StepNext, error) {
	var res StepNext
	_, err := ws.Update(session, func(st *workspace.Session) (workspace.Change, error) {
		// Set, never added to: this may run more than once (EndStep).
		res = StepNext{}
		now := s.Now()
		before := st.Goal.Snapshot(now)
		var err error
		if res.End, res.EndInjections, err = endStep(st, agent, turnID, outputTokens, finish, now); err != nil {
			return workspace.Change{}, err
		}
		cs := res.End.Changes
		if !res.End.StopTurn {
			var begun []goal.Change
			if res.BeginInjections, begun, err = s.beginStep(ws, st, agent, turnID, settings, now); err != nil {
				return workspace.Change{}, err
			}
			cs = append(cs, begun...)
		}
		return StoredGoalChange(before, cs), nil
	})
	if err != nil {
		return StepNext{}, err
	}
	return res, nil
}

// EndTurn ends turn turnID of session in ws with outcome (and the host's
// error kind and message, for a failed turn) (goal.State.EndTurn,
// docs/runtime.md §2.5, §2.6), and returns the continuation prompt the
// host sends next, or nil. Errors: those of goal.State.EndTurn, of
// workspace.Workspace.Update, and of reminder.Continue for a variant it
// does not know. The stall rule counts the turn under
// settings.StallTurns (docs/runtime.md §2.4.5).
func (s *Service) EndTurn(ws *workspace.Workspace, session, turnID string, outcome goal.Outcome, errKind, errMsg string, settings reminder.Settings) (goal.TurnEnd, *reminder.Continuation, error) {
	var res goal.TurnEnd
	var todos []todo.Item
	_, err := s.updateGoalOf(ws, session, workspace.Request{}, func(st *workspace.Session) (cs []goal.Change, err error) {
		res, err = st.Goal.EndTurn(turnID, outcome, errKind, errMsg, settings.StallTurns, s.Now())
		todos = st.Todos
		return res.Changes, err
	})
	if err != nil {
		return goal.TurnEnd{}, nil, err
	}
	res.Goal = res.Goal.WithPlan(todos) // the progress, and the open items the continuation names (docs/runtime.md §2.12)
	if res.Continuation == goal.NoContinuation || res.Goal == nil {
		return res, nil, nil
	}
	cont, err := reminder.Continue(res.Goal.ModelView(), res.Continuation)
	if err != nil {
		return goal.TurnEnd{}, nil, err
	}
	return res, &cont, nil
}
