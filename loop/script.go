package loop

import (
	"context"
	"encoding/json"

	"github.com/agentd/agentd/commands/protocol"
)

// Script is a recorded conversation (docs/simulate.md): an optional goal to
// create, then turns of steps with their output tokens and tool calls.
type Script struct {
	Description string      `json:"description"`
	Session     string      `json:"session"`
	Goal        *ScriptGoal `json:"goal"`
	Turns       []Turn      `json:"turns"`
}

// ScriptGoal is the goal a script creates, replacing the session's goal,
// and its budget (agentd.goal.setBudget arguments; none when absent).
type ScriptGoal struct {
	Objective           string                 `json:"objective"`
	CompletionCriterion string                 `json:"completionCriterion"`
	TaskFile            string                 `json:"taskFile"`
	Budget              *protocol.BudgetUpdate `json:"budget"`
}

// Turn is one turn of a script. Origin "" means "continuation" right after
// a turn that ended with a continuation, else "user"; Outcome "" means
// "completed".
type Turn struct {
	Origin  protocol.Origin  `json:"origin"`
	Steps   []Step           `json:"steps"`
	Outcome protocol.Outcome `json:"outcome"`
	Error   *Failure         `json:"error"`
}

// Step is one model call: the tools it calls, then its output tokens and
// finish reason.
type Step struct {
	OutputTokens int64                 `json:"outputTokens"`
	FinishReason protocol.FinishReason `json:"finishReason"`
	Tools        []Tool                `json:"tools"`
}

// Tool is one tool call of a step.
type Tool struct {
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// Observer is told what agentd answers while Play runs; any func may be
// nil. turn and step count from 1.
type Observer struct {
	GoalSet    func(st protocol.State)
	TurnBegan  func(turn int, origin protocol.Origin, res protocol.TurnBeginResult)
	StepBegan  func(turn, step int, res protocol.StepBeginResult)
	ToolCalled func(turn, step int, tool Tool, res protocol.ToolResult)
	StepEnded  func(turn, step int, s Step, res protocol.StepEndResult)
	TurnEnded  func(turn int, res protocol.TurnEndResult)
}

// Play runs sc on h as a host would: it creates the script's goal (with
// replace) and budget, then plays every turn. Each step begins, calls its
// tools in the turn and ends; a step that ends with tool_calls and has a
// next step ends with that step's begin in one agentd.step.next (Host.NextStep),
// observed as the end and then the begin; when agentd answers stopTurn, the turn's
// remaining steps are skipped and it ends "completed". A turn without an
// origin follows the previous turn's continuation (docs/runtime.md §2.5).
// Play returns the session's state after the last turn; it stops at the
// first command agentd refuses.
func Play(ctx context.Context, h *Host, sc *Script, obs Observer) (protocol.State, error) {
	var st protocol.State
	if g := sc.Goal; g != nil {
		if err := h.Exec(ctx, protocol.CmdGoalCreate, &protocol.GoalCreateArgs{Objective: g.Objective, CompletionCriterion: g.CompletionCriterion, TaskFile: g.TaskFile, Replace: true}, &st); err != nil {
			return st, err
		}
		if g.Budget != nil {
			if err := h.Exec(ctx, protocol.CmdGoalSetBudget, &protocol.GoalSetBudgetArgs{BudgetUpdate: *g.Budget}, &st); err != nil {
				return st, err
			}
		}
		if obs.GoalSet != nil {
			obs.GoalSet(st)
		}
	}
	continued := false
	for i, t := range sc.Turns {
		origin := t.Origin
		if origin == "" {
			origin = protocol.OriginUser
			if continued {
				origin = protocol.OriginContinuation
			}
		}
		turn, begin, err := h.BeginTurn(ctx, origin)
		if err != nil {
			return st, err
		}
		if obs.TurnBegan != nil {
			obs.TurnBegan(i+1, origin, begin)
		}
		stopped, err := playSteps(ctx, h, turn, i+1, t.Steps, obs)
		if err != nil {
			return st, err
		}
		outcome := t.Outcome
		if outcome == "" || stopped {
			outcome = protocol.OutcomeCompleted
		}
		end, err := h.EndTurn(ctx, turn, outcome, t.Error)
		if err != nil {
			return st, err
		}
		if obs.TurnEnded != nil {
			obs.TurnEnded(i+1, end)
		}
		continued = end.Continuation != nil
	}
	err := h.Exec(ctx, protocol.CmdState, &protocol.NoArgs{}, &st)
	return st, err
}

// playSteps plays the steps of turn n; stopped says agentd answered
// stopTurn.
func playSteps(ctx context.Context, h *Host, turn string, n int, steps []Step, obs Observer) (stopped bool, err error) {
	var sb protocol.StepBeginResult
	begun := false // the step.next that ended the previous step began this one
	for j, s := range steps {
		if !begun {
			if sb, err = h.BeginStep(ctx, turn); err != nil {
				return false, err
			}
		}
		begun = false
		if obs.StepBegan != nil {
			obs.StepBegan(n, j+1, sb)
		}
		for _, tool := range s.Tools {
			tr, err := h.CallTool(ctx, turn, tool.Name, tool.Input)
			if err != nil {
				return false, err
			}
			if obs.ToolCalled != nil {
				obs.ToolCalled(n, j+1, tool, tr)
			}
		}
		var se protocol.StepEndResult
		if s.FinishReason == protocol.FinishToolCalls && j+1 < len(steps) {
			next, err := h.NextStep(ctx, turn, s.OutputTokens)
			if err != nil {
				return false, err
			}
			se = next.End
			if next.Begin != nil {
				sb, begun = *next.Begin, true
			}
		} else if se, err = h.EndStep(ctx, turn, s.OutputTokens, s.FinishReason); err != nil {
			return false, err
		}
		if obs.StepEnded != nil {
			obs.StepEnded(n, j+1, s, se)
		}
		if se.StopTurn {
			return true, nil
		}
	}
	return false, nil
}
