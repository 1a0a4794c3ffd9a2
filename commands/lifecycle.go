package commands

import (
	"context"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/reminder"
	"github.com/agentd/agentd/workspace"
)

// Agent-loop lifecycle (docs/protocol.md §3): a host reports turns and steps;
// agentd counts them against the goal, enforces budgets, and answers the
// injections and continuations of docs/runtime.md §1.1 and §2.4–§2.7.

type turnBeginArgs struct {
	Common
	TurnID string      `json:"turnId"`
	Origin goal.Origin `json:"origin"`
	// Detached: the turn outlives the connection that began it (a host
	// that connects once per event, agentd hook); it is never abandoned
	// when that connection closes, only ended by agentd.turn.end.
	Detached bool `json:"detached"`
}

type stepBeginArgs struct {
	Common
	TurnID string `json:"turnId"`
}

type stepEndArgs struct {
	Common
	TurnID       string            `json:"turnId"`
	OutputTokens int64             `json:"outputTokens"`
	FinishReason goal.FinishReason `json:"finishReason"`
}

type stepNextArgs struct {
	Common
	TurnID       string            `json:"turnId"`
	OutputTokens int64             `json:"outputTokens"`
	FinishReason goal.FinishReason `json:"finishReason"`
}

type turnEndArgs struct {
	Common
	TurnID  string       `json:"turnId"`
	Outcome goal.Outcome `json:"outcome"`
	Error   *struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"error"`
}

// TurnBeginResult is the answer of agentd.turn.begin.
type TurnBeginResult struct {
	GoalDriven bool           `json:"goalDriven"`
	Goal       *goal.Snapshot `json:"goal"`
}

// StepBeginResult is the answer of agentd.step.begin: what to inject before
// the model call, in order.
type StepBeginResult struct {
	Injections []reminder.Injection `json:"injections"`
}

// StepEndResult is the answer of agentd.step.end. GraceStep: run exactly one
// more step with Injections (the goal_budget_stop notice); StopTurn: end the
// turn now.
type StepEndResult struct {
	StopTurn   bool                 `json:"stopTurn"`
	GraceStep  bool                 `json:"graceStep"`
	Injections []reminder.Injection `json:"injections"`
}

// StepNextResult is the answer of agentd.step.next: what agentd.step.end
// and then agentd.step.begin would have answered, in one commit. Begin is
// null when End.StopTurn (no next step was begun).
type StepNextResult struct {
	End   StepEndResult    `json:"end"`
	Begin *StepBeginResult `json:"begin"`
}

// TurnEndResult is the answer of agentd.turn.end.
type TurnEndResult struct {
	Continuation *reminder.Continuation `json:"continuation"`
	Goal         *goal.Snapshot         `json:"goal"`
}

func requireTurnID(cmd, id string) error {
	if id == "" {
		return argsErrorf("%s: field \"turnId\" is required (a string the host chooses per turn)", cmd)
	}
	return nil
}

var lifecycleCommands = []Command{
	def[TurnBeginResult]("agentd.turn.begin", "`turnId`, `origin` (`user`/`continuation`/`resume`), `detached?`", "Starts a turn; `{goalDriven, goal}` (docs/runtime.md §2.4). A `detached` turn is not ended when the connection that began it closes (docs/hooks.md).", true,
		func(ctx context.Context, c *call, a *turnBeginArgs) (any, error) {
			if err := requireTurnID("agentd.turn.begin", a.TurnID); err != nil {
				return nil, err
			}
			res, err := c.svc.BeginTurn(c.folder.ws, c.session, c.agent, a.TurnID, a.Origin, a.Detached)
			if err != nil {
				return nil, err
			}
			if !a.Detached {
				c.client.trackTurn(c.folder.ws, c.session, a.TurnID)
			}
			return TurnBeginResult{GoalDriven: res.GoalDriven, Goal: res.Goal}, nil
		}),
	def[StepBeginResult]("agentd.step.begin", "`turnId`", "Before a model call: `{injections}` (goal_cancelled, goal, goal_wrap_up, todo_list_reminder; docs/runtime.md §2.7.1).", true,
		func(ctx context.Context, c *call, a *stepBeginArgs) (any, error) {
			if err := requireTurnID("agentd.step.begin", a.TurnID); err != nil {
				return nil, err
			}
			injections, err := c.svc.BeginStep(c.folder.ws, c.session, c.agent, a.TurnID, c.defaults.Settings)
			if err != nil {
				return nil, err
			}
			return StepBeginResult{Injections: injections}, nil
		}),
	def[StepEndResult]("agentd.step.end", "`turnId`, `outputTokens`, `finishReason` (`stop`/`tool_calls`)", "After a step's tools ran: `{stopTurn, graceStep, injections}` (docs/runtime.md §2.4).", true,
		func(ctx context.Context, c *call, a *stepEndArgs) (any, error) {
			if err := requireTurnID("agentd.step.end", a.TurnID); err != nil {
				return nil, err
			}
			if a.OutputTokens < 0 {
				return nil, argsErrorf("agentd.step.end: outputTokens must be 0 or more, got %d", a.OutputTokens)
			}
			res, injections, err := c.svc.EndStep(c.folder.ws, c.session, c.agent, a.TurnID, a.OutputTokens, a.FinishReason)
			if err != nil {
				return nil, err
			}
			return StepEndResult{StopTurn: res.StopTurn, GraceStep: res.GraceStep, Injections: injections}, nil
		}),
	def[StepNextResult]("agentd.step.next", "`turnId`, `outputTokens`, `finishReason` (`tool_calls`)", "At a step boundary: `agentd.step.end` then, unless it stops the turn, `agentd.step.begin`, in one commit; `{end, begin}`, `begin` null after a `stopTurn` (docs/protocol.md §3).", true,
		func(ctx context.Context, c *call, a *stepNextArgs) (any, error) {
			if err := requireTurnID("agentd.step.next", a.TurnID); err != nil {
				return nil, err
			}
			if a.OutputTokens < 0 {
				return nil, argsErrorf("agentd.step.next: outputTokens must be 0 or more, got %d", a.OutputTokens)
			}
			if a.FinishReason != goal.FinishToolCalls {
				return nil, argsErrorf("agentd.step.next: finishReason %q is not valid here; a step boundary is a step that ended with tool_calls (end a step that stops with agentd.step.end)", a.FinishReason)
			}
			res, err := c.svc.NextStep(c.folder.ws, c.session, c.agent, a.TurnID, a.OutputTokens, a.FinishReason, c.defaults.Settings)
			if err != nil {
				return nil, err
			}
			out := StepNextResult{End: StepEndResult{StopTurn: res.End.StopTurn, GraceStep: res.End.GraceStep, Injections: res.EndInjections}}
			if !res.End.StopTurn {
				out.Begin = &StepBeginResult{Injections: res.BeginInjections}
			}
			return out, nil
		}),
	def[TurnEndResult]("agentd.turn.end", "`turnId`, `outcome` (`completed`/`cancelled`/`failed`/`blocked`/`stepLimit`), `error?: {kind, message}`", "Ends a turn: `{continuation: {variant, prompt} or null, goal}` (docs/runtime.md §2.5, §2.6).", true,
		func(ctx context.Context, c *call, a *turnEndArgs) (any, error) {
			if err := requireTurnID("agentd.turn.end", a.TurnID); err != nil {
				return nil, err
			}
			var kind, msg string
			if a.Error != nil {
				kind, msg = a.Error.Kind, a.Error.Message
			}
			res, cont, err := c.svc.EndTurn(c.folder.ws, c.session, a.TurnID, a.Outcome, kind, msg, c.defaults.Settings)
			if err != nil {
				return nil, err
			}
			c.client.untrackTurn(c.folder.ws, c.session, a.TurnID)
			return TurnEndResult{Goal: res.Goal, Continuation: cont}, nil
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
