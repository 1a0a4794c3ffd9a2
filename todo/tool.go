package todo

import (
	"encoding/json"

	"github.com/agentd/agentd/jsonin"
)

// ToolName is the model-facing name of the todo tool (docs/runtime.md §1).
const ToolName = "TodoList"

// ToolDescription is what the model reads about the TodoList tool.
const ToolDescription = `Keep a todo list for the current task, shared with the user's editor.

Call with no arguments to read the list. Call with "todos" to replace the whole list: send every item each time, in order, each with a short "title" and a "status" of "pending", "in_progress" or "done" (no other words). An empty array clears the list.

Use it for work with several steps: write the plan as pending items, keep exactly one item in_progress while you work on it, and mark each item done as soon as it is finished rather than all at the end. Skip it for a single trivial step. At most 200 items; titles at most 500 characters.`

// InputSchema is the JSON Schema of the tool input; strict at both levels.
var InputSchema = map[string]any{
	"type":                 "object",
	"additionalProperties": false,
	"properties": map[string]any{
		"todos": map[string]any{
			"type":        "array",
			"description": "The complete new list, in order. Omit to read the list; [] clears it.",
			"maxItems":    MaxItems,
			"items": map[string]any{
				"type":                 "object",
				"additionalProperties": false,
				"required":             []string{"title", "status"},
				"properties": map[string]any{
					"title":  map[string]any{"type": "string", "minLength": 1, "maxLength": MaxTitleChars},
					"status": map[string]any{"type": "string", "enum": []string{string(Pending), string(InProgress), string(Done)}},
				},
			},
		},
	},
}

// Input is the decoded tool input: its JSON fields are InputSchema's
// properties (a test keeps the two equal). Todos is nil when the key was
// omitted (a read) and non-nil, possibly empty, for a write. An item's
// title and status are not required by the decoder: Normalize refuses an
// empty one with words that say what to do.
type Input struct {
	Todos *[]Item `json:"todos"`
}

// DecodeInput decodes a TodoList input strictly, with jsonin.Decode:
// absent, null and [] mean {} (a read); unknown or duplicate keys, wrong
// types, null for the list or an item are refused with jsonin's refusal,
// which names the place ("TodoList input.todos[1] must be an object, got
// null"); the tool answers them with code todo.invalid.
func DecodeInput(raw json.RawMessage) (Input, error) {
	var in Input
	err := jsonin.Decode(raw, &in, "TodoList input")
	return in, err
}

// writeReminder follows every non-empty update (docs/runtime.md §1).
const writeReminder = "Keep using this list to track progress: mark each item done as soon as it is finished, not in a batch at the end, and keep exactly one item in_progress while work is under way."

// Describe is the host UI's one-line description of a call (docs/runtime.md §1).
func Describe(in Input) string {
	switch {
	case in.Todos == nil:
		return "Reading todo list"
	case len(*in.Todos) == 0:
		return "Clearing todo list"
	default:
		return "Updating todo list"
	}
}

// Plan is what a TodoList call will do: Write says whether the list is
// replaced by Items (already normalised), Output builds the model-facing text
// from the list as stored.
type Plan struct {
	Write bool
	Items []Item
}

// PlanCall validates in and says what the call will do. Errors are
// Normalize's todo.invalid refusals; nothing is to be stored then.
func PlanCall(in Input) (Plan, error) {
	if in.Todos == nil {
		return Plan{}, nil
	}
	items, err := Normalize(*in.Todos)
	if err != nil {
		return Plan{}, err
	}
	return Plan{Write: true, Items: items}, nil
}

// Output is the tool's text for a call planned as p, given the list as
// stored after it (docs/runtime.md §1 table).
func (p Plan) Output(stored []Item) string {
	switch {
	case !p.Write:
		return Render(stored)
	case len(stored) == 0:
		return "Todo list cleared."
	default:
		return "Todo list updated.\n" + Render(stored) + "\n\n" + writeReminder
	}
}

// Usage counts what the stale todo reminder needs (docs/runtime.md §1.1). It is
// stored with the session so that the counts survive a restart. The zero
// Usage is a fresh session: list never used, no step ended, no reminder
// delivered yet.
//
// The caller reports the main agent's steps and TodoList calls only (the
// counts describe what the main agent's context has seen):
//   - NoteRead after a TodoList read (no "todos" key),
//   - CountWrite after a successful TodoList write ("todos" array, clearing
//     included; a refused call is not a write),
//   - BeginStep at agentd.step.begin, then reminder.TodoReminder, which
//     calls NoteReminderDelivered when it returns the reminder,
//   - EndStep at agentd.step.end.
//
// A write changes Writes only, which is stored with the list, so that it
// never changes the counters the steps change (docs/team.md, "A session in
// parts"): BeginStep and EndStep first take the writes made since the last
// of them (Catch) as NoteWrite of the newest, in the step when it came
// after the begin of the step still open.
//
// An edit from an editor panel (actor user) is not a TodoList call and is
// not counted.
type Usage struct {
	Used               bool   `json:"used"`               // read or written at least once in the session
	StepsSinceWrite    int    `json:"stepsSinceWrite"`    // steps ended since the newest step that wrote the list; before any write, since the session began
	StepsSinceReminder int    `json:"stepsSinceReminder"` // steps ended since the reminder was last delivered; meaningful only when Reminded
	Reminded           bool   `json:"reminded"`           // the reminder was delivered at least once; until then StepsSinceReminder counts as infinitely many
	WroteThisStep      bool   `json:"wroteThisStep"`      // the current (not yet ended) step wrote the list
	Writes             uint64 `json:"writes"`             // TodoList writes counted (CountWrite)
	WritesSeen         uint64 `json:"writesSeen"`         // Writes when Catch last took them
	StepOpen           bool   `json:"stepOpen"`           // a step began (BeginStep) and has not ended
	WritesAtStep       uint64 `json:"writesAtStep"`       // Writes when that step began
}

// NoteRead records a TodoList read. A read marks the list used and resets
// nothing.
func (u *Usage) NoteRead() { u.Used = true }

// NoteWrite records a TodoList write. StepsSinceWrite is 0 from now on.
// A write in a step (inStep: a step of the main agent is open) belongs to
// that step: StepsSinceWrite stays 0 when it ends. A write outside any step
// (between two steps, or with no turn at all, e.g. from a shell) counts as
// written before the next step: that step's end counts 1, so once
// todoReminderSteps steps have ended after the write the next step begins
// with the reminder (docs/runtime.md §1.1.1).
func (u *Usage) NoteWrite(inStep bool) {
	u.Used = true
	u.WroteThisStep = inStep
	u.StepsSinceWrite = 0
}

// CountWrite records a TodoList write, for Catch to take: it changes
// Writes only.
func (u *Usage) CountWrite() { u.Writes++ }

// Catch takes the writes counted since it last did, if any, as NoteWrite
// of the newest: in the step when it came after the begin of the step
// still open (a step of the main agent was open when it was made).
func (u *Usage) Catch() {
	if u.Writes == u.WritesSeen {
		return
	}
	u.NoteWrite(u.StepOpen && u.Writes != u.WritesAtStep)
	u.WritesSeen = u.Writes
}

// BeginStep records the begin of a step (agentd.step.begin), after Catch.
func (u *Usage) BeginStep() {
	u.Catch()
	u.StepOpen, u.WritesAtStep = true, u.Writes
}

// EndStep records the end of a step (agentd.step.end), after Catch: the
// step that wrote the list leaves StepsSinceWrite at 0, any other step
// adds one; every step adds one to StepsSinceReminder.
func (u *Usage) EndStep() {
	u.Catch()
	u.StepOpen = false
	if u.WroteThisStep {
		u.StepsSinceWrite = 0
		u.WroteThisStep = false
	} else {
		u.StepsSinceWrite++
	}
	u.StepsSinceReminder++
}

// NoteReminderDelivered records that the stale todo reminder was delivered
// at the beginning of the current step: StepsSinceReminder restarts at 0.
func (u *Usage) NoteReminderDelivered() {
	u.Reminded = true
	u.StepsSinceReminder = 0
}
