package goal

import (
	"fmt"
	"github.com/agentd/agentd/commands/protocol"
	"math"
	"strings"
	"unicode/utf8"
)

// Origin, FinishReason and Outcome are the wire's (docs/protocol.md §3):
// why a turn began, how a step ended, how a turn ended.
type (
	Origin       = protocol.Origin
	FinishReason = protocol.FinishReason
	Outcome      = protocol.Outcome
)

// Turn origins, step finish reasons and turn outcomes (docs/runtime.md §2.6).
const (
	OriginUser         = protocol.OriginUser
	OriginContinuation = protocol.OriginContinuation
	OriginResume       = protocol.OriginResume
	FinishStop         = protocol.FinishStop
	FinishToolCalls    = protocol.FinishToolCalls
	OutcomeCompleted   = protocol.OutcomeCompleted
	OutcomeCancelled   = protocol.OutcomeCancelled
	OutcomeFailed      = protocol.OutcomeFailed
	OutcomeBlocked     = protocol.OutcomeBlocked
	OutcomeStepLimit   = protocol.OutcomeStepLimit
)

// Continuation is the variant of continuation prompt a turn end asks for
// (docs/runtime.md §2.5); NoContinuation when none is due. The variants are
// declared here only; reminder.Continue writes each one's prompt and the
// commands layer sends the variant as it is.
type Continuation string

// Continuation variants.
const (
	NoContinuation        Continuation = ""
	ContinuationNormal    Continuation = "goal_continuation"
	ContinuationStepLimit Continuation = "goal_continuation_step_limit"
)

// Turn is the record of one live or recently ended turn, kept so that
// lifecycle calls are idempotent per turnId. Read-only for callers.
type Turn struct {
	ID     string
	Origin Origin
	Agent  string
	// GoalDriven: the turn began while the goal was active and within its
	// budgets (docs/runtime.md §2.4).
	GoalDriven bool
	// GoalID is the goal the turn works for: the goal at turn begin, or the
	// goal the model made active in the turn (stale-call guard, §2.8).
	GoalID string
	// DrivenGoalID is the goal whose turns and tokens this turn counts
	// toward: the goal of a goal-driven turn, or the goal that became active
	// during the turn (a starter turn). "" for an ordinary turn.
	DrivenGoalID string
	Starter      bool // counts +1 at turn end if it ends normally
	Counted      bool // turnsUsed of DrivenGoalID includes this turn
	Steps        int  // steps begun
	StepOpen     bool
	GraceGiven   bool // the one grace step was granted
	InGrace      bool // the grace step is due or running
	Ended        bool
	// EndedBy says why agentd ended the turn itself (EndedDisconnect,
	// EndedRestart, EndedLeaseLost); "" while it is live and when its host
	// ended it (agentd.turn.end). A later call on a turn agentd ended is
	// refused with turn.ended (docs/runtime.md §2.4.6).
	EndedBy string
	// Detached: the turn is driven from outside any agentd connection (an
	// agent's hooks, docs/hooks.md): no connection's end ends it, and a
	// restart of agentd leaves it live (RecoverAfterRestart).
	Detached bool
	// Owner is the clock (Instant.Clock) of the agentd process that began
	// the turn: a turn that is not detached is live only while that process
	// runs (docs/runtime.md §2.3.2). "" in a state written before
	// owners were recorded: the turn is no running process's.
	Owner string

	LastStepBegin stepBeginRecord
	LastStepEnd   stepEndRecord
	Continuation  Continuation // what the turn end returned
}

type stepBeginRecord struct {
	FirstStep       bool
	GoalReminderDue bool
	TaskFileChanged bool
	CancelNoticeDue bool
	GraceStep       bool
	WrapUpDue       bool
	Woke            string // the wake this step tells the model of (§2.13)
}

// stepEndRecord is the answer of a turn's last step end and what that call
// was (which step, its tokens and finish reason), so that a step end on an
// ended turn can tell a retry from a late call.
type stepEndRecord struct {
	StopTurn     bool
	GraceStep    bool
	Step         int // the step it ended (1 = first)
	OutputTokens int64
	Finish       FinishReason
}

// isRetryOf reports whether a step end of step with outputTokens and finish
// is the call r records.
func (r stepEndRecord) isRetryOf(step int, outputTokens int64, finish FinishReason) bool {
	return r.Step == step && r.OutputTokens == outputTokens && r.Finish == finish
}

func (t *Turn) isMain() bool { return t.Agent == MainAgent }

// heldBy reports whether the live turn t is held by the process whose clock
// is clock: it began the turn, or the turn is detached (its agent drives it
// through whichever agentd process runs). A turn not held is one a process
// that is gone left live.
func (t *Turn) heldBy(clock string) bool {
	return t.Detached || (t.Owner != "" && t.Owner == clock)
}

// TurnBegin is the answer to BeginTurn (agentd.turn.begin).
type TurnBegin struct {
	GoalDriven bool      `json:"goalDriven"`
	Goal       *Snapshot `json:"goal"`
	Changes    []Change  `json:"-"`
}

// StepBegin says what is due before a step (agentd.step.begin).
type StepBegin struct {
	FirstStep bool `json:"firstStep"`
	// GoalReminderDue: inject the per-turn goal reminder built from Goal
	// (first step of a main-agent turn, goal active, paused or blocked;
	// docs/runtime.md §2.7).
	GoalReminderDue bool `json:"goalReminderDue"`
	// CancelNoticeDue: inject the goal_cancelled notice (§2.3); consumed.
	CancelNoticeDue bool `json:"cancelNoticeDue"`
	// GraceStep: this step is the grace step; tool calls in it are rejected
	// (see InGraceStep). The budget-stop injection came with the StepEnd
	// that granted it.
	GraceStep bool `json:"graceStep"`
	// WrapUpDue: inject the one-time wrap-up note built from Goal, as the
	// goal has used FinalBudgetWarning % of a budget (docs/runtime.md
	// §2.4.4); consumed.
	WrapUpDue bool `json:"wrapUpDue"`
	// Goal is the goal for the reminder, nil when none. When the reminder is
	// due its TaskFile.ChangedSinceLastTurn still shows the change being
	// announced; the stored flag is already cleared (docs/runtime.md §4).
	Goal    *Snapshot `json:"goal"`
	Changes []Change  `json:"-"`
}

// StepEnd is the answer to EndStep (agentd.step.end).
type StepEnd struct {
	// StopTurn: a budget is spent in a goal-driven turn; end the turn now.
	StopTurn bool `json:"stopTurn"`
	// GraceStep: a budget is spent but the step ended with tool calls: run
	// exactly one more step with the goal_budget_stop injection (built from
	// Goal); its tool calls are rejected (docs/runtime.md §2.4).
	GraceStep bool      `json:"graceStep"`
	Goal      *Snapshot `json:"goal"`
	// Retry: no step was open, so this answered the previous step end
	// again and counted nothing.
	Retry   bool     `json:"-"`
	Changes []Change `json:"-"`
}

// TurnEnd is the answer to EndTurn (agentd.turn.end).
type TurnEnd struct {
	Continuation Continuation `json:"continuation,omitempty"`
	Goal         *Snapshot    `json:"goal"`
	Changes      []Change     `json:"-"`
}

func (s *State) turn(id string) *Turn {
	for i := range s.Turns {
		if s.Turns[i].ID == id {
			return &s.Turns[i]
		}
	}
	return nil
}

func unknownTurn(id string) error {
	if len(id) > MaxTurnIDBytes { // never begun: do not echo it
		return errorf(CodeArgsInvalid, fmt.Sprintf("turnId is %d bytes long, so it is not a turn agentd knows (at most %d bytes)", len(id), MaxTurnIDBytes))
	}
	return errorf(CodeArgsInvalid, fmt.Sprintf("turnId %q is not a turn agentd knows; call agentd.turn.begin first", id))
}

// drivenGoal returns the current goal when the turn is driven by it.
func (s *State) drivenGoal(t *Turn) *Goal {
	if g := s.Goal; g != nil && t.DrivenGoalID != "" && g.ID == t.DrivenGoalID {
		return g
	}
	return nil
}

// BeginTurn records a turn (docs/runtime.md §2.4). For the main agent, the turn
// is goal-driven when the goal is active and no budget is reached; if a
// budget is already reached, the goal is blocked (actor runtime) and the
// turn runs as an ordinary, uncounted turn. Any main-agent turn begin clears
// the outstanding continuation marker (§2.5). Turns of other agents are
// recorded but never goal-driven. A retry with the same turnID of a live
// turn changes nothing and answers as the first call did. Refusal:
// args.invalid for an empty turnID, one longer than MaxTurnIDBytes, an
// unknown origin, or the id of an ended turn (a host that numbers its turns
// from 1 again must not have its new turns taken for old ones).
func (s *State) BeginTurn(turnID string, origin Origin, agent string, now Instant) (TurnBegin, error) {
	if turnID == "" {
		return TurnBegin{}, errorf(CodeArgsInvalid, "turnId must be a non-empty string")
	}
	if len(turnID) > MaxTurnIDBytes {
		return TurnBegin{}, errorf(CodeArgsInvalid, fmt.Sprintf("turnId is %d bytes long; at most %d are allowed", len(turnID), MaxTurnIDBytes))
	}
	switch origin {
	case OriginUser, OriginContinuation, OriginResume:
	default:
		return TurnBegin{}, errorf(CodeArgsInvalid, fmt.Sprintf("origin %q is not valid; use user, continuation or resume", origin))
	}
	if t := s.turn(turnID); t != nil {
		if t.Ended {
			return TurnBegin{}, errorf(CodeArgsInvalid, fmt.Sprintf("turn %q has already ended; use a new turnId for a new turn", turnID))
		}
		return TurnBegin{GoalDriven: t.GoalDriven, Goal: s.Snapshot(now)}, nil
	}
	s.settleClock(now)
	if agent == "" {
		agent = MainAgent
	}
	t := Turn{ID: turnID, Origin: origin, Agent: agent, Owner: now.Clock}
	var cs changeSet
	if t.isMain() {
		s.ContinuationOutstanding = false
	}
	if g := s.Goal; g != nil && t.isMain() {
		t.GoalID = g.ID
		if g.Status == Active {
			if r := g.reached(now); r.any() {
				cs.add(g.setStatus(Blocked, Runtime, budgetReason(g.Limits, r), now))
			} else {
				t.GoalDriven, t.DrivenGoalID = true, g.ID
			}
		}
	}
	s.Turns = append(s.Turns, t)
	s.pruneTurns()
	return TurnBegin{GoalDriven: t.GoalDriven, Goal: s.Snapshot(now), Changes: cs.list()}, nil
}

// BeginStep opens the next step of a turn (docs/runtime.md §2.4, §2.7, §2.3).
// At the first step of a goal-driven turn turnsUsed grows by 1 and the
// budget warnings are checked (§2.4.4). For the main agent it says whether
// the per-turn goal reminder is due (first step, goal active, paused or
// blocked), whether the goal_cancelled notice is due and whether the
// wrap-up note of an active goal is due (both consumed here). When the reminder is due for an active goal, the task
// file's changedSinceLastTurn is cleared (the reminder delivers it, §4).
//
// Steps alternate: a BeginStep while a step is already open is a retry; it
// changes nothing and answers as the first call did. Refusal: turn.ended
// for a turn agentd ended itself (Turn.EndedBy), args.invalid for an
// unknown turn or one its host ended.
func (s *State) BeginStep(turnID string, now Instant) (StepBegin, error) {
	t := s.turn(turnID)
	if t == nil {
		return StepBegin{}, unknownTurn(turnID)
	}
	if err := refuseEndedByAgentd(t); err != nil {
		return StepBegin{}, err
	}
	if t.Ended {
		return StepBegin{}, errorf(CodeArgsInvalid, fmt.Sprintf("turn %q has already ended", turnID))
	}
	if t.StepOpen {
		return s.stepBeginAnswer(t, now, nil), nil
	}
	s.settleClock(now)
	t.StepOpen = true
	t.Steps++
	rec := stepBeginRecord{FirstStep: t.Steps == 1, GraceStep: t.InGrace}
	var cs changeSet
	if t.isMain() {
		if g := s.drivenGoal(t); g != nil && rec.FirstStep && t.GoalDriven && !t.Counted {
			g.TurnsUsed++
			t.Counted = true
			cs.add(progressChange(g, now))
			for _, c := range g.warnBudgets(now) {
				cs.add(c)
			}
		}
		if g := s.Goal; g != nil && rec.FirstStep && g.Status != Complete {
			rec.GoalReminderDue = true
			if g.Status == Active && g.TaskFile != nil && g.TaskFile.ChangedSinceLastTurn {
				rec.TaskFileChanged = true
				g.TaskFile.ChangedSinceLastTurn = false
				cs.add(progressChange(g, now))
			}
			if g.Status == Active && g.Woke != "" {
				rec.Woke, g.Woke = g.Woke, ""
			}
		}
		if s.CancelNoticePending {
			s.CancelNoticePending = false
			rec.CancelNoticeDue = true
		}
		if g := s.Goal; g != nil && g.WrapUpDue {
			g.WrapUpDue = false
			rec.WrapUpDue = g.Status == Active
		}
	}
	t.LastStepBegin = rec
	return s.stepBeginAnswer(t, now, cs.list()), nil
}

func (s *State) stepBeginAnswer(t *Turn, now Instant, cs []Change) StepBegin {
	rec := t.LastStepBegin
	snap := s.Snapshot(now)
	if rec.TaskFileChanged && snap != nil && snap.TaskFile != nil {
		snap.TaskFile.ChangedSinceLastTurn = true
	}
	if snap != nil && rec.Woke != "" {
		snap.Woke = rec.Woke
	}
	return StepBegin{
		FirstStep:       rec.FirstStep,
		GoalReminderDue: rec.GoalReminderDue,
		CancelNoticeDue: rec.CancelNoticeDue,
		GraceStep:       rec.GraceStep,
		WrapUpDue:       rec.WrapUpDue,
		Goal:            snap,
		Changes:         cs,
	}
}

// EndStep closes the open step of a turn (docs/runtime.md §2.4). For a turn
// driven by the current goal, outputTokens are added to tokensUsed and the
// budgets are checked: a warning threshold reached is a budgetWarning
// change (§2.4.4); reaching the token or wall-clock budget blocks the
// active goal at once (actor runtime). Then, if a budget is spent and the goal is
// blocked: a step that ended with tool calls gets the one grace step
// (GraceStep) unless it was already given; otherwise the turn is told to
// stop (StopTurn). A goal that waits stops its turn too (§2.13). The turn
// budget is not checked here: turn N runs to its end (see EndTurn).
//
// Steps alternate: an EndStep with no open step is a retry of the previous
// one; it changes nothing and answers as that call did. On an ended turn
// only an exact retry of the recorded last step end (the turn's last step,
// same outputTokens and finishReason) is answered so; any other step end
// there is refused, since its tokens could no longer be counted; every step
// end on a turn agentd ended itself (Turn.EndedBy) is refused with
// turn.ended. Refusal: args.invalid for an unknown turn, a turn with no step begun, a late step
// end on an ended turn, a negative token count or an unknown finish reason.
func (s *State) EndStep(turnID string, outputTokens int64, finish FinishReason, now Instant) (StepEnd, error) {
	if finish != FinishStop && finish != FinishToolCalls {
		return StepEnd{}, errorf(CodeArgsInvalid, fmt.Sprintf("finishReason %q is not valid; use stop or tool_calls", finish))
	}
	if outputTokens < 0 {
		return StepEnd{}, errorf(CodeArgsInvalid, "outputTokens must be 0 or more")
	}
	t := s.turn(turnID)
	if t == nil {
		return StepEnd{}, unknownTurn(turnID)
	}
	if err := refuseEndedByAgentd(t); err != nil {
		return StepEnd{}, err
	}
	if t.Ended && !t.LastStepEnd.isRetryOf(t.Steps, outputTokens, finish) {
		return StepEnd{}, errorf(CodeArgsInvalid, fmt.Sprintf("turn %q has already ended, so this step end (outputTokens %d, finishReason %s) is not counted; end steps before agentd.turn.end and use a new turnId for a new turn", turnID, outputTokens, finish))
	}
	if !t.StepOpen {
		if t.Steps == 0 {
			return StepEnd{}, errorf(CodeArgsInvalid, fmt.Sprintf("turn %q has no step to end; call agentd.step.begin first", turnID))
		}
		return StepEnd{StopTurn: t.LastStepEnd.StopTurn, GraceStep: t.LastStepEnd.GraceStep, Goal: s.Snapshot(now), Retry: true}, nil
	}
	s.settleClock(now)
	t.StepOpen = false
	t.InGrace = false
	rec := stepEndRecord{Step: t.Steps, OutputTokens: outputTokens, Finish: finish}
	var cs changeSet
	if g := s.drivenGoal(t); g != nil && t.isMain() {
		if outputTokens > 0 {
			// Saturate: a host's absurd count must not wrap to a negative total.
			g.TokensUsed = min(g.TokensUsed, math.MaxInt64-outputTokens) + outputTokens
			cs.add(progressChange(g, now))
		}
		for _, c := range g.warnBudgets(now) {
			cs.add(c)
		}
		r := g.reached(now)
		spent := r.token || r.wallClock
		if spent && g.Status == Active {
			cs.add(g.setStatus(Blocked, Runtime, budgetReason(g.Limits, r), now))
		}
		if g.Status == Waiting {
			rec.StopTurn = true // the goal waits: its turn ends now (§2.13)
		} else if spent && g.Status == Blocked {
			if finish == FinishToolCalls && !t.GraceGiven {
				rec.GraceStep = true
				t.GraceGiven, t.InGrace = true, true
			} else {
				rec.StopTurn = true
			}
		}
	}
	t.LastStepEnd = rec
	return StepEnd{StopTurn: rec.StopTurn, GraceStep: rec.GraceStep, Goal: s.Snapshot(now), Changes: cs.list()}, nil
}

// MainStepOpen reports whether a step of the main agent is open: begun
// and not yet ended, in a live turn. A TodoList write then belongs to that
// step (todo.Usage.NoteWrite).
func (s *State) MainStepOpen() bool {
	for i := range s.Turns {
		if t := &s.Turns[i]; t.isMain() && !t.Ended && t.StepOpen {
			return true
		}
	}
	return false
}

// Detach marks the live turn turnID as driven from outside any agentd
// connection (Turn.Detached). An unknown or ended turn is left alone.
func (s *State) Detach(turnID string) {
	if t := s.turn(turnID); t != nil && !t.Ended {
		t.Detached = true
	}
}

// OpenTurn returns the id of the newest live (not ended) turn of agent
// ("" is MainAgent), or "" when it has none: the session's open turn, which
// a tool call that names no turn belongs to (an MCP client's call while a
// hook-driven turn runs, docs/hooks.md).
func (s *State) OpenTurn(agent string) string {
	if agent == "" {
		agent = MainAgent
	}
	for i := len(s.Turns) - 1; i >= 0; i-- {
		if t := &s.Turns[i]; !t.Ended && t.Agent == agent {
			return t.ID
		}
	}
	return ""
}

// InGraceStep reports whether turnID is in its grace step (granted by the
// previous EndStep, not yet ended): every tool call in it must be rejected
// unexecuted with GraceStepRefusal (docs/runtime.md §2.4).
func (s *State) InGraceStep(turnID string) bool {
	t := s.turn(turnID)
	return t != nil && !t.Ended && t.InGrace
}

// GraceStepRefusal is the result of a tool call made during a grace step;
// description is the tool's usual UI description.
func GraceStepRefusal(description string) ToolResult {
	return ToolResult{
		Output:      "Not run: the goal's budget is spent and the goal is blocked. Call no more tools. Write a short status message for the user saying what was done and what is left, then stop.",
		IsError:     true,
		Description: description,
	}
}

// Error kinds of a failed turn (docs/runtime.md §2.6) and how reasons name them.
var errorKinds = map[string]string{
	"rate_limit": "a rate-limit error",
	"connection": "a connection error",
	"auth":       "an authentication error",
	"safety":     "a safety refusal",
	"api":        "an API error",
	"config":     "a configuration error",
	"other":      "an error",
}

// KindAgentLimit is the error kind of a turn the agent ended itself before
// calling the model, at a loop limit of its own (docs/runtime.md §2.6,
// docs/hooks.md "The agents' own limits"): the turn is not counted and the
// goal pauses with the message as its reason.
const KindAgentLimit = "agent_limit"

// EndTurn ends a turn (docs/runtime.md §2.4–§2.6). For a main-agent turn driven
// by the current goal:
//   - a starter turn that ended completed or stepLimit counts +1;
//   - if the goal is still active: completed or stepLimit → blocked (actor
//     runtime) when any budget is reached, else a continuation
//     (ContinuationStepLimit after stepLimit) unless one is outstanding;
//     cancelled → paused (actor user); blocked → blocked (runtime); failed →
//     paused with the error kind and message (runtime);
//   - a turn that ended completed or stepLimit with the goal still active
//     and within its budgets counts for the stall rule (§2.4.5): stallTurns
//     such turns in a row with no change to the todo list or the task file
//     stall the goal (0 or less: never).
//
// Unknown error kinds count as "other". A retry changes nothing and answers
// as the first call did; a turn agentd ended itself (Turn.EndedBy) is
// refused with turn.ended instead, since the host's outcome was never
// recorded. Refusal: args.invalid for an unknown turn or outcome.
func (s *State) EndTurn(turnID string, outcome Outcome, errKind, errMsg string, stallTurns int, now Instant) (TurnEnd, error) {
	switch outcome {
	case OutcomeCompleted, OutcomeCancelled, OutcomeFailed, OutcomeBlocked, OutcomeStepLimit:
	default:
		return TurnEnd{}, errorf(CodeArgsInvalid, fmt.Sprintf("outcome %q is not valid; use completed, cancelled, failed, blocked or stepLimit", outcome))
	}
	t := s.turn(turnID)
	if t == nil {
		return TurnEnd{}, unknownTurn(turnID)
	}
	if err := refuseEndedByAgentd(t); err != nil {
		return TurnEnd{}, err
	}
	if t.Ended {
		return TurnEnd{Continuation: t.Continuation, Goal: s.Snapshot(now)}, nil
	}
	s.settleClock(now)
	cs := s.endTurn(t, outcome, errKind, errMsg, false, stallTurns, now)
	snap := s.Snapshot(now)
	if t.Continuation != NoContinuation {
		s.Goal.Woke = "" // the continuation names the wake (docs/runtime.md §2.13)
	}
	return TurnEnd{Continuation: t.Continuation, Goal: snap, Changes: cs}, nil
}

// AbandonTurn ends a turn whose connection closed before ending it
// (docs/runtime.md §2.3 [agentd]): a goal-driven turn's active goal is paused as
// if the turn were cancelled (actor runtime). Unknown or ended turns are
// ignored.
func (s *State) AbandonTurn(turnID string, now Instant) []Change {
	t := s.turn(turnID)
	if t == nil || t.Ended {
		return nil
	}
	s.settleClock(now)
	return s.endTurn(t, OutcomeCancelled, "", "", true, 0, now)
}

func (s *State) endTurn(t *Turn, outcome Outcome, errKind, errMsg string, abandoned bool, stallTurns int, now Instant) []Change {
	t.Ended, t.StepOpen, t.InGrace = true, false, false
	if abandoned {
		t.EndedBy = EndedDisconnect
	}
	defer s.pruneTurns()
	g := s.drivenGoal(t)
	if g == nil || !t.isMain() {
		return nil
	}
	var cs changeSet
	normal := outcome == OutcomeCompleted || outcome == OutcomeStepLimit
	if t.Starter && !t.Counted && normal {
		g.TurnsUsed++
		t.Counted = true
		cs.add(progressChange(g, now))
		for _, c := range g.warnBudgets(now) {
			cs.add(c)
		}
	}
	if g.Status != Active {
		return cs.list()
	}
	switch outcome {
	case OutcomeCompleted, OutcomeStepLimit:
		if r := g.reached(now); r.any() {
			cs.add(g.setStatus(Blocked, Runtime, budgetReason(g.Limits, r), now))
		} else {
			for _, c := range g.countTurn(stallTurns, now) {
				cs.add(c)
			}
			if !s.ContinuationOutstanding {
				s.ContinuationOutstanding = true
				t.Continuation = ContinuationNormal
				if outcome == OutcomeStepLimit {
					t.Continuation = ContinuationStepLimit
				}
			}
		}
	case OutcomeCancelled:
		if abandoned {
			cs.add(g.setStatus(Paused, Runtime, reasonDisconnect, now))
		} else {
			cs.add(g.setStatus(Paused, User, reasonInterrupt, now))
		}
	case OutcomeBlocked:
		cs.add(g.setStatus(Blocked, Runtime, reasonHook, now))
	case OutcomeFailed:
		if errKind == KindAgentLimit {
			uncount(t, g) // the pause's snapshot carries the count
			msg := oneLine(errMsg, 300)
			if msg == "" {
				msg = "the agent ended the turn at a limit of its own before calling the model"
			}
			cs.add(g.setStatus(Paused, Runtime, "paused: "+msg, now))
			break
		}
		kind, ok := errorKinds[errKind]
		if !ok {
			kind = errorKinds["other"]
		}
		reason := "paused after " + kind
		if msg := oneLine(errMsg, 300); msg != "" {
			reason += ": " + msg
		}
		cs.add(g.setStatus(Paused, Runtime, reason, now))
	}
	return cs.list()
}

// uncount takes back the count of a turn that its first step counted, when
// the model was never called in it (error kind agent_limit).
func uncount(t *Turn, g *Goal) {
	if t.Counted && g.TurnsUsed > 0 {
		t.Counted = false
		g.TurnsUsed--
	}
}

// oneLine squeezes whitespace and cuts s to at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > n {
		s = string([]rune(s)[:n-1]) + "…"
	}
	return s
}

// pruneTurns keeps every live turn (at most MaxLiveTurns, newest) and the
// newest MaxEndedTurns ended ones.
func (s *State) pruneTurns() {
	ended, live := 0, 0
	for _, t := range s.Turns {
		if t.Ended {
			ended++
		} else {
			live++
		}
	}
	if ended <= MaxEndedTurns && live <= MaxLiveTurns {
		return
	}
	out := s.Turns[:0:0]
	for _, t := range s.Turns {
		if t.Ended && ended > MaxEndedTurns {
			ended--
			continue
		}
		if !t.Ended && live > MaxLiveTurns {
			live--
			continue
		}
		out = append(out, t)
	}
	s.Turns = out
}
