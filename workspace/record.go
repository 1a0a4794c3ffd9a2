package workspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/todo"
)

// The stored records: the JSON of the values of the sessions and history
// buckets (layout in schema.go). They are this package's own types, with
// their own JSON names, converted to and from the domain types (Session,
// todo.Item, todo.Usage, goal.State, ...) only here, so that a rename in a
// domain package never changes what is on disk nor drops what an older
// agentd wrote. The names below are the format: change one only together
// with a record version and a migration (schema.go). record_test.go checks
// them against testdata/record.golden.json and that every domain field
// survives a round trip.

// sessionRecord is the value of sessions/<name>. It is made of the parts
// of a session that change independently (docs/team.md, "A session in
// parts"): the todo list (todoPartRecord), the goal (goalPartRecord), the
// turns and their bookkeeping (turnsPartRecord and TodoUsage), the queue
// (queuePartRecord); the history is kept apart already. Each part is its
// own type, embedded so that the JSON of the whole record stays one flat
// object in this order; a store that keeps each part under a key of its
// own writes the part's type as it is.
type sessionRecord struct {
	V        int    `json:"v"`
	Name     string `json:"name"`
	Revision uint64 `json:"revision"`
	todoPartRecord
	TodoUsage todoUsageRecord `json:"todoUsage"` // bookkeeping of the turns: the stale reminder's counters
	Goal      goalStateRecord `json:"goal"`
	UpdatedAt time.Time       `json:"updatedAt"`
	Requests  []requestRecord `json:"requests,omitempty"` // the identified writes applied (request.go)
}

type requestRecord struct {
	ID       string    `json:"id"`
	At       time.Time `json:"at"`
	Revision uint64    `json:"revision"`
	RunID    string    `json:"runId,omitempty"`
	Reverts  uint64    `json:"reverts,omitempty"`
}

// todoPartRecord is a session's todo list.
type todoPartRecord struct {
	Todos         []todoRecord `json:"todos"` // [] when empty
	TodosRevision uint64       `json:"todosRevision"`
	// SubagentLists are each subagent's own list (docs/runtime.md §1.3).
	// Added to version 1 later: an older agentd ignores them.
	SubagentLists []subagentListRecord `json:"subagentLists,omitempty"`
	// TodoWrites is todo.Usage.Writes: the main agent's TodoList writes,
	// counted with the list so that a write changes no other part. Added to
	// version 1 later: absent, as in every record written before it, none
	// was counted.
	TodoWrites uint64 `json:"todoWrites,omitempty"`
}

type subagentListRecord struct {
	Agent      string       `json:"agent"`
	ParentItem string       `json:"parentItem,omitempty"`
	Items      []todoRecord `json:"items"` // [] when empty
}

type todoRecord struct {
	Title  string `json:"title"`
	Status string `json:"status"`
}

// todoUsageRecord is todo.Usage but its Writes (todoPartRecord's). The
// last three were added to version 1 later: absent, as in every record
// written before them, every write was taken and no step is open.
type todoUsageRecord struct {
	Used               bool   `json:"used"`
	StepsSinceWrite    int    `json:"stepsSinceWrite"`
	StepsSinceReminder int    `json:"stepsSinceReminder"`
	Reminded           bool   `json:"reminded"`
	WroteThisStep      bool   `json:"wroteThisStep"`
	WritesSeen         uint64 `json:"writesSeen,omitempty"`
	StepOpen           bool   `json:"stepOpen,omitempty"`
	WritesAtStep       uint64 `json:"writesAtStep,omitempty"`
}

func usageToRecord(u todo.Usage) todoUsageRecord {
	return todoUsageRecord{Used: u.Used, StepsSinceWrite: u.StepsSinceWrite, StepsSinceReminder: u.StepsSinceReminder, Reminded: u.Reminded,
		WroteThisStep: u.WroteThisStep, WritesSeen: u.WritesSeen, StepOpen: u.StepOpen, WritesAtStep: u.WritesAtStep}
}

func usageFromRecord(r todoUsageRecord, writes uint64) todo.Usage {
	return todo.Usage{Used: r.Used, StepsSinceWrite: r.StepsSinceWrite, StepsSinceReminder: r.StepsSinceReminder, Reminded: r.Reminded,
		WroteThisStep: r.WroteThisStep, Writes: writes, WritesSeen: r.WritesSeen, StepOpen: r.StepOpen, WritesAtStep: r.WritesAtStep}
}

// goalStateRecord is goal.State: three parts of the session.
type goalStateRecord struct {
	goalPartRecord
	turnsPartRecord
	queuePartRecord
}

// goalPartRecord is a session's current goal.
type goalPartRecord struct {
	Goal                *goalRecord `json:"goal"`
	CancelNoticePending bool        `json:"cancelNoticePending,omitempty"`
}

// turnsPartRecord is a session's live and recent turns, changed at every step.
type turnsPartRecord struct {
	ContinuationOutstanding bool         `json:"continuationOutstanding,omitempty"`
	Turns                   []turnRecord `json:"turns,omitempty"`
}

// queuePartRecord is a session's queue of upcoming goals.
type queuePartRecord struct {
	Queue          []queuedGoalRecord `json:"queue,omitempty"`
	AutoAdvanceOff bool               `json:"autoAdvanceOff,omitempty"`
}

type queuedGoalRecord struct {
	ID                  string             `json:"id"`
	Objective           string             `json:"objective"`
	CompletionCriterion string             `json:"completionCriterion,omitempty"`
	Check               string             `json:"check,omitempty"`
	CheckSetBy          *checkSetterRecord `json:"checkSetBy,omitempty"`
	AddedAt             time.Time          `json:"addedAt"`
	// The budgets a person gave the queued goal (docs/runtime.md §2.9.1).
	// Added to version 1 later: absent is no limit, and an older agentd
	// ignores them.
	TurnBudget        *int64 `json:"turnBudget,omitempty"`
	TokenBudget       *int64 `json:"tokenBudget,omitempty"`
	WallClockBudgetMs *int64 `json:"wallClockBudgetMs,omitempty"`
}

// checkSetterRecord is goal.CheckSetter: who set a check (docs/runtime.md
// §2.10.4). Added to version 1 later: an older agentd ignores it.
type checkSetterRecord struct {
	User string `json:"user"`
	Host string `json:"host"`
}

type goalRecord struct {
	ID                  string       `json:"id"`
	Objective           string       `json:"objective"`
	CompletionCriterion string       `json:"completionCriterion,omitempty"`
	Status              string       `json:"status"`
	TurnsUsed           int64        `json:"turnsUsed"`
	TokensUsed          int64        `json:"tokensUsed"`
	WallClockMs         int64        `json:"wallClockMs"`
	ActiveSince         time.Time    `json:"activeSince,omitzero"`
	Limits              limitsRecord `json:"limits"`
	// PersonLimits is goal.Goal.PersonLimits: the limits a person set;
	// nil when they are Limits, as every record written before the field
	// reads (a limit of unknown origin is the person's, docs/runtime.md
	// §2.11), so that such a record is written again byte for byte.
	PersonLimits   *limitsRecord   `json:"personLimits,omitempty"`
	TerminalReason string          `json:"terminalReason,omitempty"`
	TaskFile       *taskFileRecord `json:"taskFile,omitempty"`
	Check          *checkRecord    `json:"check,omitempty"`
	CreatedAt      time.Time       `json:"createdAt"`
	UpdatedAt      time.Time       `json:"updatedAt"`
	LastActor      string          `json:"lastActor"`
	ActiveClock    string          `json:"activeClock,omitempty"`
	ActiveMono     int64           `json:"activeMono,omitempty"` // nanoseconds
	BudgetWarned   warnedRecord    `json:"budgetWarned,omitzero"`
	WrapUpDue      bool            `json:"wrapUpDue,omitempty"`
	Progressed     bool            `json:"progressed,omitempty"`
	QuietTurns     int             `json:"quietTurns,omitempty"`
	Stalled        bool            `json:"stalled,omitempty"`
	// TodosOptional is goal.Goal.TodosOptional (docs/runtime.md §2.12):
	// absent, as in every record written before it, the goal requires
	// its todo items.
	TodosOptional bool `json:"todosOptional,omitempty"`
	// Wait, WaitMarks and Woke are goal.Goal's (docs/runtime.md §2.13):
	// absent, as in every record written before them, the goal does not
	// wait.
	Wait      *waitRecord       `json:"wait,omitempty"`
	WaitMarks map[string]string `json:"waitMarks,omitempty"`
	Woke      string            `json:"woke,omitempty"`
}

// waitRecord is goal.Wait.
type waitRecord struct {
	Since       time.Time  `json:"since"`
	By          string     `json:"by"`
	Note        string     `json:"note,omitempty"`
	Until       *time.Time `json:"until,omitempty"`
	Paths       []string   `json:"paths,omitempty"`
	CheckPasses bool       `json:"checkPasses,omitempty"`
	WallClock   string     `json:"wallClock"`
}

type warnedRecord struct {
	Turns     int `json:"turns,omitempty"`
	Tokens    int `json:"tokens,omitempty"`
	WallClock int `json:"wallClock,omitempty"`
}

type limitsRecord struct {
	TurnBudget        *int64 `json:"turnBudget"`
	TokenBudget       *int64 `json:"tokenBudget"`
	WallClockBudgetMs *int64 `json:"wallClockBudgetMs"`
}

type taskFileRecord struct {
	Path                 string     `json:"path"`
	Exists               bool       `json:"exists"`
	SHA256               string     `json:"sha256,omitempty"`
	Size                 int64      `json:"size"`
	ModifiedAt           *time.Time `json:"modifiedAt,omitempty"`
	ChangedSinceLastTurn bool       `json:"changedSinceLastTurn"`
	// Checkboxes is goal.TaskFileInfo.Checkboxes.
	Checkboxes *checkboxesRecord `json:"checkboxes,omitempty"`
}

type checkboxesRecord struct {
	Checked int `json:"checked"`
	Total   int `json:"total"`
}

// checkRecord is a goal's verification command (docs/runtime.md §2.10).
// Running is stored so that panels opened during a run see it; the next
// agentd process to open the folder clears a mark no process will finish.
type checkRecord struct {
	Command string             `json:"command"`
	SetBy   *checkSetterRecord `json:"setBy,omitempty"`
	Running bool               `json:"running,omitempty"`
	RunBy   string             `json:"runBy,omitempty"`
	RunID   string             `json:"runId,omitempty"` // goal.Check.RunID: the run in progress
	LastRun *checkRunRecord    `json:"lastRun,omitempty"`
	// Process is goal.Check.Process: what the service recorded of the
	// running check's process, which the next agentd process to open the
	// folder stops when it clears the mark.
	Process processRecord `json:"process,omitempty"`
}

// processRecord is goal.Check.Process as it is stored: the JSON object
// the service wrote (service/checkproc.go), kept as it is. Anything but an
// object or null is refused, as any record field of the wrong type is.
type processRecord []byte

func (p processRecord) MarshalJSON() ([]byte, error) { return p, nil }

func (p *processRecord) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		*p = nil
	case len(b) == 0 || b[0] != '{':
		return errors.New("the running check's process is not a JSON object")
	default:
		*p = slices.Clone(b)
	}
	return nil
}

type checkRunRecord struct {
	ExitCode   int       `json:"exitCode"`
	DurationMs int64     `json:"durationMs"`
	At         time.Time `json:"at"`
	OutputTail string    `json:"outputTail"`
	RunID      string    `json:"runId,omitempty"`
}

type turnRecord struct {
	ID            string          `json:"id"`
	Origin        string          `json:"origin"`
	Agent         string          `json:"agent"`
	GoalDriven    bool            `json:"goalDriven,omitempty"`
	GoalID        string          `json:"goalId,omitempty"`
	DrivenGoalID  string          `json:"drivenGoalId,omitempty"`
	Starter       bool            `json:"starter,omitempty"`
	Counted       bool            `json:"counted,omitempty"`
	Steps         int             `json:"steps,omitempty"`
	StepOpen      bool            `json:"stepOpen,omitempty"`
	GraceGiven    bool            `json:"graceGiven,omitempty"`
	InGrace       bool            `json:"inGrace,omitempty"`
	Ended         bool            `json:"ended,omitempty"`
	EndedBy       string          `json:"endedBy,omitempty"`
	Detached      bool            `json:"detached,omitempty"`
	Owner         string          `json:"owner,omitempty"`
	LastStepBegin stepBeginRecord `json:"lastStepBegin"`
	LastStepEnd   stepEndRecord   `json:"lastStepEnd"`
	Continuation  string          `json:"continuation,omitempty"`
}

type stepBeginRecord struct {
	FirstStep       bool `json:"firstStep,omitempty"`
	GoalReminderDue bool `json:"goalReminderDue,omitempty"`
	TaskFileChanged bool `json:"taskFileChanged,omitempty"`
	CancelNoticeDue bool `json:"cancelNoticeDue,omitempty"`
	GraceStep       bool `json:"graceStep,omitempty"`
	WrapUpDue       bool `json:"wrapUpDue,omitempty"`
	// Woke is goal.stepBeginRecord's (docs/runtime.md §2.13).
	Woke string `json:"woke,omitempty"`
}

type stepEndRecord struct {
	StopTurn     bool   `json:"stopTurn,omitempty"`
	GraceStep    bool   `json:"graceStep,omitempty"`
	Step         int    `json:"step,omitempty"`
	OutputTokens int64  `json:"outputTokens,omitempty"`
	Finish       string `json:"finish,omitempty"`
}

// eventRecord is the value of history/<name>/<seq>. Before and Payload
// are the JSON of Change.Before and Change.Payload, the history records of
// historyrecord.go, copied in as they are and read back verbatim. Revision and Before were
// added to version 1 later: records written before them read as 0 and
// absent, and an older agentd skips them (unknown names are ignored), so
// they need no new version.
type eventRecord struct {
	V        int             `json:"v"`
	Seq      uint64          `json:"seq"`
	At       time.Time       `json:"at"`
	Actor    string          `json:"actor"`
	Kind     string          `json:"kind"`
	Reason   string          `json:"reason,omitempty"`
	Revision uint64          `json:"revision,omitempty"`
	Before   json.RawMessage `json:"before,omitempty"`
	Payload  json.RawMessage `json:"payload,omitempty"`
}

// encodeSession returns the stored record of s.
func encodeSession(s Session) ([]byte, error) {
	rec := sessionToRecord(s)
	data, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("encoding the session record: %w", err)
	}
	return data, nil
}

// sessionToRecord is the record of s.
func sessionToRecord(s Session) sessionRecord {
	rec := sessionRecord{
		V:              sessionRecordVersion,
		Name:           s.Name,
		Revision:       s.Revision,
		todoPartRecord: todoPartRecord{TodosRevision: s.TodosRevision, TodoWrites: s.TodoUsage.Writes},
		TodoUsage:      usageToRecord(s.TodoUsage),
		Goal:           goalStateToRecord(s.Goal),
		UpdatedAt:      s.UpdatedAt,
	}
	rec.Todos = storedList(s.Todos)
	for _, l := range s.SubagentLists {
		rec.SubagentLists = append(rec.SubagentLists, subagentListRecord{Agent: l.Agent, ParentItem: l.ParentItem, Items: storedList(l.Items)})
	}
	for _, r := range s.Requests {
		rec.Requests = append(rec.Requests, requestRecord(r))
	}
	return rec
}

// decodeSessionRecord parses a stored session; rec.V is for the caller to
// check. Todos is never nil.
func decodeSessionRecord(data []byte) (s Session, version int, err error) {
	var rec sessionRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return Session{}, 0, err
	}
	return sessionFromRecord(rec), rec.V, nil
}

// sessionFromRecord is the session of rec. Todos is never nil.
func sessionFromRecord(rec sessionRecord) Session {
	s := Session{
		Name:          rec.Name,
		Revision:      rec.Revision,
		Todos:         readList(rec.Todos),
		TodosRevision: rec.TodosRevision,
		TodoUsage:     usageFromRecord(rec.TodoUsage, rec.TodoWrites),
		Goal:          goalStateFromRecord(rec.Goal),
		UpdatedAt:     rec.UpdatedAt,
	}
	for _, l := range rec.SubagentLists {
		s.SubagentLists = append(s.SubagentLists, todo.SubagentList{Agent: l.Agent, ParentItem: l.ParentItem, Items: readList(l.Items)})
	}
	for _, r := range rec.Requests {
		s.Requests = append(s.Requests, Request(r))
	}
	return s
}

// storedList is a list as stored in a session record: [] when empty.
func storedList(items []todo.Item) []todoRecord {
	if items == nil {
		return []todoRecord{}
	}
	return todoRecords(items)
}

// readList is a stored list read back: never nil.
func readList(recs []todoRecord) []todo.Item {
	if recs == nil {
		return []todo.Item{}
	}
	return todoItems(recs)
}

func goalStateToRecord(g goal.State) goalStateRecord {
	rec := goalStateRecord{
		goalPartRecord:  goalPartRecord{CancelNoticePending: g.CancelNoticePending},
		turnsPartRecord: turnsPartRecord{ContinuationOutstanding: g.ContinuationOutstanding},
		queuePartRecord: queuePartRecord{AutoAdvanceOff: g.AutoAdvanceOff},
	}
	for _, q := range g.Queue {
		rec.Queue = append(rec.Queue, queuedGoalRecord{ID: q.ID, Objective: q.Objective, CompletionCriterion: q.CompletionCriterion, Check: q.Check, CheckSetBy: (*checkSetterRecord)(q.CheckSetBy), AddedAt: q.AddedAt,
			TurnBudget: q.TurnBudget, TokenBudget: q.TokenBudget, WallClockBudgetMs: q.WallClockBudgetMs})
	}
	if g.Goal != nil {
		rec.Goal = &goalRecord{
			ID:                  g.Goal.ID,
			Objective:           g.Goal.Objective,
			CompletionCriterion: g.Goal.CompletionCriterion,
			Status:              string(g.Goal.Status),
			TurnsUsed:           g.Goal.TurnsUsed,
			TokensUsed:          g.Goal.TokensUsed,
			WallClockMs:         g.Goal.WallClockMs,
			ActiveSince:         g.Goal.ActiveSince,
			Limits:              limitsRecord(g.Goal.Limits),
			TerminalReason:      g.Goal.TerminalReason,
			CreatedAt:           g.Goal.CreatedAt,
			UpdatedAt:           g.Goal.UpdatedAt,
			LastActor:           string(g.Goal.LastActor),
			ActiveClock:         g.Goal.ActiveClock,
			ActiveMono:          int64(g.Goal.ActiveMono),
			BudgetWarned:        warnedRecord(g.Goal.BudgetWarned),
			WrapUpDue:           g.Goal.WrapUpDue,
			Progressed:          g.Goal.Progressed,
			QuietTurns:          g.Goal.QuietTurns,
			Stalled:             g.Goal.Stalled,
			TodosOptional:       g.Goal.TodosOptional,
			WaitMarks:           maps.Clone(g.Goal.WaitMarks),
			Woke:                g.Goal.Woke,
		}
		if w := g.Goal.Wait; w != nil {
			rec.Goal.Wait = &waitRecord{Since: w.Since, By: string(w.By), Note: w.Note, Until: w.Until, Paths: slices.Clone(w.Paths), CheckPasses: w.CheckPasses, WallClock: string(w.WallClock)}
		}
		if p := g.Goal.PersonLimits; !p.Equal(g.Goal.Limits) {
			rec.Goal.PersonLimits = (*limitsRecord)(&p)
		}
		if t := g.Goal.TaskFile; t != nil {
			rec.Goal.TaskFile = &taskFileRecord{Path: t.Path, Exists: t.Exists, SHA256: t.SHA256, Size: t.Size, ModifiedAt: t.ModifiedAt, ChangedSinceLastTurn: t.ChangedSinceLastTurn}
			if c := t.Checkboxes; c != nil {
				rec.Goal.TaskFile.Checkboxes = &checkboxesRecord{Checked: c.Checked, Total: c.Total}
			}
		}
		if c := g.Goal.Check; c != nil {
			rec.Goal.Check = &checkRecord{Command: c.Command, SetBy: (*checkSetterRecord)(c.SetBy), Running: c.Running, RunBy: c.RunBy, RunID: c.RunID}
			if r := c.LastRun; r != nil {
				rec.Goal.Check.LastRun = (*checkRunRecord)(r)
			}
			rec.Goal.Check.Process = processRecord(slices.Clone(c.Process))
		}
	}
	for _, t := range g.Turns {
		rec.Turns = append(rec.Turns, turnToRecord(t))
	}
	return rec
}

func turnToRecord(t goal.Turn) turnRecord {
	return turnRecord{
		ID:            t.ID,
		Origin:        string(t.Origin),
		Agent:         t.Agent,
		GoalDriven:    t.GoalDriven,
		GoalID:        t.GoalID,
		DrivenGoalID:  t.DrivenGoalID,
		Starter:       t.Starter,
		Counted:       t.Counted,
		Steps:         t.Steps,
		StepOpen:      t.StepOpen,
		GraceGiven:    t.GraceGiven,
		InGrace:       t.InGrace,
		Ended:         t.Ended,
		EndedBy:       t.EndedBy,
		Detached:      t.Detached,
		Owner:         t.Owner,
		LastStepBegin: stepBeginRecord(t.LastStepBegin),
		LastStepEnd: stepEndRecord{
			StopTurn:     t.LastStepEnd.StopTurn,
			GraceStep:    t.LastStepEnd.GraceStep,
			Step:         t.LastStepEnd.Step,
			OutputTokens: t.LastStepEnd.OutputTokens,
			Finish:       string(t.LastStepEnd.Finish),
		},
		Continuation: string(t.Continuation),
	}
}

// personLimitsFromRecord is the person's limits of r; without them (a
// record written before they were stored, or one whose every limit is the
// person's) all of its limits: a limit of unknown origin counts as the
// person's, so the model never gets to raise it (docs/runtime.md §2.11).
func personLimitsFromRecord(r *goalRecord) goal.Limits {
	if r.PersonLimits == nil {
		return goal.Limits(r.Limits)
	}
	return goal.Limits(*r.PersonLimits)
}

func goalStateFromRecord(rec goalStateRecord) goal.State {
	g := goal.State{
		CancelNoticePending:     rec.CancelNoticePending,
		ContinuationOutstanding: rec.ContinuationOutstanding,
		AutoAdvanceOff:          rec.AutoAdvanceOff,
	}
	for _, q := range rec.Queue {
		g.Queue = append(g.Queue, goal.QueuedGoal{ID: q.ID, Objective: q.Objective, CompletionCriterion: q.CompletionCriterion, Check: q.Check, CheckSetBy: (*goal.CheckSetter)(q.CheckSetBy), AddedAt: q.AddedAt,
			TurnBudget: q.TurnBudget, TokenBudget: q.TokenBudget, WallClockBudgetMs: q.WallClockBudgetMs})
	}
	if r := rec.Goal; r != nil {
		g.Goal = &goal.Goal{
			ID:                  r.ID,
			Objective:           r.Objective,
			CompletionCriterion: r.CompletionCriterion,
			Status:              goal.Status(r.Status),
			TurnsUsed:           r.TurnsUsed,
			TokensUsed:          r.TokensUsed,
			WallClockMs:         r.WallClockMs,
			ActiveSince:         r.ActiveSince,
			Limits:              goal.Limits(r.Limits),
			PersonLimits:        personLimitsFromRecord(r),
			TerminalReason:      r.TerminalReason,
			CreatedAt:           r.CreatedAt,
			UpdatedAt:           r.UpdatedAt,
			LastActor:           goal.Actor(r.LastActor),
			ActiveClock:         r.ActiveClock,
			ActiveMono:          time.Duration(r.ActiveMono),
			BudgetWarned:        goal.BudgetWarned(r.BudgetWarned),
			WrapUpDue:           r.WrapUpDue,
			Progressed:          r.Progressed,
			QuietTurns:          r.QuietTurns,
			Stalled:             r.Stalled,
			TodosOptional:       r.TodosOptional,
			WaitMarks:           maps.Clone(r.WaitMarks),
			Woke:                r.Woke,
		}
		if w := r.Wait; w != nil {
			g.Goal.Wait = &goal.Wait{Since: w.Since, By: goal.Actor(w.By), Note: w.Note, Until: w.Until, Paths: slices.Clone(w.Paths), CheckPasses: w.CheckPasses, WallClock: goal.WallClockMode(w.WallClock)}
		}
		if t := r.TaskFile; t != nil {
			g.Goal.TaskFile = &goal.TaskFileInfo{Path: t.Path, Exists: t.Exists, SHA256: t.SHA256, Size: t.Size, ModifiedAt: t.ModifiedAt, ChangedSinceLastTurn: t.ChangedSinceLastTurn}
			if c := t.Checkboxes; c != nil {
				g.Goal.TaskFile.Checkboxes = &goal.Checkboxes{Checked: c.Checked, Total: c.Total}
			}
		}
		if c := r.Check; c != nil {
			g.Goal.Check = &goal.Check{Command: c.Command, SetBy: (*goal.CheckSetter)(c.SetBy), Running: c.Running, RunBy: c.RunBy, RunID: c.RunID}
			if run := c.LastRun; run != nil {
				g.Goal.Check.LastRun = (*goal.CheckRun)(run)
			}
			g.Goal.Check.Process = slices.Clone(c.Process)
		}
	}
	for _, r := range rec.Turns {
		g.Turns = append(g.Turns, turnFromRecord(r))
	}
	return g
}

func turnFromRecord(r turnRecord) goal.Turn {
	t := goal.Turn{
		ID:           r.ID,
		Origin:       goal.Origin(r.Origin),
		Agent:        r.Agent,
		GoalDriven:   r.GoalDriven,
		GoalID:       r.GoalID,
		DrivenGoalID: r.DrivenGoalID,
		Starter:      r.Starter,
		Counted:      r.Counted,
		Steps:        r.Steps,
		StepOpen:     r.StepOpen,
		GraceGiven:   r.GraceGiven,
		InGrace:      r.InGrace,
		Ended:        r.Ended,
		EndedBy:      r.EndedBy,
		Detached:     r.Detached,
		Owner:        r.Owner,
		Continuation: goal.Continuation(r.Continuation),
	}
	// goal's step records are unexported types: set field by field.
	b := r.LastStepBegin
	t.LastStepBegin.FirstStep = b.FirstStep
	t.LastStepBegin.GoalReminderDue = b.GoalReminderDue
	t.LastStepBegin.TaskFileChanged = b.TaskFileChanged
	t.LastStepBegin.CancelNoticeDue = b.CancelNoticeDue
	t.LastStepBegin.GraceStep = b.GraceStep
	t.LastStepBegin.WrapUpDue = b.WrapUpDue
	t.LastStepBegin.Woke = b.Woke
	e := r.LastStepEnd
	t.LastStepEnd.StopTurn = e.StopTurn
	t.LastStepEnd.GraceStep = e.GraceStep
	t.LastStepEnd.Step = e.Step
	t.LastStepEnd.OutputTokens = e.OutputTokens
	t.LastStepEnd.Finish = goal.FinishReason(e.Finish)
	return t
}

// encodeEvent returns the stored record of ev.
func encodeEvent(ev Event) ([]byte, error) {
	rec, err := encodeEventRecord(ev)
	if err != nil {
		return nil, err
	}
	return rec.withSeq(ev.Seq), nil
}

// eventRecordHead is how every stored event starts: its fields up to the
// value of seq.
var eventRecordHead = fmt.Sprintf(`{"v":%d,"seq":`, eventRecordVersion)

// encodedEvent is the stored record of an event whose sequence number is
// not known yet (it is taken in the transaction that stores it): the
// record of sequence number n is eventRecordHead, n, tail.
type encodedEvent struct{ tail []byte }

// encodeEventRecord encodes ev but its Seq. ev.Before and ev.Payload must
// be JSON as json.Marshal writes it (compact, HTML characters escaped), as
// Update makes them: they are copied into the record as they are, where
// json.Marshal would compact them again to the same bytes.
func encodeEventRecord(ev Event) (encodedEvent, error) {
	data, err := json.Marshal(eventRecord{V: eventRecordVersion, At: ev.At, Actor: ev.Actor, Kind: string(ev.Kind), Reason: ev.Reason, Revision: ev.Revision})
	if err != nil {
		return encodedEvent{}, err
	}
	tail, ok := bytes.CutPrefix(data, []byte(eventRecordHead+"0"))
	if !ok {
		return encodedEvent{}, fmt.Errorf("encoding the event record: %s does not start with %s0", data, eventRecordHead)
	}
	// before and payload are the last fields, in this order.
	for _, f := range []struct {
		key string
		raw json.RawMessage
	}{{`,"before":`, ev.Before}, {`,"payload":`, ev.Payload}} {
		if len(f.raw) == 0 {
			continue
		}
		t := make([]byte, 0, len(tail)+len(f.key)+len(f.raw))
		t = append(append(append(t, tail[:len(tail)-1]...), f.key...), f.raw...)
		tail = append(t, '}')
	}
	return encodedEvent{tail: tail}, nil
}

// withSeq returns the record with sequence number seq.
func (e encodedEvent) withSeq(seq uint64) []byte {
	b := make([]byte, 0, len(eventRecordHead)+20+len(e.tail))
	b = append(b, eventRecordHead...)
	b = strconv.AppendUint(b, seq, 10)
	return append(b, e.tail...)
}

// decodeEventRecord parses a stored event; version is for the caller to
// check.
func decodeEventRecord(data []byte) (ev Event, version int, err error) {
	var rec eventRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return Event{}, 0, err
	}
	return Event{Seq: rec.Seq, At: rec.At, Actor: rec.Actor, Kind: protocol.EventKind(rec.Kind), Reason: rec.Reason,
		Revision: rec.Revision, Before: rec.Before, Payload: rec.Payload}, rec.V, nil
}

// storedForm returns the session that a reader of data, the stored record
// of s (encodeSession(s)), gets: what decodeSession(name, data) returns,
// without decoding data when a copy of s says the same. The record keeps
// every field of s (TestRecordRoundTrip); its JSON drops only monotonic
// clock readings (dropped here too), an empty list of turns (read as nil,
// as cloneSession makes it) and a time's location (a reader gets the same
// instant and zone offset). Two things it changes are not copied: a string
// that is not valid UTF-8 (stored with U+FFFD in place of its bad bytes)
// and a zone offset with seconds (stored in whole minutes); data is decoded
// for those, as for any U+FFFD in data. TestStoredFormIsWhatIsRead checks
// that the two agree.
func (w *Workspace) storedForm(name string, s Session, data []byte) (Session, error) {
	if bytes.Contains(data, []byte(`\ufffd`)) || bytes.Contains(data, []byte("\uFFFD")) {
		return w.decodeSession(name, data)
	}
	c := cloneSession(s)
	ok := storedTime(&c.UpdatedAt)
	if g := c.Goal.Goal; g != nil {
		ok = storedTime(&g.ActiveSince) && storedTime(&g.CreatedAt) && storedTime(&g.UpdatedAt) && ok
		if t := g.TaskFile; t != nil && t.ModifiedAt != nil {
			ok = storedTime(t.ModifiedAt) && ok
		}
	}
	for i := range c.Goal.Queue {
		ok = storedTime(&c.Goal.Queue[i].AddedAt) && ok
	}
	for i := range c.Requests {
		ok = storedTime(&c.Requests[i].At) && ok
	}
	if !ok {
		return w.decodeSession(name, data)
	}
	return c, nil
}

// storedTime drops t's monotonic clock reading, as its JSON does, and says
// whether its JSON keeps the instant: a zone offset of whole minutes.
func storedTime(t *time.Time) bool {
	*t = t.Round(0)
	_, offset := t.Zone()
	return offset%60 == 0
}
