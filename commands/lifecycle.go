package commands

import (
	"context"
	"github.com/agentd/agentd/commands/protocol"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/workspace"
)

// Agent-loop lifecycle (docs/protocol.md §3): a host reports turns and steps;
// agentd counts them against the goal, enforces budgets, and answers the
// injections and continuations of docs/runtime.md §1.1 and §2.4–§2.7.

func requireTurnID(cmd protocol.CommandID, id string) error {
	if id == "" {
		return argsErrorf("%s: field \"turnId\" is required (a string the host chooses per turn)", cmd)
	}
	return nil
}

var lifecycleCommands = []Command{
	def[protocol.TurnBeginResult](protocol.CmdTurnBegin,
		func(ctx context.Context, c *call, a *protocol.TurnBeginArgs) (protocol.TurnBeginResult, error) {
			if err := requireTurnID(protocol.CmdTurnBegin, a.TurnID); err != nil {
				return protocol.TurnBeginResult{}, err
			}
			res, err := c.svc.BeginTurn(c.folder.ws, c.session, c.agent, a.TurnID, a.Origin, a.Detached)
			if err != nil {
				return protocol.TurnBeginResult{}, err
			}
			if !a.Detached {
				c.client.trackTurn(c.folder.ws, c.session, a.TurnID)
			}
			return protocol.TurnBeginResult{GoalDriven: res.GoalDriven, Goal: wireGoal(res.Goal)}, nil
		}),
	def[protocol.StepBeginResult](protocol.CmdStepBegin,
		func(ctx context.Context, c *call, a *protocol.StepBeginArgs) (protocol.StepBeginResult, error) {
			if err := requireTurnID(protocol.CmdStepBegin, a.TurnID); err != nil {
				return protocol.StepBeginResult{}, err
			}
			injections, err := c.svc.BeginStep(c.folder.ws, c.session, c.agent, a.TurnID, c.defaults.Settings)
			if err != nil {
				return protocol.StepBeginResult{}, err
			}
			return protocol.StepBeginResult{Injections: injections}, nil
		}),
	def[protocol.StepEndResult](protocol.CmdStepEnd,
		func(ctx context.Context, c *call, a *protocol.StepEndArgs) (protocol.StepEndResult, error) {
			if err := requireTurnID(protocol.CmdStepEnd, a.TurnID); err != nil {
				return protocol.StepEndResult{}, err
			}
			if a.OutputTokens < 0 {
				return protocol.StepEndResult{}, argsErrorf("agentd.step.end: outputTokens must be 0 or more, got %d", a.OutputTokens)
			}
			res, injections, err := c.svc.EndStep(c.folder.ws, c.session, c.agent, a.TurnID, a.OutputTokens, a.FinishReason)
			if err != nil {
				return protocol.StepEndResult{}, err
			}
			return protocol.StepEndResult{StopTurn: res.StopTurn, GraceStep: res.GraceStep, Injections: injections}, nil
		}),
	def[protocol.StepNextResult](protocol.CmdStepNext,
		func(ctx context.Context, c *call, a *protocol.StepNextArgs) (protocol.StepNextResult, error) {
			if err := requireTurnID(protocol.CmdStepNext, a.TurnID); err != nil {
				return protocol.StepNextResult{}, err
			}
			if a.OutputTokens < 0 {
				return protocol.StepNextResult{}, argsErrorf("agentd.step.next: outputTokens must be 0 or more, got %d", a.OutputTokens)
			}
			if a.FinishReason != goal.FinishToolCalls {
				return protocol.StepNextResult{}, argsErrorf("agentd.step.next: finishReason %q is not valid here; a step boundary is a step that ended with tool_calls (end a step that stops with agentd.step.end)", a.FinishReason)
			}
			res, err := c.svc.NextStep(c.folder.ws, c.session, c.agent, a.TurnID, a.OutputTokens, a.FinishReason, c.defaults.Settings)
			if err != nil {
				return protocol.StepNextResult{}, err
			}
			out := protocol.StepNextResult{End: protocol.StepEndResult{StopTurn: res.End.StopTurn, GraceStep: res.End.GraceStep, Injections: res.EndInjections}}
			if !res.End.StopTurn {
				out.Begin = &protocol.StepBeginResult{Injections: res.BeginInjections}
			}
			return out, nil
		}),
	def[protocol.TurnEndResult](protocol.CmdTurnEnd,
		func(ctx context.Context, c *call, a *protocol.TurnEndArgs) (protocol.TurnEndResult, error) {
			if err := requireTurnID(protocol.CmdTurnEnd, a.TurnID); err != nil {
				return protocol.TurnEndResult{}, err
			}
			var kind, msg string
			if a.Error != nil {
				kind, msg = a.Error.Kind, a.Error.Message
			}
			res, cont, err := c.svc.EndTurn(c.folder.ws, c.session, a.TurnID, a.Outcome, kind, msg, c.defaults.Settings)
			if protocol.ErrorCode(err) == protocol.CodeTurnEnded {
				c.client.untrackTurn(c.folder.ws, c.session, a.TurnID) // agentd ended it (docs/runtime.md §2.4.6)
			}
			if err != nil {
				return protocol.TurnEndResult{}, err
			}
			c.client.untrackTurn(c.folder.ws, c.session, a.TurnID)
			return protocol.TurnEndResult{Goal: wireGoal(res.Goal), Continuation: wireContinuation(cont)}, nil
		}),
}

// turnKey names a turn begun by a client.
type turnKey struct {
	ws      *workspace.Workspace
	session string
	turnID  string
}

func (cl *Client) trackTurn(ws *workspace.Workspace, session, id string) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.turns == nil {
		cl.turns = map[turnKey]struct{}{}
	}
	cl.turns[turnKey{ws, session, id}] = struct{}{}
}

// untrackTurn forgets an ended turn; the store of a removed folder held for
// it is released with the folder's last live turn.
func (cl *Client) untrackTurn(ws *workspace.Workspace, session, id string) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	delete(cl.turns, turnKey{ws, session, id})
	if cl.hasTurnsLocked(ws) {
		return
	}
	for i, h := range cl.held {
		if h == ws {
			cl.held = append(cl.held[:i], cl.held[i+1:]...)
			ws.Release()
			return
		}
	}
}

// hasTurnsLocked reports whether the client has a live turn on ws. cl.mu
// must be held.
func (cl *Client) hasTurnsLocked(ws *workspace.Workspace) bool {
	for k := range cl.turns {
		if k.ws == ws {
			return true
		}
	}
	return false
}

// abandonTurns ends the turns this client began and never ended, as if
// cancelled: a goal-driven one pauses its goal (docs/runtime.md §2.3, [agentd]).
// Called by Close before the folders are released.
func (cl *Client) abandonTurns() {
	cl.mu.Lock()
	turns := cl.turns
	cl.turns = nil
	cl.mu.Unlock()
	for k := range turns {
		cl.svc.AbandonTurn(k.ws, k.session, k.turnID)
	}
}
