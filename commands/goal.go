package commands

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"github.com/agentd/agentd/commands/protocol"
	"slices"
	"strings"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/workspace"
	"github.com/agentd/agentd/workspace/taskfile"
)

// updateGoal runs fn on the goal state of the call's session and stores
// the result with its changes in one transaction (service.UpdateGoal).
func (c *call) updateGoal(fn func(g *goal.State) ([]goal.Change, error)) (workspace.Session, error) {
	return c.svc.UpdateGoal(c.folder.ws, c.session, fn)
}

// resolveTaskFile finds a new goal's task file (docs/runtime.md §2.2, §4): the
// explicit path, else the first word of the objective that names an
// existing file inside the workspace. It reads the file, so it runs before
// the transaction.
func (c *call) resolveTaskFile(explicit, objective string) (*goal.TaskFileInfo, error) {
	if explicit != "" {
		info, err := taskfile.Read(c.folder.ws.Root(), explicit)
		if err != nil {
			return nil, err
		}
		return &info, nil
	}
	return taskfile.Find(c.folder.ws.Root(), goal.TaskFileCandidates(objective)), nil
}

// goalTools are the four goal tools, in the order of goal.Tools.
func goalTools() []tool {
	var out []tool
	for _, t := range goal.Tools() {
		out = append(out, goalTool(t))
	}
	return out
}

// goalTool is one of the four goal tools (docs/runtime.md §2.8). goal.NewCall
// decodes the input, once, and refuses what needs no state.
func goalTool(info goal.Tool) tool {
	return tool{
		info: info,
		prepare: func(c *call, input json.RawMessage) (toolCall, error) {
			gc, err := goal.NewCall(info.Name, input, c.agent)
			if err != nil {
				return toolCall{}, err
			}
			desc := protocol.ToolDescription{Description: gc.Description.Description}
			if gc.Description.Display != nil {
				desc.Display = gc.Description.Display
			}
			return toolCall{desc: desc, run: func(ctx context.Context, c *call, cur workspace.Session, turnID string) (protocol.ToolResult, error) {
				return runGoalTool(ctx, c, info.Name, goal.ToolCall{Call: gc, TurnID: turnID}, cur)
			}}, nil
		},
	}
}

// runGoalTool runs a decoded call of the goal tool named name on the
// session read as cur. CreateGoal's task file is resolved first, outside
// the transaction (it reads the file). An UpdateGoal complete that runs
// the goal's check releases the request's place in the order once the
// check is marked running (ReleaseOrder).
func runGoalTool(ctx context.Context, c *call, name string, tc goal.ToolCall, cur workspace.Session) (protocol.ToolResult, error) {
	if cg, ok := tc.Input.(goal.CreateGoalInput); ok {
		tf, err := c.resolveTaskFile(cg.TaskFile, cg.Objective)
		if err != nil {
			return refusal(protocol.ErrorCode(err), tc.Description.Description, "The goal was not created: "+err.Error()+"."), nil
		}
		tc.TaskFile = tf
	}
	if ug, ok := tc.Input.(goal.UpdateGoalInput); ok && ug.Wait != nil {
		p, err := c.svc.WaitParams(c.folder.ws, c.session, *ug.Wait, "")
		if err != nil {
			return refusal(protocol.ErrorCode(err), tc.Description.Description, "Goal not waiting: "+err.Error()+"."), nil
		}
		tc.Wait = &p
	}
	return c.svc.CallGoalTool(ctx, c.folder.ws, c.session, name, tc, cur, func() { releaseOrder(ctx) })
}

// Exit codes of `agentd goal status --exit-code` (docs/protocol.md §1,
// docs/commands.md): one per goal status, 1 for no goal. ExitUnknownStatus
// is for a status this version does not know (a state written by a newer
// agentd, or a status added without its code): an internal error, never
// taken for "complete".
const (
	ExitComplete      = 0
	ExitNoGoal        = 1
	ExitActive        = 2
	ExitBlocked       = 3
	ExitPaused        = 6
	ExitWaiting       = 7
	ExitUnknownStatus = 5
)

// StatusExitCode is the exit code of `agentd goal status --exit-code` for
// the goal g (nil for no goal). Error: a status it does not know, with
// ExitUnknownStatus.
func StatusExitCode(g *protocol.GoalSnapshot) (int, error) {
	if g == nil {
		return ExitNoGoal, nil
	}
	switch goal.Status(g.Status) {
	case goal.Complete:
		return ExitComplete, nil
	case goal.Active:
		return ExitActive, nil
	case goal.Blocked:
		return ExitBlocked, nil
	case goal.Paused:
		return ExitPaused, nil
	case goal.Waiting:
		return ExitWaiting, nil
	}
	return ExitUnknownStatus, fmt.Errorf("internal error: the goal has status %q, which this agentd does not know", g.Status)
}

// StatusExitCodes is the list of the exit codes of `agentd goal status
// --exit-code` as the help texts and the docs state it, ordered by code:
// "0 complete, 1 no goal, 2 active, ..." (StatusExitCode of each of
// goal.Statuses and of no goal). A status StatusExitCode does not know is
// left out; TestEveryGoalStatus in tests/ fails on it.
func StatusExitCodes() string {
	type entry struct {
		code int
		name string
	}
	entries := []entry{{ExitNoGoal, "no goal"}}
	for _, s := range goal.Statuses() {
		if code, err := StatusExitCode(&protocol.GoalSnapshot{Status: protocol.GoalStatus(s)}); err == nil {
			entries = append(entries, entry{code, string(s)})
		}
	}
	slices.SortFunc(entries, func(a, b entry) int { return cmp.Compare(a.code, b.code) })
	parts := make([]string, len(entries))
	for i, e := range entries {
		parts[i] = fmt.Sprintf("%d %s", e.code, e.name)
	}
	return strings.Join(parts, ", ")
}

// goalCreatePersonPart is what a goal.create call does that only the person may
// (personOnlyWhen): set a check, or replace a goal, dropping the check and
// budgets set on it; "" for neither.
func goalCreatePersonPart(a *protocol.GoalCreateArgs) string {
	switch {
	case a.Check != "":
		return "set a goal's check"
	case a.Replace:
		return "replace the goal, and with it the check and budgets set on it (the CreateGoal tool says what the model may replace)"
	case a.RequireTodos != nil && !*a.RequireTodos:
		return "create a goal that does not require its todo items"
	}
	return ""
}

// approveSet approves, on this machine, the check a person just set on
// g through this agentd (docs/runtime.md §2.10.4), unless setting it
// failed with err, which it returns. It runs inside the transaction, so
// the check is approved before anyone can see it set.
func (c *call) approveSet(g *goal.State, err error) error {
	if err != nil || g.Goal == nil || g.Goal.Check == nil {
		return err
	}
	return c.svc.ApproveForPerson(c.folder.ws, g.Goal.Check.Command)
}

// userGoal is a host command that changes the goal as the user and answers
// the new State.
func userGoal[A any, PA interface {
	*A
	withCommon
}](id protocol.CommandID, fn func(c *call, a PA, g *goal.State) ([]goal.Change, error)) Command {
	return def[protocol.State, A](id, func(ctx context.Context, c *call, a PA) (protocol.State, error) {
		s, err := c.updateGoal(func(g *goal.State) ([]goal.Change, error) { return fn(c, a, g) })
		if err != nil {
			return protocol.State{}, err
		}
		return c.stateOf(s), nil
	})
}

var goalCommands = []Command{
	personOnlyWhen(def[protocol.State](protocol.CmdGoalCreate,
		func(ctx context.Context, c *call, a *protocol.GoalCreateArgs) (protocol.State, error) {
			tf, err := c.resolveTaskFile(a.TaskFile, a.Objective)
			if err != nil {
				return protocol.State{}, err
			}
			if err := workspace.CheckRequestID(a.RequestID); err != nil {
				return protocol.State{}, err
			}
			s, err := c.svc.UpdateGoalOnce(c.folder.ws, c.session, a.RequestID, func(g *goal.State) ([]goal.Change, error) {
				person := c.svc.Person()
				cs, err := g.Create(goal.CreateParams{Objective: a.Objective, CompletionCriterion: a.CompletionCriterion, Replace: a.Replace, TaskFile: tf, Check: a.Check, CheckSetBy: &person,
					TodosOptional: a.RequireTodos != nil && !*a.RequireTodos}, c.svc.Now())
				return cs, c.approveSet(g, err)
			})
			if err != nil {
				return protocol.State{}, err
			}
			return c.stateOf(s), nil
		}), "with a `check`, `replace` or `requireTodos: false`", goalCreatePersonPart),
	userGoal(protocol.CmdGoalPause,
		func(c *call, a *protocol.GoalPauseArgs, g *goal.State) ([]goal.Change, error) {
			return g.Pause(a.Reason, c.svc.Now())
		}).personOnly("pause the goal"),
	userGoal(protocol.CmdGoalResume,
		func(c *call, a *protocol.NoArgs, g *goal.State) ([]goal.Change, error) {
			return g.Resume(c.svc.Now())
		}).personOnly("resume a goal that was paused or stopped by its budget"),
	personOnlyWhen(def[protocol.State](protocol.CmdGoalWait,
		func(ctx context.Context, c *call, a *protocol.GoalWaitArgs) (protocol.State, error) {
			// The paths are read before the transaction.
			p, err := c.svc.WaitParams(c.folder.ws, c.session, a.WaitConditions, a.WallClock)
			if err != nil {
				return protocol.State{}, err
			}
			s, err := c.updateGoal(func(g *goal.State) ([]goal.Change, error) { return g.Wait(p, c.actor(), c.svc.Now()) })
			if err != nil {
				return protocol.State{}, err
			}
			return c.stateOf(s), nil
		}), "with `wallClock: \"stops\"`", func(a *protocol.GoalWaitArgs) string {
		if a.WallClock == string(goal.WallClockStops) {
			return "stop the wall clock while the goal waits"
		}
		return ""
	}),
	def[protocol.CancelResult](protocol.CmdGoalCancel,
		func(ctx context.Context, c *call, a *protocol.NoArgs) (protocol.CancelResult, error) {
			var ended *goal.Snapshot
			s, err := c.updateGoal(func(g *goal.State) ([]goal.Change, error) {
				cs, err := g.Cancel(c.svc.Now())
				if len(cs) > 0 {
					ended = cs[0].Goal
				}
				return cs, err
			})
			if err != nil {
				return protocol.CancelResult{}, err
			}
			return protocol.CancelResult{State: c.stateOf(s), Cancelled: wireGoal(ended)}, nil
		}).personOnly("cancel the goal"),
	userGoal(protocol.CmdGoalSetCheck,
		func(c *call, a *protocol.GoalSetCheckArgs, g *goal.State) ([]goal.Change, error) {
			cs, err := g.SetCheck(a.Command, c.svc.Person(), c.svc.Now())
			return cs, c.approveSet(g, err)
		}).personOnly("set or remove the goal's check"),
	def[protocol.State](protocol.CmdGoalApproveCheck,
		func(ctx context.Context, c *call, a *protocol.GoalApproveCheckArgs) (protocol.State, error) {
			s, err := c.svc.ApproveCheck(c.folder.ws, c.session, a.Command)
			if err != nil {
				return protocol.State{}, err
			}
			return c.stateOf(s), nil
		}).personOnly("approve the goal's check, which then runs on this machine"),
	def[protocol.CheckResult](protocol.CmdGoalRunCheck,
		func(ctx context.Context, c *call, a *protocol.GoalRunCheckArgs) (protocol.CheckResult, error) {
			if err := workspace.CheckRequestID(a.RequestID); err != nil {
				return protocol.CheckResult{}, err
			}
			run, s, err := c.svc.RunCheck(ctx, c.folder.ws, c.session, a.RequestID, func() { releaseOrder(ctx) })
			if err != nil {
				return protocol.CheckResult{}, err
			}
			return protocol.CheckResult{State: c.stateOf(s), Run: protocol.CheckRun(run), Passed: run.Passed()}, nil
		}).personOnly("run the goal's check, which runs outside any agent's sandbox"),
	userGoal(protocol.CmdGoalSetBudget,
		func(c *call, a *protocol.GoalSetBudgetArgs, g *goal.State) ([]goal.Change, error) {
			return g.SetBudget(a.BudgetUpdate, c.svc.Now())
		}).personOnly("set, raise or remove the goal's budget"),
}

// BudgetArgs turns a budget as a person writes it into the ARGS of
// agentd.goal.setBudget: a budget of goal.ParseBudget ("20 turns", "1
// hour", "1h30m", "50k tokens"), or "off UNIT" / "none UNIT" to remove the
// limit that UNIT measures ("off turns", "off time", "none hours").
// Errors have code goal.budget_invalid.
func BudgetArgs(text string) (protocol.GoalSetBudgetArgs, error) {
	var a protocol.GoalSetBudgetArgs
	field := map[goal.BudgetKind]*protocol.LimitUpdate{goal.TurnBudget: &a.Turns, goal.TokenBudget: &a.Tokens, goal.WallClockBudget: &a.WallClockMs}
	if words := strings.Fields(strings.ToLower(text)); len(words) > 0 && (words[0] == "off" || words[0] == "none") {
		kind, ok := goal.BudgetKindOf(strings.Join(words[1:], " "))
		if !ok {
			return a, &Error{Code: goal.CodeBudgetInvalid, Msg: fmt.Sprintf("%q: say which limit to remove: \"%s turns\", \"%s tokens\" or \"%s time\"", strings.TrimSpace(text), words[0], words[0], words[0])}
		}
		*field[kind] = protocol.NoLimit()
		return a, nil
	}
	kind, limit, err := goal.ParseBudget(text)
	if err != nil {
		return a, err
	}
	*field[kind] = protocol.Limit(float64(limit))
	return a, nil
}

// QueueBudget turns the budgets a person writes for a queued goal, each
// text one or more budgets of BudgetArgs split by commas ("20 turns, 50k
// tokens"), into the budget of agentd.goal.queue.add; a later budget of the
// same kind wins. Errors have code goal.budget_invalid.
func QueueBudget(texts []string) (protocol.BudgetUpdate, error) {
	var out protocol.BudgetUpdate
	for _, text := range texts {
		for _, part := range strings.Split(text, ",") {
			a, err := BudgetArgs(part)
			if err != nil {
				return out, err
			}
			for _, f := range []struct{ from, to *protocol.LimitUpdate }{{&a.Turns, &out.Turns}, {&a.Tokens, &out.Tokens}, {&a.WallClockMs, &out.WallClockMs}} {
				if f.from.Set {
					*f.to = *f.from
				}
			}
		}
	}
	return out, nil
}

// QueuedBudgets is the budgets of a queued goal for people: "20 turns,
// 50000 tokens, 1 hour" (goal.FormatBudget); "" for none.
func QueuedBudgets(it protocol.QueuedGoal) string {
	var parts []string
	for _, b := range []struct {
		kind  goal.BudgetKind
		limit *int64
	}{{goal.TurnBudget, it.TurnBudget}, {goal.TokenBudget, it.TokenBudget}, {goal.WallClockBudget, it.WallClockBudgetMs}} {
		if b.limit != nil {
			parts = append(parts, goal.FormatBudget(b.kind, *b.limit))
		}
	}
	return strings.Join(parts, ", ")
}

// VisibleText is goal.VisibleText: a check's command and who set it come
// from the store, which in a team folder anyone with etcd access writes.
func VisibleText(s string) string { return goal.VisibleText(s) }

// CheckRunSummary is goal.CheckRun.Summary of the run r of command: "`go
// test ./...` exited 1 after 2.1s".
func CheckRunSummary(r protocol.CheckRun, command string) string {
	return goal.CheckRun(r).Summary(command)
}

// FormatCheckConsent says, in indented lines, who set check c and whether
// it may run on this machine (docs/runtime.md §2.10.4): what `agentd goal
// status` and `agentd goal check --approve` print under the check.
func FormatCheckConsent(c *protocol.Check) string {
	var b strings.Builder
	switch {
	case c.SetOutsideAgentd:
		b.WriteString("    set outside agentd: no history event records it, so who set it is not known\n")
	case c.SetBy != nil:
		fmt.Fprintf(&b, "    set by %s on %s\n", VisibleText(c.SetBy.User), VisibleText(c.SetBy.Host))
	}
	if c.Approved != nil && *c.Approved {
		b.WriteString("    approved on this machine\n")
	} else {
		b.WriteString("    waiting for approval: run agentd goal check --approve\n")
	}
	return b.String()
}

// actor is who a call acts for in the goal's rules: the model from an
// agent's shell (docs/runtime.md §7), else the user.
func (c *call) actor() goal.Actor {
	if c.caller.IsAgent() {
		return goal.Model
	}
	return goal.User
}
