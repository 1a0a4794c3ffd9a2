package goal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Names of the four goal tools (RUNTIME.md §2.8).
const (
	CreateGoalTool    = "CreateGoal"
	GetGoalTool       = "GetGoal"
	SetGoalBudgetTool = "SetGoalBudget"
	UpdateGoalTool    = "UpdateGoal"
)

// ToolResult is a tool call's answer (PROTOCOL.md §3). A model-facing
// refusal is a ToolResult with IsError and ErrorCode, never a Go error.
type ToolResult struct {
	Output      string `json:"output"`
	IsError     bool   `json:"isError"`
	ErrorCode   string `json:"errorCode,omitempty"`
	Description string `json:"description"`
	StopTurn    bool   `json:"stopTurn"`
	StopBatch   bool   `json:"stopBatch"`
}

// Tool is what a model is told about a goal tool (agentd.tools).
type Tool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"inputSchema"`
	// ReadOnly: the tool changes nothing (GetGoal), so a host may run it
	// without asking the user.
	ReadOnly bool `json:"readOnly,omitempty"`
}

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
					"replace":             map[string]any{"type": "boolean", "description": "true only when the user wants to abandon the current unfinished goal for this one."},
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
					"status": map[string]any{"type": "string", "enum": []string{string(Active), string(Complete), string(Blocked)}},
				},
			},
		},
	}
}

// IsTool reports whether name is one of the four goal tools.
func IsTool(name string) bool {
	switch name {
	case CreateGoalTool, GetGoalTool, SetGoalBudgetTool, UpdateGoalTool:
		return true
	}
	return false
}

const createGoalDescription = `Create a goal: an objective you then pursue on your own over several turns. agentd counts the turns, output tokens and time the goal uses, reminds you of it at the start of each turn, and prompts you to continue after each turn until the goal is complete, blocked, paused or out of budget.

When to create one: only when the user explicitly asks for a goal or for autonomous, long-running work, or when a goal-intake prompt from the host asks you to. Never create one for a greeting, a question, or a vague request that has no checkable end state: answer those normally, or ask the user what "done" should look like. If the user insists after you have warned them, create it anyway.

- objective: what must be achieved, in a sentence or two (at most 4000 characters). If the task is long or detailed, write it to a file in the workspace and put that file's path in a short objective (or pass it as taskFile) instead of pasting the text.
- completionCriterion: how to tell that the goal is done. Include it whenever the user gives one or it is obvious from the request.
- replace: true only when the user wants to abandon the current unfinished goal for this new one. Without it, creation fails while a goal is active, paused or blocked.
- taskFile: optional path of the workspace file that holds the detailed task; agentd tells you when it changes.

Returns the new goal as JSON.`

const getGoalDescription = `Read the current goal: its objective, completion criterion, status, the turns, output tokens and time it has used, and its budgets with what remains. Returns {"goal": null} when there is no goal.`

const setGoalBudgetDescription = `Record a limit the user has set on the current goal: a number of turns, a number of output tokens, or a length of time.

Call it only when the user clearly states a limit (for example "spend at most 20 turns" or "stop after two hours"). Never invent a budget or choose one yourself.

Send one value and one unit: turns, tokens, milliseconds, seconds, minutes or hours. Convert a compound time to a single unit first ("1 hour 30 minutes" is 90 minutes). Turns and tokens are rounded to whole numbers, at least 1; a time must be between 1 second and 24 hours. A new limit replaces the earlier one of the same kind and keeps the others. It can be set on a paused or blocked goal too; it takes effect while the goal is active. If the goal has already used up the new limit, it is blocked at once: then stop working and write a short status message for the user.`

const updateGoalDescription = `Change the status of the current goal. Most goal turns end without calling this tool: just do the next useful piece of work.

- active: resume a paused or blocked goal. Only when the user explicitly asks you to resume or continue it.
- complete: the objective is achieved. First do a completion audit: check every explicit requirement of the objective and of the completion criterion against real evidence (files, command output, test results). A plan, a summary, a first pass or a partial result is not completion, and a budget that is nearly spent is no reason to call the goal complete.
- blocked: you have hit a genuine impasse that you cannot get past without outside help: an external condition, input only the user can give, missing credentials or permissions, or a failure that keeps coming back. Never on the first blocker: the same blocker must persist for 3 consecutive goal turns. Size, difficulty, slowness, uncertainty or missing validation are never reasons. An objective that is impossible, unsafe or contradictory is blocked at once.

You cannot pause or cancel a goal; only the user can. After complete or blocked, write a short final message for the user and call no more goal tools.`

// CreateGoalInput is CreateGoal's input (RUNTIME.md §2.8). TaskFile is the
// path as the model gave it; the caller resolves it.
type CreateGoalInput struct {
	Objective           string `json:"objective"`
	CompletionCriterion string `json:"completionCriterion,omitempty"`
	Replace             bool   `json:"replace,omitempty"`
	TaskFile            string `json:"taskFile,omitempty"`
}

// GetGoalInput is GetGoal's input: no fields.
type GetGoalInput struct{}

// SetGoalBudgetInput is SetGoalBudget's input.
type SetGoalBudgetInput struct {
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

// UpdateGoalInput is UpdateGoal's input. Status is checked when the call
// runs, so that a wrong value gets an answer that lists the valid ones.
type UpdateGoalInput struct {
	Status string `json:"status"`
}

// DecodeInput decodes a goal tool's input strictly: a JSON object (empty
// input or null mean {}), no unknown keys, each field of its type; null
// counts as an absent optional field. It returns CreateGoalInput,
// GetGoalInput, SetGoalBudgetInput or UpdateGoalInput. Errors are *Error
// with code args.invalid and a message naming the field.
func DecodeInput(tool string, raw json.RawMessage) (any, error) {
	switch tool {
	case CreateGoalTool:
		m, err := fields(raw, "objective", "completionCriterion", "replace", "taskFile")
		if err != nil {
			return nil, err
		}
		var in CreateGoalInput
		if err := m.str("objective", &in.Objective, true); err != nil {
			return nil, err
		}
		if err := m.str("completionCriterion", &in.CompletionCriterion, false); err != nil {
			return nil, err
		}
		if err := m.boolean("replace", &in.Replace); err != nil {
			return nil, err
		}
		if err := m.str("taskFile", &in.TaskFile, false); err != nil {
			return nil, err
		}
		return in, nil
	case GetGoalTool:
		if _, err := fields(raw); err != nil {
			return nil, err
		}
		return GetGoalInput{}, nil
	case SetGoalBudgetTool:
		m, err := fields(raw, "value", "unit")
		if err != nil {
			return nil, err
		}
		var in SetGoalBudgetInput
		if err := m.number("value", &in.Value); err != nil {
			return nil, err
		}
		if err := m.str("unit", &in.Unit, true); err != nil {
			return nil, err
		}
		return in, nil
	case UpdateGoalTool:
		m, err := fields(raw, "status")
		if err != nil {
			return nil, err
		}
		var in UpdateGoalInput
		if err := m.str("status", &in.Status, true); err != nil {
			return nil, err
		}
		return in, nil
	}
	return nil, errorf(CodeArgsInvalid, fmt.Sprintf("%q is not a goal tool", tool))
}

type fieldMap map[string]json.RawMessage

// fields parses raw as an object whose keys are all in allowed; null values
// are dropped.
func fields(raw json.RawMessage, allowed ...string) (fieldMap, error) {
	raw = bytes.TrimSpace(raw)
	m := fieldMap{}
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return m, nil
	}
	if raw[0] != '{' || json.Unmarshal(raw, (*map[string]json.RawMessage)(&m)) != nil {
		return nil, errorf(CodeArgsInvalid, "the input must be a JSON object")
	}
	var unknown []string
	for k, v := range m {
		if !contains(allowed, k) {
			unknown = append(unknown, k)
		}
		if bytes.Equal(v, []byte("null")) {
			delete(m, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		known := "it takes no fields"
		if len(allowed) > 0 {
			known = "known fields: " + strings.Join(allowed, ", ")
		}
		return nil, errorf(CodeArgsInvalid, fmt.Sprintf("unknown field %q; %s", unknown[0], known))
	}
	return m, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func (m fieldMap) str(name string, dst *string, required bool) error {
	v, ok := m[name]
	if !ok {
		if required {
			return errorf(CodeArgsInvalid, name+" is required")
		}
		return nil
	}
	if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, dst) != nil {
		return errorf(CodeArgsInvalid, name+" must be a string")
	}
	return nil
}

func (m fieldMap) boolean(name string, dst *bool) error {
	v, ok := m[name]
	if !ok {
		return nil
	}
	if json.Unmarshal(v, dst) != nil {
		return errorf(CodeArgsInvalid, name+" must be true or false")
	}
	return nil
}

func (m fieldMap) number(name string, dst *float64) error {
	v, ok := m[name]
	if !ok {
		return errorf(CodeArgsInvalid, name+" is required")
	}
	if json.Unmarshal(v, dst) != nil {
		return errorf(CodeArgsInvalid, name+" must be a number")
	}
	return nil
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

// Describe says what a call would do without running it (RUNTIME.md §2.8):
// "Creating a goal", "Reading the current goal", "Setting goal budget: 5
// turns", "Marking the goal complete"... An input that does not decode gets
// the tool's plain description and no display. Refusal: args.invalid for a
// name that is not a goal tool.
func Describe(tool string, raw json.RawMessage) (CallDescription, error) {
	in, err := DecodeInput(tool, raw)
	switch tool {
	case CreateGoalTool:
		d := CallDescription{Description: "Creating a goal"}
		if c, ok := in.(CreateGoalInput); ok && err == nil {
			if obj, crit, err := normalizeObjective(c.Objective, c.CompletionCriterion); err == nil {
				d.Display = &Display{Kind: "goal_start", Objective: obj, CompletionCriterion: crit}
			}
		}
		return d, nil
	case GetGoalTool:
		return CallDescription{Description: "Reading the current goal"}, nil
	case SetGoalBudgetTool:
		d := CallDescription{Description: "Setting goal budget"}
		if b, ok := in.(SetGoalBudgetInput); ok && err == nil {
			if kind, limit, err := NormalizeBudget(b.Value, b.Unit); err == nil {
				d.Description += ": " + FormatBudget(kind, limit)
			}
		}
		return d, nil
	case UpdateGoalTool:
		d := CallDescription{Description: "Updating the goal"}
		if u, ok := in.(UpdateGoalInput); ok && err == nil {
			switch Status(u.Status) {
			case Active:
				d.Description = "Resuming the goal"
			case Complete:
				d.Description = "Marking the goal complete"
			case Blocked:
				d.Description = "Marking the goal blocked"
			}
		}
		return d, nil
	}
	return CallDescription{}, err
}

// ToolCall is one call of a goal tool.
type ToolCall struct {
	Name   string
	Input  json.RawMessage
	Agent  string // "" means MainAgent; other agents get goal.unsupported_agent
	TurnID string // the turn the call belongs to; "" outside a turn
	// TaskFile is CreateGoal's task file, resolved by the caller from the
	// input's taskFile or the objective (RUNTIME.md §4); nil for none.
	TaskFile *TaskFileInfo
}

// CallTool runs a goal tool for a model (RUNTIME.md §2.8). Refusals are
// results with IsError and ErrorCode. A CreateGoal, SetGoalBudget or
// UpdateGoal call in a turn whose goal is no longer the current goal is
// ignored: ErrorCode goal.stale_call, IsError false, nothing changes.
func (s *State) CallTool(c ToolCall, now Instant) (ToolResult, []Change) {
	d, err := Describe(c.Name, c.Input)
	if err != nil {
		return ToolResult{Output: sentence(err.Error()), IsError: true, ErrorCode: CodeArgsInvalid, Description: c.Name}, nil
	}
	res := ToolResult{Description: d.Description}
	if c.Agent != "" && c.Agent != MainAgent {
		return res.fail(CodeUnsupportedAgent, "Goal tools are only for the main agent; a subagent cannot read or change the goal. Finish your task and report back instead."), nil
	}
	in, err := DecodeInput(c.Name, c.Input)
	if err != nil {
		return res.fail(CodeArgsInvalid, sentence(err.Error())), nil
	}
	if c.Name == GetGoalTool {
		res.Output = goalJSON(s.Snapshot(now))
		return res, nil
	}
	if msg, stale := s.stale(c.TurnID); stale {
		prefix := map[string]string{CreateGoalTool: "Not created", SetGoalBudgetTool: "Budget not set", UpdateGoalTool: "Goal not updated"}[c.Name]
		res.Output = prefix + ": " + msg + " Nothing was changed. Call GetGoal to see where things stand before using another goal tool."
		res.ErrorCode = CodeStaleCall
		return res, nil
	}
	switch in := in.(type) {
	case CreateGoalInput:
		return s.createTool(res, in, c, now)
	case SetGoalBudgetInput:
		return s.setBudgetTool(res, in, now)
	case UpdateGoalInput:
		return s.updateTool(res, in, c.TurnID, now)
	}
	return res, nil
}

func (r ToolResult) fail(code, output string) ToolResult {
	r.IsError, r.ErrorCode, r.Output = true, code, output
	return r
}

// stale applies the stale-call guard (RUNTIME.md §2.8).
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
		e := err.(*Error)
		if e.Code == CodeAlreadyExists {
			return res.fail(e.Code, fmt.Sprintf("Not created: there is already a goal, and it is %s: %q. Keep working with it. Only if the user wants to abandon it for the new one, call CreateGoal again with replace: true.", s.Goal.Status, oneLine(s.Goal.Objective, 200))), nil
		}
		return res.fail(e.Code, sentence(e.Msg)), nil
	}
	res.Output = goalJSON(s.Snapshot(now))
	return res, changes
}

func (s *State) setBudgetTool(res ToolResult, in SetGoalBudgetInput, now Instant) (ToolResult, []Change) {
	kind, limit, err := NormalizeBudget(in.Value, in.Unit)
	if err != nil {
		return res.fail(CodeBudgetInvalid, sentence(err.Error())), nil
	}
	g := s.Goal
	if g == nil {
		return res.fail(CodeNotFound, "Budget not set: there is no current goal."), nil
	}
	if g.Status == Complete {
		return res.fail(CodeStatusInvalid, "Budget not set: the goal is already complete."), nil
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

func (s *State) updateTool(res ToolResult, in UpdateGoalInput, turnID string, now Instant) (ToolResult, []Change) {
	to := Status(in.Status)
	if to != Active && to != Complete && to != Blocked {
		return res.fail(CodeStatusInvalid, fmt.Sprintf("Status %q is not valid; use one of active, complete or blocked. Only the user can pause or cancel a goal.", in.Status)), nil
	}
	g := s.Goal
	if g == nil {
		return res.fail(CodeNotFound, "Goal not updated: there is no current goal."), nil
	}
	if to == Active {
		changes, err := s.resume(Model, turnID, now)
		switch {
		case err != nil:
			return res.fail(err.(*Error).Code, "Goal not resumed: "+err.Error()+"."), nil
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
		return res.fail(CodeStatusInvalid, fmt.Sprintf("Goal not updated: it is %s, and only an active goal can be marked %s. %s", g.Status, to, guidance)), nil
	}
	reason := reasonComplete
	if to == Blocked {
		reason = reasonModelBlock
	}
	ch := g.setStatus(to, Model, reason, now)
	res.StopBatch = true
	res.Output = fmt.Sprintf("Goal marked %s. %s %s", to, FormatStats(g.TurnsUsed, g.TokensUsed, g.WallClockMs), guidance)
	return res, []Change{ch}
}
