package commands

import (
	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/reminder"
	"github.com/agentd/agentd/workspace"
)

// The results and notifications carry the protocol's wire values
// (commands/protocol), never the domain types: these build them from
// what the rules and the store hold. TestWireMirrorsDomain holds each to
// the JSON of its domain value, field by field, so that a field added to
// the domain and not to the wire fails a test rather than vanishing.

// wireGoal is the goal snapshot s as the wire carries it; nil for no goal.
func wireGoal(s *goal.Snapshot) *protocol.GoalSnapshot {
	if s == nil {
		return nil
	}
	return &protocol.GoalSnapshot{
		GoalID: s.GoalID, Objective: s.Objective, CompletionCriterion: s.CompletionCriterion,
		Status: protocol.GoalStatus(s.Status), TurnsUsed: s.TurnsUsed, TokensUsed: s.TokensUsed,
		WallClockMs: s.WallClockMs, Budget: protocol.GoalBudget(s.Budget), TerminalReason: s.TerminalReason,
		TaskFile: wireTaskFile(s.TaskFile), Check: wireCheck(s.Check), CreatedAt: s.CreatedAt,
		UpdatedAt: s.UpdatedAt, LastActor: protocol.Actor(s.LastActor), Stalled: s.Stalled,
		RequireTodos: s.RequireTodos, Progress: wireProgress(s.Progress), Wait: wireWait(s.Wait),
	}
}

func wireWait(w *goal.Wait) *protocol.GoalWait {
	if w == nil {
		return nil
	}
	return &protocol.GoalWait{Since: w.Since, By: protocol.Actor(w.By), Note: w.Note, Until: w.Until, Paths: w.Paths,
		CheckPasses: w.CheckPasses, WallClock: string(w.WallClock)}
}

func wireProgress(p *goal.Progress) *protocol.Progress {
	if p == nil {
		return nil
	}
	return &protocol.Progress{Todos: (*protocol.TodoProgress)(p.Todos), Checkboxes: (*protocol.Checkboxes)(p.Checkboxes)}
}

func wireTaskFile(t *goal.TaskFileInfo) *protocol.TaskFileInfo {
	if t == nil {
		return nil
	}
	return &protocol.TaskFileInfo{
		Path: t.Path, Exists: t.Exists, SHA256: t.SHA256, Size: t.Size, ModifiedAt: t.ModifiedAt,
		ChangedSinceLastTurn: t.ChangedSinceLastTurn, Checkboxes: (*protocol.Checkboxes)(t.Checkboxes),
	}
}

// wireCheck is the check c as clients see it: without what only the store
// keeps (who runs it, its process).
func wireCheck(c *goal.Check) *protocol.Check {
	if c == nil {
		return nil
	}
	return &protocol.Check{
		Command: c.Command, SetBy: (*protocol.CheckSetter)(c.SetBy), Approved: c.Approved,
		SetOutsideAgentd: c.SetOutsideAgentd, Running: c.Running, LastRun: (*protocol.CheckRun)(c.LastRun),
	}
}

// wireQueue is the queued goals items as the wire carries them: never nil.
func wireQueue(items []goal.QueuedGoal) []protocol.QueuedGoal {
	out := make([]protocol.QueuedGoal, len(items))
	for i, q := range items {
		out[i] = protocol.QueuedGoal{
			ID: q.ID, Objective: q.Objective, CompletionCriterion: q.CompletionCriterion, Check: q.Check,
			CheckSetBy: (*protocol.CheckSetter)(q.CheckSetBy), CheckApproved: q.CheckApproved, AddedAt: q.AddedAt,
			TurnBudget: q.TurnBudget, TokenBudget: q.TokenBudget, WallClockBudgetMs: q.WallClockBudgetMs,
		}
	}
	return out
}

// wireTeamFile is the notice n of an unused team file; nil for none.
func wireTeamFile(n *workspace.TeamFileNotice) *protocol.TeamFileNotice {
	return (*protocol.TeamFileNotice)(n)
}

// wireEvent is the history event e as agentd.history and agentd.undo
// answer it: its before and payload as stored (docs/runtime.md §6).
func wireEvent(e workspace.Event) protocol.HistoryEvent { return protocol.HistoryEvent(e) }

// wireContinuation is the continuation prompt c; nil for none.
func wireContinuation(c *reminder.Continuation) *protocol.Continuation {
	if c == nil {
		return nil
	}
	return &protocol.Continuation{Variant: string(c.Variant), Prompt: c.Prompt}
}
