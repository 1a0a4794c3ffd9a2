package goal

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentd/agentd/commands/protocol"

	"github.com/agentd/agentd/jsonin"
)

// Names of the four goal tools (docs/runtime.md §2.8).
const (
	CreateGoalTool    = "CreateGoal"
	GetGoalTool       = "GetGoal"
	SetGoalBudgetTool = "SetGoalBudget"
	UpdateGoalTool    = "UpdateGoal"
)

// ToolResult is a tool call's answer, as the wire carries it
// (protocol.ToolResult). A model-facing refusal is a ToolResult with
// IsError and ErrorCode, never a Go error.
type ToolResult = protocol.ToolResult

// Tool is what a model is told about a goal tool (agentd.tools), as the
// wire carries it (protocol.ToolInfo).
type Tool = protocol.ToolInfo

// Tools lists the goal tools in a fixed order: CreateGoal, GetGoal,
// SetGoalBudget, UpdateGoal. Each call returns fresh maps.
func Tools() []Tool {
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	return []Tool{
		{
			Name:        CreateGoalTool,
			Description: createGoalDescription,
			InputSchema: map[string]any{
				"type":                 "object",
				"additionalProperties": false,
				"required":             []string{"objective"},
				"properties": map[string]any{
					"objective":           str("What the goal must achieve, in a sentence or two (at most 4000 characters). Reference a file by its path for long text."),
					"completionCriterion": str("How to tell the goal is done: a checkable end state. Include it when the user gives one or it is obvious."),
					"replace":             map[string]any{"type": "boolean", "description": "true only when the user wants to abandon the current unfinished goal for this one; refused when that goal has a check or budget the user set."},
					"taskFile":            str("Optional path of a workspace file that holds the detailed task."),
				},
			},
		},
		{
			Name:        GetGoalTool,
			Description: getGoalDescription,
			InputSchema: map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{}},
			ReadOnly:    true,
		},
		{
			Name:        SetGoalBudgetTool,
			Description: setGoalBudgetDescription,
			InputSchema: map[string]any{
				"type":                 "object",
				"additionalProperties": false,
				"required":             []string{"value", "unit"},
				"properties": map[string]any{
					"value": map[string]any{"type": "number", "exclusiveMinimum": 0, "description": "The limit the user stated, in unit."},
					"unit":  map[string]any{"type": "string", "enum": append([]string(nil), BudgetUnits...)},
				},
			},
		},
		{
			Name:        UpdateGoalTool,
			Description: updateGoalDescription,
			InputSchema: map[string]any{
				"type":                 "object",
				"additionalProperties": false,
				"required":             []string{"status"},
				"properties": map[string]any{
					"status": map[string]any{"type": "string", "enum": modelStatusNames()},
					"wait":   waitSchema(),
				},
			},
		},
	}
}

// modelStatusNames are ModelStatuses as strings: the enum of UpdateGoal's
// status.
func modelStatusNames() []string {
	var names []string
	for _, st := range ModelStatuses() {
		names = append(names, string(st))
	}
	return names
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// IsTool reports whether name is one of the four goal tools.
func IsTool(name string) bool {
	_, ok := inputTypes[name]
	return ok
}

const createGoalDescription = `Create a goal: an objective you then pursue on your own over several turns. agentd counts the turns, output tokens and time the goal uses, reminds you of it at the start of each turn, and prompts you to continue after each turn until the goal is complete, blocked, paused or out of budget.

When to create one: only when the user explicitly asks for a goal or for autonomous, long-running work, or when a goal-intake prompt from the host asks you to. Never create one for a greeting, a question, or a vague request that has no checkable end state: answer those normally, or ask the user what "done" should look like. If the user insists after you have warned them, create it anyway.

- objective: what must be achieved, in a sentence or two (at most 4000 characters). If the task is long or detailed, write it to a file in the workspace and put that file's path in a short objective (or pass it as taskFile) instead of pasting the text.
- completionCriterion: how to tell that the goal is done. Include it whenever the user gives one or it is obvious from the request.
- replace: true only when the user wants to abandon the current unfinished goal for this new one. Without it, creation fails while a goal is active, paused or blocked. You cannot replace a goal that has a check (GetGoal shows it) or a budget the user set: only the user can replace or cancel such a goal, so ask them to.
- taskFile: optional path of the workspace file that holds the detailed task; agentd tells you when it changes.

Returns the new goal as JSON.`

const getGoalDescription = `Read the current goal: its objective, completion criterion, status, the turns, output tokens and time it has used, and its budgets with what remains. Returns {"goal": null} when there is no goal.`

const setGoalBudgetDescription = `Record a limit the user has set on the current goal: a number of turns, a number of output tokens, or a length of time.

Call it only when the user clearly states a limit (for example "spend at most 20 turns" or "stop after two hours"). Never invent a budget or choose one yourself.

Send one value and one unit: turns, tokens, milliseconds, seconds, minutes or hours. Convert a compound time to a single unit first ("1 hour 30 minutes" is 90 minutes). Turns and tokens are rounded to whole numbers, at least 1; a time must be between 1 second and 24 hours. A new limit replaces the earlier one of the same kind and keeps the others. A limit the user set directly in agentd (in their terminal or panel) you may lower but never raise: only the user can give the goal more, so if they want more, ask them to raise it themselves. There is no way to remove a limit with this tool. It can be set on a paused or blocked goal too; it takes effect while the goal is active. If the goal has already used up the new limit, it is blocked at once: then stop working and write a short status message for the user.`

const updateGoalDescription = `Change the status of the current goal. Most goal turns end without calling this tool: just do the next useful piece of work.

- active: resume a paused or blocked goal. Only when the user explicitly asks you to resume or continue it.
- complete: the objective is achieved. First do a completion audit: check every explicit requirement of the objective and of the completion criterion against real evidence (files, command output, test results). A plan, a summary, a first pass or a partial result is not completion, and a budget that is nearly spent is no reason to call the goal complete. When the goal has a check (a command the user set; GetGoal shows it), agentd runs it first and completes the goal only if it passes; otherwise the call fails with the check's output, and you keep working. When the goal requires its todo items (GetGoal shows requireTodos, the default), complete is refused while any item of the todo list is not done, and until the goal is complete an item leaves the todo list only once it is done: finish each item and mark it done; only the user can remove an unfinished one.
- waiting: the next step cannot start until something outside you happens: a file or folder of the workspace changes (a build's output, a file a teammate writes), a time arrives, or the goal's check (set by the user) passes. Give wait: {until: "2026-03-01T14:00:00Z" or "14:00", or for: "30m"; paths: ["build/out.log"]; checkPasses: true; note: what you wait for}, at least one condition. agentd then stops you, spends nothing while the goal waits, and continues the goal when a condition holds or the user resumes it; the continuation says what woke it. The wait counts against the goal's time budget: a goal out of time is blocked. Never wait to avoid work or to pass time; never wait for something that only you can do.
- blocked: you have hit a genuine impasse that you cannot get past without outside help: an external condition, input only the user can give, missing credentials or permissions, or a failure that keeps coming back. Never on the first blocker: the same blocker must persist for 3 consecutive goal turns. Size, difficulty, slowness, uncertainty or missing validation are never reasons. An objective that is impossible, unsafe or contradictory is blocked at once.

You cannot pause or cancel a goal; only the user can. After complete or blocked, write a short final message for the user and call no more goal tools.`

// Input is the decoded input of one goal tool: CreateGoalInput,
// GetGoalInput, SetGoalBudgetInput or UpdateGoalInput, the only
// implementations. Each is declared once, as a struct whose JSON fields are
// the tool's JSON Schema properties (Tools; a test keeps the two equal), and
// decoded once per call by NewCall, strictly, with jsonin.Decode: a JSON
// object (empty input, null and [] mean {}), no unknown or duplicate keys,
// each field of its type, the fields tagged required present; null counts
// as an absent field.
type Input interface {
	// Tool is the name of the tool the input is for.
	Tool() string
	// Describe says what a call with this input would do (docs/runtime.md
	// §2.8), for the host UI: "Creating a goal", "Setting goal budget: 5
	// turns"; the zero input gets the tool's plain description.
	Describe() CallDescription
}

// CreateGoalInput is CreateGoal's input (docs/runtime.md §2.8). TaskFile is the
// path as the model gave it; the caller resolves it.
type CreateGoalInput struct {
	Objective           string `json:"objective" jsonin:"required"`
	CompletionCriterion string `json:"completionCriterion,omitempty"`
	Replace             bool   `json:"replace,omitempty"`
	TaskFile            string `json:"taskFile,omitempty"`
}

// GetGoalInput is GetGoal's input: no fields.
type GetGoalInput struct{}

// SetGoalBudgetInput is SetGoalBudget's input.
type SetGoalBudgetInput struct {
	Value float64 `json:"value" jsonin:"required"`
	Unit  string  `json:"unit" jsonin:"required"`
}

// UpdateGoalInput is UpdateGoal's input. Status is checked when the call
// runs, so that a wrong value gets an answer that lists the valid ones.
type UpdateGoalInput struct {
	Status string `json:"status" jsonin:"required"`
	// Wait is what ends the wait, with status waiting only
	// (docs/runtime.md §2.13).
	Wait *WaitConditions `json:"wait,omitempty"`
}

// Tool is CreateGoalTool.
func (CreateGoalInput) Tool() string { return CreateGoalTool }

// Tool is GetGoalTool.
func (GetGoalInput) Tool() string { return GetGoalTool }

// Tool is SetGoalBudgetTool.
func (SetGoalBudgetInput) Tool() string { return SetGoalBudgetTool }

// Tool is UpdateGoalTool.
func (UpdateGoalInput) Tool() string { return UpdateGoalTool }

// Describe is "Creating a goal", with a goal-start display when the
// objective is valid.
func (in CreateGoalInput) Describe() CallDescription {
	d := CallDescription{Description: "Creating a goal"}
	if obj, crit, err := normalizeObjective(in.Objective, in.CompletionCriterion); err == nil {
		d.Display = &Display{Kind: "goal_start", Objective: obj, CompletionCriterion: crit}
	}
	return d
}

// Describe is "Reading the current goal".
func (GetGoalInput) Describe() CallDescription {
	return CallDescription{Description: "Reading the current goal"}
}

// Describe is "Setting goal budget", followed by the budget when it is
// valid: "Setting goal budget: 90 minutes".
func (in SetGoalBudgetInput) Describe() CallDescription {
	d := CallDescription{Description: "Setting goal budget"}
	if kind, limit, err := NormalizeBudget(in.Value, in.Unit); err == nil {
		d.Description += ": " + FormatBudget(kind, limit)
	}
	return d
}

// Describe names the status a model may set ("Marking the goal
// complete"), else "Updating the goal".
func (in UpdateGoalInput) Describe() CallDescription {
	d := CallDescription{Description: "Updating the goal"}
	switch Status(in.Status) {
	case Active:
		d.Description = "Resuming the goal"
	case Complete:
		d.Description = "Marking the goal complete"
	case Blocked:
		d.Description = "Marking the goal blocked"
	case Waiting:
		d.Description = "Putting the goal in waiting"
	}
	return d
}

// inputType is what the goal package knows of one tool's input type.
type inputType struct {
	zero   Input // the zero input, for the tool's plain description
	decode func(raw json.RawMessage) (Input, *jsonin.Error)
}

// inputTypes maps each goal tool's name to its input type.
var inputTypes = map[string]inputType{
	CreateGoalTool:    typed[CreateGoalInput](),
	GetGoalTool:       typed[GetGoalInput](),
	SetGoalBudgetTool: typed[SetGoalBudgetInput](),
	UpdateGoalTool:    typed[UpdateGoalInput](),
}

func typed[T Input]() inputType {
	var zero T
	return inputType{zero: zero, decode: func(raw json.RawMessage) (Input, *jsonin.Error) {
		var in T
		if err := jsonin.Decode(raw, &in, in.Tool()+" input"); err != nil {
			var e *jsonin.Error
			if !errors.As(err, &e) {
				e = &jsonin.Error{Problem: jsonin.Malformed}
			}
			return nil, e
		}
		return in, nil
	}}
}

// inputError words a decoding error for the model, naming the field:
// "objective is required", "replace must be true or false", "unknown
// field \"x\"; known fields: ...". (NewCall refuses a duplicate key with
// jsonin's message, which names the place.)
func inputError(e *jsonin.Error) *Error {
	switch e.Problem {
	case jsonin.Missing:
		return errorf(CodeArgsInvalid, e.Field+" is required")
	case jsonin.WrongType:
		return errorf(CodeArgsInvalid, e.Field+" must be "+e.Want)
	case jsonin.Unknown:
		known := "it takes no fields"
		if len(e.Known) > 0 {
			known = "known fields: " + strings.Join(e.Known, ", ")
		}
		return errorf(CodeArgsInvalid, fmt.Sprintf("unknown field %q; %s", e.Field, known))
	}
	return errorf(CodeArgsInvalid, "the input must be a JSON object")
}

// CallDescription is a call's description for the host UI, and for
// CreateGoal a goal-start display (agentd.describeTool).
type CallDescription struct {
	Description string   `json:"description"`
	Display     *Display `json:"display,omitempty"`
}

// Display is what a host may show to approve a goal start.
type Display struct {
	Kind                string `json:"kind"` // "goal_start"
	Objective           string `json:"objective"`
	CompletionCriterion string `json:"completionCriterion,omitempty"`
}

// Call is a goal tool call decoded once (NewCall), before any goal state
// is read: what it says it does, and either its input or the refusal the
// model gets.
type Call struct {
	// Input is the decoded input; nil when the call is refused before it
	// reaches the goal (Refused).
	Input Input
	// Description says what the call would do, for the host UI
	// (agentd.describeTool): the tool's plain description when the input
	// does not decode.
	Description CallDescription
	refusal     ToolResult
}

// NewCall decodes raw, the input of the goal tool named tool called by
// agent ("" is MainAgent), and makes the checks that need no state, in this
// order: a key given twice (args.invalid, "Nothing was changed: ...; send
// each field once."), an agent other than the main one
// (goal.unsupported_agent), an input that does not decode (args.invalid
// naming the field). Such a call is Refused. Error: args.invalid for a name
// that is not a goal tool.
func NewCall(tool string, raw json.RawMessage, agent string) (Call, error) {
	t, ok := inputTypes[tool]
	if !ok {
		return Call{}, errorf(CodeArgsInvalid, fmt.Sprintf("%q is not a goal tool", tool))
	}
	in, bad := t.decode(raw)
	c := Call{Input: in, Description: t.zero.Describe()}
	if bad == nil {
		c.Description = in.Describe()
	}
	res := ToolResult{Description: c.Description.Description}
	switch {
	case bad != nil && bad.Problem == jsonin.Duplicate:
		c.refusal = failed(res, CodeArgsInvalid, fmt.Sprintf("Nothing was changed: %v; send each field once.", bad))
	case agent != "" && agent != MainAgent:
		c.refusal = failed(res, CodeUnsupportedAgent, "Goal tools are only for the main agent; a subagent cannot read or change the goal. Finish your task and report back instead.")
	case bad != nil:
		c.refusal = failed(res, CodeArgsInvalid, sentence(inputError(bad).Msg))
	default:
		return c, nil
	}
	c.Input = nil
	return c, nil
}

// Refused is the answer to a call refused before it reaches the goal, and
// true; false when the call may run.
func (c Call) Refused() (ToolResult, bool) { return c.refusal, c.Input == nil }

// ToolCall is a call to run against the goal state.
type ToolCall struct {
	Call
	TurnID string // the turn the call belongs to; "" outside a turn
	// TaskFile is CreateGoal's task file, resolved by the caller from the
	// input's taskFile or the objective (docs/runtime.md §4); nil for none.
	TaskFile *TaskFileInfo
	// Wait is UpdateGoal waiting's wait, checked (ParseWait) and resolved
	// by the caller; nil when the input has none (docs/runtime.md §2.13).
	Wait *WaitParams
	// Todos is the session's todo list as the call's transaction reads it,
	// which UpdateGoal complete checks a goal that requires its items
	// against (docs/runtime.md §2.12).
	Todos []protocol.TodoItem
}

// CallTool runs a goal tool for a model (docs/runtime.md §2.8). Refusals are
// results with IsError and ErrorCode; a Refused call answers its refusal,
// and a call on a turn that has ended (CheckTurn) TurnEndedRefusal.
// A CreateGoal, SetGoalBudget or UpdateGoal call in a turn whose goal is no
// longer the current goal is ignored: ErrorCode goal.stale_call, IsError
// false, nothing changes.
func (s *State) CallTool(c ToolCall, now Instant) (ToolResult, []Change) {
	if res, refused := c.Refused(); refused {
		return res, nil
	}
	if s.CheckTurn(c.TurnID) != nil {
		return TurnEndedRefusal(c.Description.Description), nil
	}
	res := ToolResult{Description: c.Description.Description}
	if _, ok := c.Input.(GetGoalInput); ok {
		res.Output = goalJSON(s.Snapshot(now))
		return res, nil
	}
	if msg, stale := s.stale(c.TurnID); stale {
		prefix := map[string]string{CreateGoalTool: "Not created", SetGoalBudgetTool: "Budget not set", UpdateGoalTool: "Goal not updated"}[c.Input.Tool()]
		res.Output = prefix + ": " + msg + " Nothing was changed. Call GetGoal to see where things stand before using another goal tool."
		res.ErrorCode = CodeStaleCall
		return res, nil
	}
	switch in := c.Input.(type) {
	case CreateGoalInput:
		return s.createTool(res, in, c, now)
	case SetGoalBudgetInput:
		return s.setBudgetTool(res, in, now)
	case UpdateGoalInput:
		return s.updateTool(res, in, c, now, false)
	}
	return res, nil
}

// failed is r as a refusal with code and output.
func failed(r ToolResult, code, output string) ToolResult {
	r.IsError, r.ErrorCode, r.Output = true, code, output
	return r
}

// stale applies the stale-call guard (docs/runtime.md §2.8).
func (s *State) stale(turnID string) (string, bool) {
	if turnID == "" {
		return "", false
	}
	t := s.turn(turnID)
	if t == nil || t.GoalID == "" {
		return "", false
	}
	switch {
	case s.Goal == nil:
		return "there is no current goal any more; the goal this turn was working for has been cleared.", true
	case s.Goal.ID != t.GoalID:
		return "the current goal changed; the goal this turn was working for has been replaced by another one.", true
	}
	return "", false
}

// goalJSON is the {"goal": snapshot} output, pretty with 2 spaces, as the
// model sees it (no goalId).
func goalJSON(snap *Snapshot) string {
	var out struct {
		Goal *Snapshot `json:"goal"`
	}
	if snap != nil {
		v := snap.ModelView()
		out.Goal = &v
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	return string(b)
}

func (s *State) createTool(res ToolResult, in CreateGoalInput, c ToolCall, now Instant) (ToolResult, []Change) {
	p := CreateParams{Objective: in.Objective, CompletionCriterion: in.CompletionCriterion, Replace: in.Replace, TaskFile: c.TaskFile}
	changes, err := s.create(p, Model, c.TurnID, now)
	if err != nil {
		code := protocol.ErrorCode(err)
		if (code == CodeAlreadyExists || code == CodePersonSet) && s.Goal.personSet() != "" {
			return failed(res, code, s.Goal.replaceRefusal(in.Replace)), nil
		}
		if code == CodeAlreadyExists {
			return failed(res, code, fmt.Sprintf("Not created: there is already a goal, and it is %s: %q. Keep working with it. Only if the user wants to abandon it for the new one, call CreateGoal again with replace: true.", s.Goal.Status, oneLine(s.Goal.Objective, 200))), nil
		}
		return failed(res, code, sentence(err.Error())), nil
	}
	res.Output = goalJSON(s.Snapshot(now))
	return res, changes
}

func (s *State) setBudgetTool(res ToolResult, in SetGoalBudgetInput, now Instant) (ToolResult, []Change) {
	kind, limit, err := NormalizeBudget(in.Value, in.Unit)
	if err != nil {
		return failed(res, CodeBudgetInvalid, sentence(err.Error())), nil
	}
	g := s.Goal
	if g == nil {
		return failed(res, CodeNotFound, "Budget not set: there is no current goal."), nil
	}
	if !slices.Contains(BudgetFrom(), g.Status) {
		return failed(res, CodeStatusInvalid, fmt.Sprintf("Budget not set: the goal is already %s.", g.Status)), nil
	}
	if msg := g.limitRefusal(kind, limit); msg != "" {
		return failed(res, CodePersonSet, msg), nil
	}
	formatted := FormatBudget(kind, limit)
	limits := g.Limits.clone()
	limits.set(kind, &limit)
	wasActive := g.Status == Active
	changes := s.applyLimits(limits, Model, "goal budget set to "+formatted, now)
	if wasActive && g.Status == Blocked {
		res.Output = fmt.Sprintf("Budget recorded: %s. The goal has already used it up, so it is now blocked. Stop here: call no more tools and write a short status message for the user saying what was done and what is left.", formatted)
		res.StopTurn, res.StopBatch = true, true
		return res, changes
	}
	res.Output = fmt.Sprintf("Budget recorded: %s (%s so far).", formatted, usage(kind, g, now))
	if !wasActive {
		res.Output += fmt.Sprintf(" The goal is %s; the budget applies once it is active again.", g.Status)
	}
	return res, changes
}

func usage(kind BudgetKind, g *Goal, now Instant) string {
	switch kind {
	case TurnBudget:
		return Plural(g.TurnsUsed, "turn") + " used"
	case TokenBudget:
		return PluralShown(FormatTokens(g.TokensUsed), g.TokensUsed, "token") + " used"
	}
	return FormatElapsed(g.wallClockMs(now)) + " used"
}

// updateTool runs UpdateGoal. checked: the goal's check has just passed
// (CompleteAfterCheck); a complete of a goal with a check is refused
// otherwise, so that no path completes it without its check.
func (s *State) updateTool(res ToolResult, in UpdateGoalInput, c ToolCall, now Instant, checked bool) (ToolResult, []Change) {
	to := Status(in.Status)
	if !slices.Contains(ModelStatuses(), to) {
		return failed(res, CodeStatusInvalid, fmt.Sprintf("Status %q is not valid; use one of %s. Only the user can pause or cancel a goal.", in.Status, orList(modelStatusNames()))), nil
	}
	if (in.Wait != nil) != (to == Waiting) {
		return failed(res, CodeArgsInvalid, "Goal not updated: status waiting needs a wait object that says what ends the wait (until, for, paths or checkPasses), and only status waiting takes one."), nil
	}
	g := s.Goal
	if g == nil {
		return failed(res, CodeNotFound, "Goal not updated: there is no current goal."), nil
	}
	if to == Waiting {
		return s.waitTool(res, c, now)
	}
	if to == Active {
		changes, err := s.resume(Model, c.TurnID, now)
		switch {
		case err != nil:
			return failed(res, protocol.ErrorCode(err), "Goal not resumed: "+err.Error()+"."), nil
		case changes == nil:
			res.Output = "The goal is already active; nothing changed."
		default:
			res.Output = "Goal resumed: it is active again. Continue working toward the objective."
		}
		return res, changes
	}
	const guidance = "Write a short final message for the user and call no more goal tools."
	res.StopTurn = true
	if g.Status != Active {
		stats := FormatStats(g.TurnsUsed, g.TokensUsed, g.wallClockMs(now))
		if g.Status == to {
			res.Output = fmt.Sprintf("The goal is already %s. %s %s", to, stats, guidance)
			return res, nil
		}
		return failed(res, CodeStatusInvalid, fmt.Sprintf("Goal not updated: it is %s, and only an active goal can be marked %s. %s", g.Status, to, guidance)), nil
	}
	if msg := s.openRefusal(c.Todos); to == Complete && msg != "" {
		res.StopTurn = false
		return failed(res, CodeTodosOpen, msg), nil
	}
	if to == Complete && g.Check != nil && !checked {
		return failed(res, CodeCheckFailed, "Goal not complete: it has a check, which agentd runs when UpdateGoal complete is called through agentd.callTool. "+guidance), nil
	}
	reason := reasonComplete
	if to == Blocked {
		reason = reasonModelBlock
	}
	ch := g.setStatus(to, Model, reason, now)
	res.StopBatch = true
	res.Output = fmt.Sprintf("Goal marked %s. %s %s", to, FormatStats(g.TurnsUsed, g.TokensUsed, g.WallClockMs), guidance)
	changes := []Change{ch}
	if adv := s.advance(now); adv != nil {
		changes = append(changes, adv...)
		res.Output += fmt.Sprintf(" The next goal of the queue is now active and starts with the next turn: %q.", oneLine(s.Goal.Objective, 200))
	}
	return res, changes
}
