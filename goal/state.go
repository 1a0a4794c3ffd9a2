package goal

import (
	"maps"
	"time"

	"github.com/google/uuid"

	"github.com/agentd/agentd/commands/protocol"
)

// State is everything the goal runtime keeps for one session (docs/runtime.md §2).
// The workspace package stores it in record types of its own, so fields
// may be renamed freely; a new field needs its record field there, which a
// workspace test demands.
// Change it only through its methods; each method that mutates it returns the visible
// changes (see Change), but every call may also update bookkeeping (turn
// records, markers, the settled wall clock), so persist the State after
// every mutating call, even when no Change is returned.
type State struct {
	// Goal is the current goal, nil when there is none. A complete goal stays
	// current until replaced or cleared by the user (docs/runtime.md §2.3).
	Goal *Goal
	// CancelNoticePending: a user cancel happened; the next step of the main
	// agent gets the goal_cancelled injection (docs/runtime.md §2.3).
	CancelNoticePending bool
	// ContinuationOutstanding: a continuation was returned and no main-agent
	// turn has begun since (docs/runtime.md §2.5: only one may be outstanding).
	ContinuationOutstanding bool
	// Turns are the live turns and the last MaxEndedTurns ended ones, oldest
	// first, so that lifecycle calls are idempotent per turnId.
	Turns []Turn
	// Queue is the session's upcoming goals, first first (docs/runtime.md
	// §2.9); at most MaxQueuedGoals.
	Queue []QueuedGoal
	// AutoAdvanceOff: the user turned auto-advance off, so a complete goal
	// stays current (docs/runtime.md §2.9). The zero value is on.
	AutoAdvanceOff bool
}

// Goal is the stored form of a goal. Clients see it as a Snapshot.
type Goal struct {
	ID                  string
	Objective           string
	CompletionCriterion string
	Status              Status
	TurnsUsed           int64
	TokensUsed          int64     // output tokens of goal-driven steps (§2.4)
	WallClockMs         int64     // settled at every call (§2.4; see settle)
	ActiveSince         time.Time // while active: wall time of the running stretch's start
	Limits              Limits
	// PersonLimits are the limits a person set, per budget (docs/runtime.md
	// §2.11): a field is set when that budget is the person's, and it is
	// the most the model's SetGoalBudget may make the limit; a field that
	// is nil while Limits has one is a limit the model set. A person's
	// budget change sets the fields it names, an undo the fields it
	// changes.
	PersonLimits   Limits
	TerminalReason string
	TaskFile       *TaskFileInfo
	Check          *Check // the verification command, nil for none (§2.10)
	// TodosOptional: the person who created the goal said it does not
	// require the items of the todo list (docs/runtime.md §2.12). The zero
	// value requires them, the default, which a goal stored before the
	// rule reads as too.
	TodosOptional bool
	CreatedAt     time.Time
	UpdatedAt     time.Time // last status, budget, check or task-file change; not counters
	LastActor     Actor
	// ActiveClock and ActiveMono are, while active, the monotonic reading
	// at the running stretch's start and the clock it was read from (see
	// Instant); live wall clock = WallClockMs + the stretch (see running).
	// "" and 0 in a state written by an agentd before these stamps.
	ActiveClock string
	ActiveMono  time.Duration // nanoseconds
	// BudgetWarned: the warning thresholds each budget has fired, and
	// WrapUpDue: the wrap-up note is due at the next main-agent step
	// (docs/runtime.md §2.4.4).
	BudgetWarned BudgetWarned
	WrapUpDue    bool
	// Progressed: the todo list or the task file changed since the last
	// goal turn ended; QuietTurns: goal turns in a row that ended without
	// such a change; Stalled: QuietTurns reached the stallTurns setting
	// (docs/runtime.md §2.4.5).
	Progressed bool
	QuietTurns int
	Stalled    bool
	// Wait is what the goal waits for while waiting, nil otherwise;
	// WaitMarks what each of its paths held when the wait began (an
	// opaque fingerprint, so that a change made while no agentd ran still
	// wakes it); Woke the reason of the last wake until the model is told
	// (docs/runtime.md §2.13).
	Wait      *Wait
	WaitMarks map[string]string
	Woke      string
}

// MainAgent is the agent id that gets goal tools, reminders and goal
// accounting (docs/runtime.md scope); subagents get none of them. "" means
// MainAgent everywhere. It is declared here, in the lowest package that
// needs it (turn accounting), and only here: reminder and commands use
// goal.MainAgent; todo has no notion of agents.
const MainAgent = "main"

// Limits of State and goal texts.
const (
	MaxObjectiveChars = 4000 // runes after trim (docs/runtime.md §2.2)
	MaxCriterionChars = 4000 // runes; a longer criterion is cut
	MaxReasonChars    = 500  // runes of a user's pause reason after trim
	MaxTurnIDBytes    = 256  // bytes of a turnId
	MaxEndedTurns     = 16   // ended turns kept for idempotent retries
	MaxLiveTurns      = 16   // live turns kept; the oldest is forgotten beyond
)

// newID makes goal ids; tests replace it.
var newID = uuid.NewString

// ChangeKind says what happened to the goal. History event kinds are
// "goal." + kind (Change.EventKind, protocol.GoalEvent).
type ChangeKind string

// Change kinds.
const (
	ChangeCreate   ChangeKind = "create"   // a new goal, active
	ChangeReplace  ChangeKind = "replace"  // the old goal was cleared for a new one (actor system)
	ChangeCancel   ChangeKind = "cancel"   // the user cleared the goal
	ChangePause    ChangeKind = "pause"    // → paused
	ChangeResume   ChangeKind = "resume"   // → active
	ChangeBlock    ChangeKind = "block"    // → blocked
	ChangeComplete ChangeKind = "complete" // → complete
	ChangeBudget   ChangeKind = "budget"   // limits changed, status unchanged
	ChangeTaskFile ChangeKind = "taskFile" // the task file changed on disk
	// ChangeCheck: the goal's check was set or removed, began running, or
	// a run ended (docs/runtime.md §2.10).
	ChangeCheck ChangeKind = "check"
	// ChangeAdvance: the goal completed and the first queued goal became
	// the current goal, active (actor runtime; docs/runtime.md §2.9).
	ChangeAdvance ChangeKind = "advance"
	// ChangeBudgetWarning: a budget reached a warning threshold
	// (Change.Percent; docs/runtime.md §2.4.4).
	ChangeBudgetWarning ChangeKind = "budgetWarning"
	ChangeStall         ChangeKind = "stall"        // the goal stalled (docs/runtime.md §2.4.5)
	ChangeStallCleared  ChangeKind = "stallCleared" // a stalled goal made progress again
	// ChangeProgress: only counters (turnsUsed, tokensUsed) or the task
	// file's changedSinceLastTurn flag changed. Callers may store it quietly.
	ChangeProgress ChangeKind = "progress"
	// ChangeUndo: the user undid the newest goal change, restoring the goal
	// as it stood before it (State.Restore, docs/runtime.md §6).
	ChangeUndo ChangeKind = "undo"
	// ChangeWait: the goal began waiting (→ waiting), and ChangeWake: a
	// wake condition held (→ active, actor runtime; docs/runtime.md §2.13).
	ChangeWait ChangeKind = "wait"
	ChangeWake ChangeKind = "wake"
)

// Change is one visible change of the goal, for the history event and the
// agentd/goalChanged notification's change {kind, status?, reason?, actor}
// (docs/protocol.md §4).
type Change struct {
	Kind   ChangeKind `json:"kind"`
	Status Status     `json:"status,omitempty"` // status after the change; "" when the goal was cleared
	Reason string     `json:"reason,omitempty"`
	Actor  Actor      `json:"actor"`
	// Percent is the threshold of a budgetWarning: FirstBudgetWarning or
	// FinalBudgetWarning; 0 for every other kind.
	Percent int `json:"percent,omitempty"`
	// Goal is the goal this change is about, as it stood right after it; for
	// cancel and replace, the goal that was cleared, as it ended (so the
	// history keeps every finished goal). Not part of the notification.
	Goal *Snapshot `json:"-"`
}

// EventKind is the history event kind, e.g. "goal.pause".
func (c Change) EventKind() protocol.EventKind {
	return protocol.GoalEvent(protocol.GoalChangeKind(c.Kind))
}

// Clone returns a deep copy of s that shares no memory with it.
func (s State) Clone() State {
	out := s
	if s.Goal != nil {
		g := s.Goal.clone()
		out.Goal = &g
	}
	if s.Turns != nil {
		out.Turns = append([]Turn(nil), s.Turns...)
	}
	out.Queue = nil // an empty queue is nil, as the store reads it back
	if len(s.Queue) > 0 {
		out.Queue = append([]QueuedGoal(nil), s.Queue...)
	}
	return out
}

func (g Goal) clone() Goal {
	g.Limits = g.Limits.clone()
	g.PersonLimits = g.PersonLimits.clone()
	g.TaskFile = cloneTaskFile(g.TaskFile)
	g.Check = cloneCheck(g.Check)
	g.Wait = g.Wait.clone()
	g.WaitMarks = maps.Clone(g.WaitMarks)
	return g
}

func cloneTaskFile(t *TaskFileInfo) *TaskFileInfo {
	if t == nil {
		return nil
	}
	c := *t
	c.ModifiedAt = clonePtr(t.ModifiedAt)
	c.Checkboxes = clonePtr(t.Checkboxes)
	return &c
}

// Snapshot is the current goal as clients see it at now, with the live wall
// clock (docs/runtime.md §2.1); nil when there is no goal.
func (s *State) Snapshot(now Instant) *Snapshot {
	if s.Goal == nil {
		return nil
	}
	return s.Goal.snapshot(now)
}

// Status is the current goal's status, or "" when there is none.
func (s *State) Status() Status {
	if s.Goal == nil {
		return ""
	}
	return s.Goal.Status
}

func (g *Goal) snapshot(now Instant) *Snapshot {
	wall := g.wallClockMs(now)
	return &Snapshot{
		GoalID:              g.ID,
		Objective:           g.Objective,
		CompletionCriterion: g.CompletionCriterion,
		Status:              g.Status,
		TurnsUsed:           g.TurnsUsed,
		TokensUsed:          g.TokensUsed,
		WallClockMs:         wall,
		Budget:              report(g.Limits, g.TurnsUsed, g.TokensUsed, wall),
		TerminalReason:      g.TerminalReason,
		TaskFile:            cloneTaskFile(g.TaskFile),
		Stalled:             g.Stalled,
		Check:               cloneCheck(g.Check),
		RequireTodos:        g.RequiresTodos(),
		CreatedAt:           g.CreatedAt,
		UpdatedAt:           g.UpdatedAt,
		LastActor:           g.LastActor,
		Wait:                g.Wait.clone(),
		Woke:                g.Woke,
	}
}

// wallClockMs is the live wall clock: settled time plus the running
// stretch while active (docs/runtime.md §2.4, measured on the monotonic clock).
func (g *Goal) wallClockMs(now Instant) int64 {
	return g.WallClockMs + g.running(now).Milliseconds()
}

// reached says which budgets are reached at now (used >= limit).
func (g *Goal) reached(now Instant) reached {
	r := report(g.Limits, g.TurnsUsed, g.TokensUsed, g.wallClockMs(now))
	return reached{turn: r.TurnBudgetReached, token: r.TokenBudgetReached, wallClock: r.WallClockBudgetReached}
}

// setStatus moves g to status to, settling the wall clock at now (§2.4).
// Reason becomes the terminal reason; resuming clears it (§2.3).
func (g *Goal) setStatus(to Status, actor Actor, reason string, now Instant) Change {
	g.settle(now)
	g.Wait, g.WaitMarks = nil, nil
	if to == Active {
		g.stamp(now)
		g.TerminalReason = ""
	} else {
		g.unstamp()
		g.TerminalReason = reason
	}
	g.Status = to
	g.UpdatedAt = now.Wall
	g.LastActor = actor
	kind, _ := to.ChangeKind() // to is always one of the declared statuses, each with its kind (TestEveryGoalStatus)
	return Change{Kind: kind, Status: to, Reason: reason, Actor: actor, Goal: g.snapshot(now)}
}

// changeSet gathers the changes of one call. A progress change is reported
// only when nothing more telling happened in the same call, and only once.
type changeSet []Change

func (c *changeSet) add(ch Change) { *c = append(*c, ch) }

func (c changeSet) list() []Change {
	var out []Change
	var progress *Change
	for i := range c {
		if c[i].Kind == ChangeProgress {
			progress = &c[i]
			continue
		}
		out = append(out, c[i])
	}
	if len(out) == 0 && progress != nil {
		out = append(out, *progress)
	}
	return out
}

func progressChange(g *Goal, now Instant) Change {
	return Change{Kind: ChangeProgress, Status: g.Status, Actor: Runtime, Goal: g.snapshot(now)}
}
