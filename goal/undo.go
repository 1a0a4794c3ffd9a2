package goal

import (
	"fmt"
	"slices"
)

// Undo of a goal change (docs/runtime.md §6). The history event of every
// goal change keeps the goal as it stood before the change (a Snapshot, or
// none); undoing the change restores what a person sees of that goal: which
// goal there is, its status, terminal reason and limits (and a goal brought
// back keeps its check, not running; each limit the undo restores counts
// as the person's, docs/runtime.md §2.11). The counters
// (turns, tokens, wall clock) and the task file's record are progress, not
// edits: they stay as they are now, except when the undo brings back a
// goal that was cleared, which returns as it was when it was cleared.

// reasonRestoredReplaced is the reason of the replace change an undo makes
// when it clears the current goal to bring back the one it replaced.
const reasonRestoredReplaced = "replaced by the goal an undo brought back"

// Restore undoes a goal change for the user: before is the goal as it stood
// before that change (nil: there was none), and reason says which change
// is undone (it becomes the reason of the undo change). It returns the
// changes: an undo change (actor user) last, after a replace change
// (actor system) when another goal is cleared to bring back the one
// before.
//
//   - before is nil (the change created the goal): the current goal is
//     cleared, as by a cancel; unless it was complete, the model is told
//     at its next step (the goal_cancelled notice, CancelNoticePending).
//   - before is another goal than the current one, or the goal is gone
//     (the change cancelled it, or created a goal over it): that goal comes
//     back as it was when it was cleared; the current one, if any, is
//     cleared first. A pending cancel notice is dropped.
//   - before is the current goal: its status, terminal reason and limits
//     become before's, and so does its check when its command differs (the
//     change set, changed or removed it; docs/runtime.md §2.10); counters
//     stay.
//
// A goal the undo leaves active must be allowed to run: a spent budget (the
// limits restored, the counters as they are now) refuses the undo with
// goal.not_resumable, as Resume does. Other refusals:
// goal.not_found (no goal now and none before: nothing to restore);
// goal.check_running (the check's command would change while it runs).
// Nothing changes when it refuses.
func (s *State) Restore(before *Snapshot, reason string, now Instant) ([]Change, error) {
	cur := s.Goal
	switch {
	case before == nil && cur == nil:
		return nil, errorf(CodeNotFound, "there is no goal now and there was none before that change: nothing to restore")
	case before == nil:
		if cur.Status != Complete {
			s.CancelNoticePending = true
		}
		return []Change{s.clear(ChangeUndo, User, reason, now)}, nil
	case cur == nil || cur.ID != before.GoalID:
		return s.bringBack(before, reason, now)
	}
	limits := limitsOf(before.Budget)
	check := !sameCheckCommand(cur.Check, before.Check)
	if check && cur.Check != nil && cur.Check.Running {
		return nil, errorf(CodeCheckRunning, "the goal's check is running; wait for its result before undoing the change of its command")
	}
	if before.Status == Active {
		trial := cur.clone()
		trial.Limits = limits
		if err := s.canRun(&trial, now); err != nil {
			return nil, err
		}
	}
	cur.settle(now)
	old := cur.Limits
	cur.Limits = limits
	cur.restorePersonLimits(old)
	if check { // the change set, changed or removed the command: its run before it comes back
		cur.Check = cloneCheck(before.Check)
		if cur.Check != nil {
			cur.Check.Running, cur.Check.RunBy, cur.Check.RunID, cur.Check.Process = false, "", "", nil
		}
	}
	if cur.Status != before.Status {
		cur.setStatus(before.Status, User, before.TerminalReason, now)
		if before.Status == Active {
			s.noteActivated("", now)
		}
	}
	if before.Status == Waiting && !before.Wait.sameConditions(cur.Wait) {
		cur.restoreWait(before.Wait, now)
	}
	cur.TerminalReason = before.TerminalReason
	cur.UpdatedAt, cur.LastActor = now.Wall, User
	return []Change{{Kind: ChangeUndo, Status: cur.Status, Reason: reason, Actor: User, Goal: cur.snapshot(now)}}, nil
}

// sameCheckCommand says whether a and b have the same check command (nil:
// none).
func sameCheckCommand(a, b *Check) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Command == b.Command
}

// bringBack makes before the current goal again, clearing the current one
// first (Restore).
func (s *State) bringBack(before *Snapshot, reason string, now Instant) ([]Change, error) {
	if !slices.Contains(Statuses(), before.Status) {
		return nil, errorf(CodeStatusInvalid, fmt.Sprintf("the goal to bring back has status %q, which this agentd does not know", before.Status))
	}
	g := &Goal{
		ID:                  before.GoalID,
		Objective:           before.Objective,
		CompletionCriterion: before.CompletionCriterion,
		Status:              before.Status,
		TurnsUsed:           before.TurnsUsed,
		TokensUsed:          before.TokensUsed,
		WallClockMs:         before.WallClockMs,
		Limits:              limitsOf(before.Budget),
		PersonLimits:        limitsOf(before.Budget), // of unknown origin: the person's (§2.11)
		TerminalReason:      before.TerminalReason,
		TaskFile:            cloneTaskFile(before.TaskFile),
		Check:               cloneCheck(before.Check),
		CreatedAt:           before.CreatedAt,
		UpdatedAt:           now.Wall,
		LastActor:           User,
	}
	if g.Check != nil { // its run, if any, ended with the change undone
		g.Check.Running, g.Check.RunBy, g.Check.RunID, g.Check.Process = false, "", "", nil
	}
	if g.Status == Active {
		if err := s.canRun(g, now); err != nil {
			return nil, err
		}
	}
	var cs changeSet
	if s.Goal != nil {
		cs.add(s.clear(ChangeReplace, System, reasonRestoredReplaced, now))
	}
	s.Goal = g
	s.CancelNoticePending = false
	if g.Status == Active {
		g.stamp(now)
		s.noteActivated("", now)
	}
	if g.Status == Waiting {
		g.restoreWait(before.Wait, now)
	}
	cs.add(Change{Kind: ChangeUndo, Status: g.Status, Reason: reason, Actor: User, Goal: g.snapshot(now)})
	return cs.list(), nil
}

// canRun refuses, with goal.not_resumable, to make g active while one of
// its budgets is spent (Resume's rule).
func (s *State) canRun(g *Goal, now Instant) error {
	if r := s.exceededNow(g, now); r.any() {
		return errorf(CodeNotResumable, fmt.Sprintf("undoing this would make the goal active while its budget is spent (%s); raise or remove that budget first", budgetReason(g.Limits, r)))
	}
	return nil
}

// limitsOf is the limits a budget report shows.
func limitsOf(b BudgetReport) Limits {
	return Limits{TurnBudget: clonePtr(b.TurnBudget), TokenBudget: clonePtr(b.TokenBudget), WallClockBudgetMs: clonePtr(b.WallClockBudgetMs)}
}
