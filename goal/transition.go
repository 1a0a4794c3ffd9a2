package goal

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// CreateParams are the inputs of creating a goal (docs/runtime.md §2.2).
// TaskFile is resolved by the caller (the workspace checks the path and
// reads the file); nil means the goal has no task file.
type CreateParams struct {
	Objective           string
	CompletionCriterion string
	Replace             bool
	TaskFile            *TaskFileInfo
	// Check is the goal's verification command, set by a person only
	// (docs/runtime.md §2.10); "" for none. A non-empty one follows the
	// rule of normalizeCheck.
	Check string
	// CheckSetBy is who set Check (Check.SetBy); nil when unknown.
	CheckSetBy *CheckSetter
	// TodosOptional: the goal does not require the todo list's items, a
	// person's choice only (docs/runtime.md §2.12).
	TodosOptional bool
}

// Reasons the runtime gives (wording ours).
const (
	reasonReplaced   = "replaced by a new goal"
	reasonCancelled  = "cancelled by the user"
	reasonUserPause  = "paused by the user"
	reasonRestart    = "paused because the agentd process that ran the agent's turn ended before the turn did"
	reasonDisconnect = "paused because the connection that ran the turn closed before the turn ended"
	reasonInterrupt  = "paused after the user interrupted the turn"
	reasonHook       = "blocked by a host hook that refused the prompt"
	reasonComplete   = "marked complete by the agent"
	reasonModelBlock = "marked blocked by the agent: it reported an impasse it cannot get past"
)

// reasonLeaseLost is reasonRestart in a team folder, where agentd knows only
// that the process's etcd lease expired (docs/team.md, "Liveness"): it may
// have ended, or been stopped (SIGSTOP, a suspended machine) or cut off
// from etcd.
const reasonLeaseLost = "paused because the agentd process that ran the agent's turn stopped answering before the turn ended: it ended, was stopped, or was cut off from the team's etcd (its lease expired)"

// Create makes a new active goal for the user (docs/runtime.md §2.2, actor
// user). Refusals are *Error: goal.objective_empty, goal.objective_too_long,
// goal.already_exists (an active, paused or blocked goal exists and Replace
// is false). With Replace, or over a complete goal, the old goal is cleared
// first (a replace change, actor system).
func (s *State) Create(p CreateParams, now Instant) ([]Change, error) {
	return s.create(p, User, "", now)
}

// normalizeObjective trims and checks an objective and a criterion (§2.2).
// Both may span lines (TAB, LF and CR are kept) but a control character
// (other C0, DEL, C1) is refused with args.invalid naming it, since both are
// shown in terminals and model-facing text (docs/runtime.md §2.1.1).
func normalizeObjective(objective, criterion string) (string, string, error) {
	for _, f := range []struct{ name, text string }{{"the objective", objective}, {"completionCriterion", criterion}} {
		if i := strings.IndexFunc(f.text, isRefusedControl); i >= 0 {
			r, _ := utf8.DecodeRuneInString(f.text[i:])
			return "", "", errorf(CodeArgsInvalid, fmt.Sprintf("%s has the control character %U; write plain text (tabs and line breaks are fine)", f.name, r))
		}
	}
	objective = strings.TrimSpace(objective)
	if objective == "" {
		return "", "", errorf(CodeObjectiveEmpty, "the objective is empty; say what the goal should achieve")
	}
	if n := utf8.RuneCountInString(objective); n > MaxObjectiveChars {
		return "", "", errorf(CodeObjectiveTooLong, fmt.Sprintf("the objective is %d characters long, at most %d are allowed; put the long text in a file in the workspace and reference that file's path in a short objective", n, MaxObjectiveChars))
	}
	criterion = strings.TrimSpace(criterion)
	if utf8.RuneCountInString(criterion) > MaxCriterionChars {
		criterion = strings.TrimSpace(string([]rune(criterion)[:MaxCriterionChars]))
	}
	return objective, criterion, nil
}

// isRefusedControl reports whether r is a control character an objective or
// criterion may not hold: every C0 and C1 control but TAB, LF and CR.
func isRefusedControl(r rune) bool {
	return unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r'
}

// create makes a new goal for actor; turnID is the model's turn, if any.
func (s *State) create(p CreateParams, actor Actor, turnID string, now Instant) ([]Change, error) {
	objective, criterion, err := normalizeObjective(p.Objective, p.CompletionCriterion)
	if err != nil {
		return nil, err
	}
	var check string
	if p.Check != "" {
		if check, err = normalizeCheck(&p.Check); err != nil {
			return nil, err
		}
	}
	var cs changeSet
	if old := s.Goal; old != nil {
		if old.Status != Complete && !p.Replace {
			return nil, errorf(CodeAlreadyExists, fmt.Sprintf("a goal already exists and is %s; cancel it first, or create the new one with replace (\"replace\": true; --replace from the shell)", old.Status))
		}
		if actor == Model {
			if err := s.modelMayReplace(); err != nil {
				return nil, err
			}
		}
		cs.add(s.clear(ChangeReplace, System, reasonReplaced, now))
	}
	s.Goal = newGoal(CreateParams{Objective: objective, CompletionCriterion: criterion, TaskFile: p.TaskFile, Check: check, CheckSetBy: p.CheckSetBy, TodosOptional: p.TodosOptional && actor == User}, actor, now)
	// The cancel notice is about an older goal; the new goal's reminder
	// supersedes it.
	s.CancelNoticePending = false
	s.noteActivated(turnID, now)
	cs.add(Change{Kind: ChangeCreate, Status: Active, Actor: actor, Goal: s.Goal.snapshot(now)})
	return cs.list(), nil
}

// newGoal is a fresh active goal of p (already normalized) made by actor
// at now: a new uuid, zero counters, no budgets, its wall clock running.
func newGoal(p CreateParams, actor Actor, now Instant) *Goal {
	g := &Goal{
		ID:                  newID(),
		Objective:           p.Objective,
		CompletionCriterion: p.CompletionCriterion,
		Status:              Active,
		TaskFile:            cloneTaskFile(p.TaskFile),
		TodosOptional:       p.TodosOptional,
		CreatedAt:           now.Wall,
		UpdatedAt:           now.Wall,
		LastActor:           actor,
	}
	if p.Check != "" {
		g.Check = &Check{Command: p.Check, SetBy: clonePtr(p.CheckSetBy)}
	}
	g.stamp(now)
	return g
}

// clear removes the current goal, settling its clock, and reports it as it
// ended.
func (s *State) clear(kind ChangeKind, actor Actor, reason string, now Instant) Change {
	g := s.Goal
	g.settle(now)
	g.unstamp()
	snap := g.snapshot(now)
	snap.UpdatedAt = now.Wall
	snap.LastActor = actor
	s.Goal = nil
	return Change{Kind: kind, Reason: reason, Actor: actor, Goal: snap}
}

// Pause pauses the active goal for the user (docs/runtime.md §2.3). reason ""
// becomes "paused by the user". Pausing a paused goal is a no-op (no
// change, no error). Refusals: args.invalid (a reason of more than
// MaxReasonChars characters after trim), goal.not_found,
// goal.status_invalid (blocked or complete).
func (s *State) Pause(reason string, now Instant) ([]Change, error) {
	reason = strings.TrimSpace(reason)
	if n := utf8.RuneCountInString(reason); n > MaxReasonChars {
		return nil, errorf(CodeArgsInvalid, fmt.Sprintf("the reason is %d characters long; at most %d are allowed", n, MaxReasonChars))
	}
	g := s.Goal
	if g == nil {
		return nil, errorf(CodeNotFound, "there is no goal to pause")
	}
	switch {
	case g.Status == Paused:
		return nil, nil
	case !slices.Contains(PauseFrom(), g.Status):
		return nil, errorf(CodeStatusInvalid, fmt.Sprintf("the goal is %s; only an active goal can be paused", g.Status))
	}
	if reason == "" {
		reason = reasonUserPause
	}
	return []Change{g.setStatus(Paused, User, reason, now)}, nil
}

// Resume makes a paused or blocked goal active again for the user
// (docs/runtime.md §2.3); live turns of the main agent become starter turns.
// Resuming an active goal is a no-op. Refusals: goal.not_found,
// goal.not_resumable (complete, or a budget is still spent: raise or remove
// it first with SetBudget).
func (s *State) Resume(now Instant) ([]Change, error) {
	return s.resume(User, "", now)
}

func (s *State) resume(actor Actor, turnID string, now Instant) ([]Change, error) {
	g := s.Goal
	if g == nil {
		return nil, errorf(CodeNotFound, "there is no goal to resume")
	}
	switch {
	case g.Status == Active:
		return nil, nil
	case !slices.Contains(ResumeFrom(), g.Status):
		return nil, errorf(CodeNotResumable, fmt.Sprintf("the goal is %s and cannot be resumed; create a new goal instead", g.Status))
	case g.Status == Waiting && actor == Model && g.waitBy() != Model:
		return nil, errorf(CodePersonSet, "the goal waits as the user asked; only the user can end that wait (agentd goal resume)")
	}
	if r := s.exceededNow(g, now); r.any() {
		return nil, errorf(CodeNotResumable, fmt.Sprintf("the goal cannot be resumed while its budget is spent (%s); raise or remove that budget first", budgetReason(g.Limits, r)))
	}
	ch := g.setStatus(Active, actor, "", now)
	if actor == User {
		ch.Reason = "resumed by the user"
	} else {
		ch.Reason = "resumed by the agent at the user's request"
	}
	s.noteActivated(turnID, now)
	return []Change{ch}, nil
}

// Cancel clears the current goal for the user (docs/runtime.md §2.3), whatever
// its status. Unless the goal was complete, the next step of the main agent
// gets the goal_cancelled notice (StepBegin.CancelNoticeDue). Refusal:
// goal.not_found.
func (s *State) Cancel(now Instant) ([]Change, error) {
	g := s.Goal
	if g == nil {
		return nil, errorf(CodeNotFound, "there is no goal to cancel")
	}
	if g.Status != Complete {
		s.CancelNoticePending = true
	}
	return []Change{s.clear(ChangeCancel, User, reasonCancelled, now)}, nil
}

// SetBudget changes the goal's limits for the user (docs/protocol.md §3
// agentd.goal.setBudget): each field absent (kept), null (removed) or a
// number, any the user likes; each field it names becomes the person's
// (PersonLimits, docs/runtime.md §2.11). Turns and tokens must be whole
// numbers > 0, the wall clock 1 s … 24 h. If the active goal's budget is
// then spent, it is blocked at once (actor runtime). Refusals: goal.not_found, goal.status_invalid (complete),
// goal.budget_invalid.
func (s *State) SetBudget(u BudgetUpdate, now Instant) ([]Change, error) {
	g := s.Goal
	if g == nil {
		return nil, errorf(CodeNotFound, "there is no goal to set a budget on")
	}
	if !slices.Contains(BudgetFrom(), g.Status) {
		return nil, errorf(CodeStatusInvalid, fmt.Sprintf("the goal is %s; budgets apply only to an unfinished goal", g.Status))
	}
	limits, err := mergeBudget(u, g.Limits)
	if err != nil {
		return nil, err
	}
	if !u.Turns.Set && !u.Tokens.Set && !u.WallClockMs.Set {
		return nil, nil
	}
	g.setPersonLimits(u, limits)
	return s.applyLimits(limits, User, "budget changed by the user", now), nil
}

// applyLimits stores limits, re-arms the warnings of each budget whose
// limit changed and checks them at once (§2.4.4), and blocks an active goal
// whose budget is now spent (§2.8).
func (s *State) applyLimits(limits Limits, actor Actor, reason string, now Instant) []Change {
	g := s.Goal
	g.settle(now)
	old := g.Limits
	g.Limits = limits
	g.rearmWarnings(old)
	g.UpdatedAt = now.Wall
	g.LastActor = actor
	cs := []Change{{Kind: ChangeBudget, Status: g.Status, Reason: reason, Actor: actor, Goal: g.snapshot(now)}}
	cs = append(cs, g.warnBudgets(now)...)
	if g.Status == Active || g.Status == Waiting {
		if r := s.exceededNow(g, now); r.any() {
			cs = append(cs, g.setStatus(Blocked, Runtime, budgetReason(g.Limits, g.reached(now)), now))
		}
	}
	return cs
}

// exceededNow says which budgets forbid going on right now. Token and
// wall-clock budgets count when reached. The turn budget counts when
// exceeded, or when reached and no counted goal-driven turn of g is live
// (turn N may run to its end: §2.4).
func (s *State) exceededNow(g *Goal, now Instant) reached {
	r := g.reached(now)
	if r.turn && *g.Limits.TurnBudget == g.TurnsUsed {
		for _, t := range s.Turns {
			if !t.Ended && t.DrivenGoalID == g.ID && t.Counted {
				r.turn = false
			}
		}
	}
	return r
}

// noteActivated records that the current goal became active (create or
// resume) at now: every live turn of the main agent held by now's process
// (Turn.heldBy: begun by it, or detached) and not already driven by the
// goal becomes a starter turn for it (§2.4), and the model's own turn
// (turnID) now works for it (stale-call guard, §2.8). A live turn the
// process does not hold was left by a process that is gone and has no agent
// behind it: it drives nothing from now on, not even a resumed goal it
// drove before (the next serving process ends it, RecoverAfterRestart).
func (s *State) noteActivated(turnID string, now Instant) {
	id := s.Goal.ID
	for i := range s.Turns {
		t := &s.Turns[i]
		if t.Ended || !t.isMain() {
			continue
		}
		if !t.heldBy(now.Clock) {
			t.DrivenGoalID, t.Starter, t.Counted = "", false, false
			continue
		}
		if t.DrivenGoalID != id {
			t.DrivenGoalID, t.Starter, t.Counted = id, true, false
		}
		if t.ID == turnID {
			t.GoalID = id
		}
	}
}

// RecoverAfterRestart is called by a serving process each time it opens a
// session's folder (docs/runtime.md §2.3 [agentd]; docs/runtime.md
// §2.3.2), now being a reading of its clock. Live turns the process does not
// hold (Turn.heldBy: not begun by it, not detached) were begun by an agentd
// process that ended before they did (the folder's lock keeps serving
// processes apart, and a process ends its client's turns when the client
// goes): they are ended. When one of them was a main-agent turn driving the
// active goal, the agent went away mid-work and the goal is paused (actor
// runtime). A goal that no such turn was driving is left as it is. The
// process's own live turns and detached turns stay live: a detached turn's
// agent drives it through whichever agentd process runs, so that process's
// going away says nothing of the agent's. Either way the goal's clock is
// taken over first (Adopt), so the time after the earlier process's last
// call is not counted. An outstanding continuation is dropped with the
// ended turns (the host it was returned to is gone). It reports whether
// the state changed (store it) and the goal's changes.
func (s *State) RecoverAfterRestart(now Instant, lastSeen time.Time) (bool, []Change) {
	return s.RecoverLeftTurns(now, lastSeen, nil)
}

// RecoverLeftTurns is RecoverAfterRestart for a folder that several
// serving processes hold at once (a team folder, docs/team.md): alive
// reports whether the process whose clock is owner still runs (it holds its
// lease). The turns such a process holds stay live, and an active goal
// whose clock it runs is not adopted; only the turns of processes that are
// gone are ended, and the goal one of them drove is paused, with a reason
// that says the process stopped answering (ended, stopped or cut off):
// a lease that expired says no more. A nil alive is RecoverAfterRestart:
// no other process is running, and the one that left the turns ended.
func (s *State) RecoverLeftTurns(now Instant, lastSeen time.Time, alive func(owner string) bool) (bool, []Change) {
	other := func(owner string) bool { return owner != "" && owner != now.Clock && alive != nil && alive(owner) }
	changed := false
	if g := s.Goal; g == nil || !other(g.ActiveClock) {
		changed = s.Adopt(now, lastSeen)
	}
	driven, ended := false, false
	for i := range s.Turns {
		t := &s.Turns[i]
		if t.Ended || t.heldBy(now.Clock) || other(t.Owner) {
			continue
		}
		if t.isMain() && s.drivenGoal(t) != nil {
			driven = true
		}
		t.Ended, t.StepOpen, t.InGrace = true, false, false
		t.EndedBy = EndedRestart
		if alive != nil {
			t.EndedBy = EndedLeaseLost
		}
		ended = true
	}
	if ended {
		s.pruneTurns()
		s.ContinuationOutstanding, changed = false, true
	}
	g := s.Goal
	if g == nil || g.Status != Active || !driven {
		return changed, nil
	}
	reason := reasonRestart
	if alive != nil {
		reason = reasonLeaseLost
	}
	return true, []Change{g.setStatus(Paused, Runtime, reason, now)}
}

// HasLeftTurn reports whether the state records a live turn the process
// whose clock is clock does not hold (Turn.heldBy): one RecoverAfterRestart
// ends.
func (s *State) HasLeftTurn(clock string) bool {
	return s.HasTurnLeftBy(clock, nil)
}

// HasTurnLeftBy is HasLeftTurn where alive (RecoverLeftTurns) says which
// other processes still run: their turns are not left.
func (s *State) HasTurnLeftBy(clock string, alive func(owner string) bool) bool {
	for i := range s.Turns {
		if t := &s.Turns[i]; !t.Ended && !t.heldBy(clock) && !(alive != nil && t.Owner != "" && t.Owner != clock && alive(t.Owner)) {
			return true
		}
	}
	return false
}

// WallClockLeft is the time until the active goal's wall-clock budget runs
// out, for the serving process's timer (docs/runtime.md §2.4: armed on create,
// resume and budget change), measured on the monotonic clock; 0 when it
// has run out. ok is false when the goal is not active or has no
// wall-clock budget.
func (s *State) WallClockLeft(now Instant) (left time.Duration, ok bool) {
	g := s.Goal
	if g == nil || !g.clockRuns() || g.Limits.WallClockBudgetMs == nil {
		return 0, false
	}
	ms := max(0, *g.Limits.WallClockBudgetMs-g.wallClockMs(now))
	return time.Duration(ms) * time.Millisecond, true
}

// CheckWallClock checks the active goal's budget warnings at now
// (docs/runtime.md §2.4.4) and blocks it when its wall-clock budget is
// reached (§2.4; actor runtime). Call it when the timer fires (the sooner
// of WallClockLeft and NextWallClockWarning); clients are then told, so a
// host can cancel its live turn.
func (s *State) CheckWallClock(now Instant) []Change {
	g := s.Goal
	if g == nil || !g.clockRuns() {
		return nil
	}
	cs := g.warnBudgets(now)
	if r := g.reached(now); r.wallClock {
		cs = append(cs, g.setStatus(Blocked, Runtime, budgetReason(g.Limits, r), now))
	}
	return cs
}

// ReferencedTaskFile is a copy of the task file the current goal
// references, or nil when there is no goal, it has no task file, or it is
// complete: a goal references its task file while it is active, paused or
// blocked, and a complete goal releases it (docs/runtime.md §4;
// docs/task-files.md). The task-file watcher (workspace/taskfile) watches
// the referenced ones, and UpdateTaskFile records changes of the
// referenced one only.
func (s *State) ReferencedTaskFile() *TaskFileInfo {
	if s.Goal == nil || s.Goal.Status == Complete {
		return nil
	}
	return cloneTaskFile(s.Goal.TaskFile)
}

// UpdateTaskFile records what the watcher saw of the goal's task file
// (docs/runtime.md §4). It applies only when info.Path is the task file the goal
// references (ReferencedTaskFile), and only on a real change (exists,
// sha256, size or the checkbox counts differ): then changedSinceLastTurn is
// set, so the next turn's goal reminder tells the model once, and the change
// counts as progress for the stall rule (§2.4.5): a stalled goal is no
// longer stalled.
func (s *State) UpdateTaskFile(info TaskFileInfo, now Instant) []Change {
	if ref := s.ReferencedTaskFile(); ref == nil || ref.Path != info.Path {
		return nil
	}
	g := s.Goal
	old := g.TaskFile
	if old.Exists == info.Exists && old.SHA256 == info.SHA256 && old.Size == info.Size && sameCheckboxes(old.Checkboxes, info.Checkboxes) {
		return nil
	}
	reason := "the task file changed"
	switch {
	case !info.Exists:
		reason = "the task file was removed"
	case !old.Exists:
		reason = "the task file appeared"
	}
	g.settle(now)
	nf := cloneTaskFile(&info)
	nf.ChangedSinceLastTurn = true
	g.TaskFile = nf
	g.UpdatedAt = now.Wall
	g.progressed(now) // a stall ends with this change, which says so (the snapshot's stalled)
	return []Change{{Kind: ChangeTaskFile, Status: g.Status, Reason: reason, Actor: Runtime, Goal: g.snapshot(now)}}
}

func sameCheckboxes(a, b *Checkboxes) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// TaskFileCandidates lists the tokens of an objective that may name a task
// file, in order, for the workspace to try when CreateGoal gives no taskFile
// (docs/runtime.md §2.2): whitespace-separated words, a leading "@" removed,
// surrounding quotes, backticks and brackets and trailing punctuation
// stripped, empty and URL-like words skipped.
func TaskFileCandidates(objective string) []string {
	var out []string
	for _, w := range strings.Fields(objective) {
		w = strings.Trim(w, "\"'`()[]{}<>")
		w = strings.TrimRight(w, ".,;:!?")
		w = strings.Trim(w, "\"'`()[]{}<>")
		w = strings.TrimPrefix(w, "@")
		if w == "" || strings.Contains(w, "://") {
			continue
		}
		out = append(out, w)
	}
	return out
}
