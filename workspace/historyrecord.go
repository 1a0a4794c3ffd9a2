package workspace

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/todo"
)

// The stored form of a history event's before and payload (docs/runtime.md
// §6, "The stored history"). The service gives Change.Before and
// Change.Payload as the history values below, made of domain types; each
// encodes itself as its record type, this package's own, so that a change
// of a domain type's or of the wire protocol's JSON never changes what is
// on disk. The record names are the format, the bytes an agentd wrote
// since before and payload were first stored: change one only together
// with a record version and a migration (schema.go).
// historyrecord_test.go checks them against
// testdata/history-record.golden.json and the stored history of
// testdata/schema1-state.db, which they write again byte for byte. Reading
// goes through the same records (Event.TodosBefore, Event.GoalBefore,
// Event.PayloadGoals); agentd.history answers the stored bytes as they are.

// HistoryBefore is what a history event keeps of the state of a change's
// scope before it: a TodosBefore or a GoalBefore, each of which encodes
// itself as its record.
type HistoryBefore interface {
	json.Marshaler
	historyBefore()
}

// HistoryPayload is what a history event keeps of a change: a
// TodoPayload, GoalPayload or QueuePayload, each of which encodes itself
// as its record.
type HistoryPayload interface {
	json.Marshaler
	historyPayload()
}

func (TodosBefore) historyBefore()   {}
func (GoalBefore) historyBefore()    {}
func (TodoPayload) historyPayload()  {}
func (GoalPayload) historyPayload()  {}
func (QueuePayload) historyPayload() {}

// TodosBefore is the before of a todo change: the list before it.
type TodosBefore struct{ Items []todo.Item }

// GoalBefore is the before of a goal change: the goal as it stood before
// it (nil: there was none).
type GoalBefore struct{ Goal *goal.Snapshot }

// TodoPayload is the payload of a todo change (todo.write, todo.set,
// todo.undo): the list after it; for a model's write the agent that wrote
// it (nil for other changes); for an undo the change it reverted.
type TodoPayload struct {
	Items   []todo.Item
	Agent   *string
	Reverts *Reverts
}

// GoalPayload is the payload of a goal change: the changes of the goal in
// the one write, oldest first; Reverts, for an undo, is stored with the
// last of them.
type GoalPayload struct {
	Changes []goal.Change
	Reverts *Reverts
}

// QueuePayload is the payload of a change of the goal queue: the change
// and whether the queue advances by itself after it.
type QueuePayload struct {
	Change      goal.QueueChange
	AutoAdvance bool
}

// Reverts names the change an undo reverted.
type Reverts struct {
	Seq      uint64
	Revision uint64
	Kind     string
}

type todosBeforeRecord struct {
	Items []todoRecord `json:"items"`
}

type goalBeforeRecord struct {
	Goal *goalSnapshotRecord `json:"goal"`
}

// The payload records' fields are in the order of their names: the
// payloads were first written as JSON objects of maps, whose keys
// encoding/json sorts.
type todoPayloadRecord struct {
	Agent   *string        `json:"agent,omitempty"`
	Items   []todoRecord   `json:"items"`
	Reverts *revertsRecord `json:"reverts,omitempty"`
}

type goalChangeRecord struct {
	Actor   string              `json:"actor"`
	Goal    *goalSnapshotRecord `json:"goal"`
	Kind    string              `json:"kind"`
	Percent int                 `json:"percent,omitempty"`
	Reason  string              `json:"reason"`
	Reverts *revertsRecord      `json:"reverts,omitempty"`
	Status  string              `json:"status"`
}

type queuePayloadRecord struct {
	AutoAdvance bool              `json:"autoAdvance"`
	Change      queueChangeRecord `json:"change"`
}

type queueChangeRecord struct {
	Kind  string            `json:"kind"`
	Item  *queuedGoalRecord `json:"item,omitempty"`
	Index int               `json:"index"`
}

type revertsRecord struct {
	Seq      uint64 `json:"seq"`
	Revision uint64 `json:"revision"`
	Kind     string `json:"kind"`
}

// goalSnapshotRecord is goal.Snapshot as a history event keeps it.
type goalSnapshotRecord struct {
	GoalID              string               `json:"goalId,omitempty"`
	Objective           string               `json:"objective"`
	CompletionCriterion string               `json:"completionCriterion,omitempty"`
	Status              string               `json:"status"`
	TurnsUsed           int64                `json:"turnsUsed"`
	TokensUsed          int64                `json:"tokensUsed"`
	WallClockMs         int64                `json:"wallClockMs"`
	Budget              budgetRecord         `json:"budget"`
	TerminalReason      string               `json:"terminalReason,omitempty"`
	TaskFile            *taskFileRecord      `json:"taskFile,omitempty"`
	Check               *snapshotCheckRecord `json:"check,omitempty"`
	CreatedAt           time.Time            `json:"createdAt"`
	UpdatedAt           time.Time            `json:"updatedAt"`
	LastActor           string               `json:"lastActor"`
	// Stalled is written always; events written before it was (a goal
	// snapshot of schema-1 files) read as false.
	Stalled *bool `json:"stalled,omitempty"`
}

type budgetRecord struct {
	TokenBudget            *int64 `json:"tokenBudget"`
	TurnBudget             *int64 `json:"turnBudget"`
	WallClockBudgetMs      *int64 `json:"wallClockBudgetMs"`
	RemainingTokens        *int64 `json:"remainingTokens"`
	RemainingTurns         *int64 `json:"remainingTurns"`
	RemainingWallClockMs   *int64 `json:"remainingWallClockMs"`
	TokenBudgetReached     bool   `json:"tokenBudgetReached"`
	TurnBudgetReached      bool   `json:"turnBudgetReached"`
	WallClockBudgetReached bool   `json:"wallClockBudgetReached"`
	OverBudget             bool   `json:"overBudget"`
}

// snapshotCheckRecord is the part of goal.Check a history event keeps:
// not who approved it, nor the running process.
type snapshotCheckRecord struct {
	Command string             `json:"command"`
	SetBy   *checkSetterRecord `json:"setBy,omitempty"`
	Running bool               `json:"running,omitempty"`
	LastRun *checkRunRecord    `json:"lastRun,omitempty"`
}

// MarshalJSON encodes b as its record.
func (b TodosBefore) MarshalJSON() ([]byte, error) {
	return json.Marshal(todosBeforeRecord{Items: todoRecords(b.Items)})
}

// MarshalJSON encodes b as its record.
func (b GoalBefore) MarshalJSON() ([]byte, error) {
	return json.Marshal(goalBeforeRecord{Goal: snapshotToRecord(b.Goal)})
}

// MarshalJSON encodes p as its record.
func (p TodoPayload) MarshalJSON() ([]byte, error) {
	return json.Marshal(todoPayloadRecord{Agent: p.Agent, Items: todoRecords(p.Items), Reverts: (*revertsRecord)(p.Reverts)})
}

// MarshalJSON encodes p as its record.
func (p GoalPayload) MarshalJSON() ([]byte, error) {
	recs := make([]goalChangeRecord, len(p.Changes))
	for i, c := range p.Changes {
		recs[i] = goalChangeRecord{Actor: string(c.Actor), Goal: snapshotToRecord(c.Goal), Kind: string(c.Kind), Percent: c.Percent, Reason: c.Reason, Status: string(c.Status)}
	}
	if len(recs) > 0 {
		recs[len(recs)-1].Reverts = (*revertsRecord)(p.Reverts)
	}
	return json.Marshal(recs)
}

// MarshalJSON encodes p as its record.
func (p QueuePayload) MarshalJSON() ([]byte, error) {
	rec := queuePayloadRecord{AutoAdvance: p.AutoAdvance, Change: queueChangeRecord{Kind: p.Change.Kind, Index: p.Change.Index}}
	if q := p.Change.Item; q != nil {
		rec.Change.Item = &queuedGoalRecord{ID: q.ID, Objective: q.Objective, CompletionCriterion: q.CompletionCriterion, Check: q.Check, CheckSetBy: (*checkSetterRecord)(q.CheckSetBy), AddedAt: q.AddedAt}
	}
	return json.Marshal(rec)
}

// todoRecords is items as records; nil stays nil (stored as null).
func todoRecords(items []todo.Item) []todoRecord {
	if items == nil {
		return nil
	}
	recs := make([]todoRecord, len(items))
	for i, it := range items {
		recs[i] = todoRecord{Title: it.Title, Status: string(it.Status)}
	}
	return recs
}

func todoItems(recs []todoRecord) []todo.Item {
	if recs == nil {
		return nil
	}
	items := make([]todo.Item, len(recs))
	for i, r := range recs {
		items[i] = todo.Item{Title: r.Title, Status: todo.Status(r.Status)}
	}
	return items
}

func snapshotToRecord(s *goal.Snapshot) *goalSnapshotRecord {
	if s == nil {
		return nil
	}
	rec := &goalSnapshotRecord{
		GoalID: s.GoalID, Objective: s.Objective, CompletionCriterion: s.CompletionCriterion, Status: string(s.Status),
		TurnsUsed: s.TurnsUsed, TokensUsed: s.TokensUsed, WallClockMs: s.WallClockMs, Budget: budgetRecord(s.Budget),
		TerminalReason: s.TerminalReason, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, LastActor: string(s.LastActor), Stalled: &s.Stalled,
	}
	if t := s.TaskFile; t != nil {
		rec.TaskFile = &taskFileRecord{Path: t.Path, Exists: t.Exists, SHA256: t.SHA256, Size: t.Size, ModifiedAt: t.ModifiedAt, ChangedSinceLastTurn: t.ChangedSinceLastTurn}
		if c := t.Checkboxes; c != nil {
			rec.TaskFile.Checkboxes = &checkboxesRecord{Checked: c.Checked, Total: c.Total}
		}
	}
	if c := s.Check; c != nil {
		rec.Check = &snapshotCheckRecord{Command: c.Command, SetBy: (*checkSetterRecord)(c.SetBy), Running: c.Running, LastRun: (*checkRunRecord)(c.LastRun)}
	}
	return rec
}

func snapshotFromRecord(r *goalSnapshotRecord) *goal.Snapshot {
	if r == nil {
		return nil
	}
	s := &goal.Snapshot{
		GoalID: r.GoalID, Objective: r.Objective, CompletionCriterion: r.CompletionCriterion, Status: goal.Status(r.Status),
		TurnsUsed: r.TurnsUsed, TokensUsed: r.TokensUsed, WallClockMs: r.WallClockMs, Budget: goal.BudgetReport(r.Budget),
		TerminalReason: r.TerminalReason, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, LastActor: goal.Actor(r.LastActor), Stalled: r.Stalled != nil && *r.Stalled,
	}
	if t := r.TaskFile; t != nil {
		s.TaskFile = &goal.TaskFileInfo{Path: t.Path, Exists: t.Exists, SHA256: t.SHA256, Size: t.Size, ModifiedAt: t.ModifiedAt, ChangedSinceLastTurn: t.ChangedSinceLastTurn}
		if c := t.Checkboxes; c != nil {
			s.TaskFile.Checkboxes = &goal.Checkboxes{Checked: c.Checked, Total: c.Total}
		}
	}
	if c := r.Check; c != nil {
		s.Check = &goal.Check{Command: c.Command, SetBy: (*goal.CheckSetter)(c.SetBy), Running: c.Running, LastRun: (*goal.CheckRun)(c.LastRun)}
	}
	return s
}

// TodosBefore is the list before ev, a todo change, as its before records
// it; an error when ev has no before or it is not a todo list's.
func (ev Event) TodosBefore() ([]todo.Item, error) {
	var rec todosBeforeRecord
	if err := decodeHistoryRecord(ev, ev.Before, "the list before", &rec); err != nil {
		return nil, err
	}
	return todoItems(rec.Items), nil
}

// GoalBefore is the goal before ev, a goal change, as its before records
// it (nil: there was none); an error when ev has no before or it is not a
// goal's.
func (ev Event) GoalBefore() (*goal.Snapshot, error) {
	var rec goalBeforeRecord
	if err := decodeHistoryRecord(ev, ev.Before, "the goal before", &rec); err != nil {
		return nil, err
	}
	return snapshotFromRecord(rec.Goal), nil
}

// PayloadGoals are the goals of the changes of ev, a goal change, as its
// payload records them, oldest first (nil where a change has none); an
// error when ev's payload is not a goal change's.
func (ev Event) PayloadGoals() ([]*goal.Snapshot, error) {
	var recs []goalChangeRecord
	if err := decodeHistoryRecord(ev, ev.Payload, "the goals of", &recs); err != nil {
		return nil, err
	}
	goals := make([]*goal.Snapshot, len(recs))
	for i, r := range recs {
		goals[i] = snapshotFromRecord(r.Goal)
	}
	return goals, nil
}

func decodeHistoryRecord(ev Event, raw json.RawMessage, what string, rec any) error {
	if len(raw) == 0 {
		return fmt.Errorf("%s %s (seq %d) is not recorded", what, ev.Kind, ev.Seq)
	}
	if err := json.Unmarshal(raw, rec); err != nil {
		return fmt.Errorf("%s %s (seq %d) cannot be read: %w", what, ev.Kind, ev.Seq, err)
	}
	return nil
}
