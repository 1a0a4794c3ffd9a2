package goal

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentd/agentd/jsonin"
)

func TestDecodeInput(t *testing.T) {
	tests := []struct {
		name    string
		tool    string
		input   string
		want    any
		wantErr string // substring; "" = no error
	}{
		{"create full", CreateGoalTool, `{"objective":"a","completionCriterion":"b","replace":true,"taskFile":"t.md"}`,
			CreateGoalInput{Objective: "a", CompletionCriterion: "b", Replace: true, TaskFile: "t.md"}, ""},
		{"create null optional", CreateGoalTool, `{"objective":"a","replace":null}`, CreateGoalInput{Objective: "a"}, ""},
		{"create without objective", CreateGoalTool, `{}`, nil, "objective is required"},
		{"create objective number", CreateGoalTool, `{"objective":5}`, nil, "objective must be a string"},
		{"create replace string", CreateGoalTool, `{"objective":"a","replace":"yes"}`, nil, "replace must be true or false"},
		{"create unknown key", CreateGoalTool, `{"objective":"a","goalId":"x"}`, nil, `unknown field "goalId"`},
		{"get empty", GetGoalTool, `{}`, GetGoalInput{}, ""},
		{"get null", GetGoalTool, `null`, GetGoalInput{}, ""},
		{"get omitted", GetGoalTool, ``, GetGoalInput{}, ""},
		{"get unknown key", GetGoalTool, `{"x":1}`, nil, "takes no fields"},
		{"get empty array", GetGoalTool, `[]`, GetGoalInput{}, ""},
		{"get array", GetGoalTool, `[1]`, nil, "must be a JSON object"},
		{"get string", GetGoalTool, `"x"`, nil, "must be a JSON object"},
		{"get malformed", GetGoalTool, `{"a":`, nil, "must be a JSON object"},
		{"budget", SetGoalBudgetTool, `{"value":2.5,"unit":"turns"}`, SetGoalBudgetInput{Value: 2.5, Unit: "turns"}, ""},
		{"budget value string", SetGoalBudgetTool, `{"value":"5","unit":"turns"}`, nil, "value must be a number"},
		{"budget no unit", SetGoalBudgetTool, `{"value":5}`, nil, "unit is required"},
		{"update", UpdateGoalTool, `{"status":"complete"}`, UpdateGoalInput{Status: "complete"}, ""},
		{"update bool", UpdateGoalTool, `{"status":true}`, nil, "status must be a string"},
		{"update extra", UpdateGoalTool, `{"status":"complete","reason":"done"}`, nil, `unknown field "reason"; known fields: status`},
		{"update null", UpdateGoalTool, `{"status":null}`, nil, "status is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, bad := inputTypes[tt.tool].decode(raw(tt.input))
			if tt.wantErr != "" {
				if bad == nil {
					t.Fatalf("decoded %+v, want an error containing %q", got, tt.wantErr)
				}
				if err := inputError(bad); !strings.Contains(err.Error(), tt.wantErr) || codeOf(err) != CodeArgsInvalid {
					t.Fatalf("got %v, want an args.invalid error containing %q", err, tt.wantErr)
				}
				return
			}
			if bad != nil {
				t.Fatalf("refused: %v", bad)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("input (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := NewCall("TodoList", raw(`{}`), MainAgent); codeOf(err) != CodeArgsInvalid || !strings.Contains(err.Error(), "not a goal tool") {
		t.Errorf("NewCall of a non-goal tool: %v", err)
	}
}

// TestNewCallRefusals: what NewCall refuses before any state is read, in
// its order: a key twice, another agent, an input that does not decode.
func TestNewCallRefusals(t *testing.T) {
	tests := []struct {
		name, tool, input, agent string
		want                     ToolResult
	}{
		{"a key twice", SetGoalBudgetTool, `{"value":5,"unit":"turns","value":50}`, "sub",
			ToolResult{Output: `Nothing was changed: SetGoalBudget input: key "value" appears twice; send each field once.`, IsError: true, ErrorCode: CodeArgsInvalid, Description: "Setting goal budget"}},
		{"a subagent with a bad input", CreateGoalTool, `{}`, "sub",
			ToolResult{Output: "Goal tools are only for the main agent; a subagent cannot read or change the goal. Finish your task and report back instead.", IsError: true, ErrorCode: CodeUnsupportedAgent, Description: "Creating a goal"}},
		{"a bad input", CreateGoalTool, `{"objective":5}`, "",
			ToolResult{Output: "Objective must be a string.", IsError: true, ErrorCode: CodeArgsInvalid, Description: "Creating a goal"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewCall(tt.tool, raw(tt.input), tt.agent)
			mustNoErr(t, err)
			res, refused := c.Refused()
			if !refused || c.Input != nil {
				t.Fatalf("not refused: %+v", c)
			}
			if diff := cmp.Diff(tt.want, res); diff != "" {
				t.Errorf("refusal (-want +got):\n%s", diff)
			}
		})
	}
}

func TestToolsSchemas(t *testing.T) {
	tools := Tools()
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
		if tool.InputSchema["additionalProperties"] != false || tool.InputSchema["type"] != "object" {
			t.Errorf("%s: schema is not a strict object", tool.Name)
		}
		if len(tool.Description) < 100 || !IsTool(tool.Name) {
			t.Errorf("%s: description too short or not a tool", tool.Name)
		}
		if _, err := json.Marshal(tool); err != nil {
			t.Errorf("%s: %v", tool.Name, err)
		}
	}
	if diff := cmp.Diff([]string{"CreateGoal", "GetGoal", "SetGoalBudget", "UpdateGoal"}, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct {
		tool, input string
		want        CallDescription
	}{
		{CreateGoalTool, `{"objective":"  ship it ","completionCriterion":" tests pass "}`,
			CallDescription{Description: "Creating a goal", Display: &Display{Kind: "goal_start", Objective: "ship it", CompletionCriterion: "tests pass"}}},
		{CreateGoalTool, `{"objective":"ship it"}`, CallDescription{Description: "Creating a goal", Display: &Display{Kind: "goal_start", Objective: "ship it"}}},
		{CreateGoalTool, `{"objective":" "}`, CallDescription{Description: "Creating a goal"}},
		{CreateGoalTool, `{"bad":1}`, CallDescription{Description: "Creating a goal"}},
		{GetGoalTool, `{}`, CallDescription{Description: "Reading the current goal"}},
		{SetGoalBudgetTool, `{"value":5,"unit":"turns"}`, CallDescription{Description: "Setting goal budget: 5 turns"}},
		{SetGoalBudgetTool, `{"value":1,"unit":"hours"}`, CallDescription{Description: "Setting goal budget: 1 hour"}},
		{SetGoalBudgetTool, `{"value":1.5,"unit":"hours"}`, CallDescription{Description: "Setting goal budget: 90 minutes"}},
		{SetGoalBudgetTool, `{"value":500,"unit":"milliseconds"}`, CallDescription{Description: "Setting goal budget"}},
		{UpdateGoalTool, `{"status":"complete"}`, CallDescription{Description: "Marking the goal complete"}},
		{UpdateGoalTool, `{"status":"blocked"}`, CallDescription{Description: "Marking the goal blocked"}},
		{UpdateGoalTool, `{"status":"active"}`, CallDescription{Description: "Resuming the goal"}},
		{UpdateGoalTool, `{"status":"paused"}`, CallDescription{Description: "Updating the goal"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.input, func(t *testing.T) {
			c, err := NewCall(tt.tool, raw(tt.input), MainAgent)
			mustNoErr(t, err)
			if diff := cmp.Diff(tt.want, c.Description); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	b, _ := json.Marshal(CallDescription{Description: "Creating a goal", Display: &Display{Kind: "goal_start", Objective: "o"}})
	if want := `{"description":"Creating a goal","display":{"kind":"goal_start","objective":"o"}}`; string(b) != want {
		t.Errorf("JSON: got %s, want %s", b, want)
	}
}

func TestGetAndCreateOutput(t *testing.T) {
	fixedIDs(t)
	c := newClock()
	s := &State{}
	res, changes := s.callTool(t, modelCall{Name: GetGoalTool}, c.now())
	if diff := cmp.Diff(ToolResult{Output: "{\n  \"goal\": null\n}", Description: "Reading the current goal"}, res); diff != "" || changes != nil {
		t.Errorf("GetGoal without a goal (-want +got):\n%s", diff)
	}
	res, changes = s.callTool(t, modelCall{Name: CreateGoalTool, Input: raw(`{"objective":"ship it"}`)}, c.now())
	if res.IsError || res.Description != "Creating a goal" {
		t.Fatalf("CreateGoal: %+v", res)
	}
	if diff := cmp.Diff([]string{"create/model/active"}, kinds(changes)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	want := `{
  "goal": {
    "objective": "ship it",
    "status": "active",
    "turnsUsed": 0,
    "tokensUsed": 0,
    "wallClockMs": 0,
    "budget": {
      "tokenBudget": null,
      "turnBudget": null,
      "wallClockBudgetMs": null,
      "remainingTokens": null,
      "remainingTurns": null,
      "remainingWallClockMs": null,
      "tokenBudgetReached": false,
      "turnBudgetReached": false,
      "wallClockBudgetReached": false,
      "overBudget": false
    },
    "createdAt": "2026-03-01T09:00:00Z",
    "updatedAt": "2026-03-01T09:00:00Z",
    "lastActor": "model",
    "stalled": false,
    "requireTodos": true
  }
}`
	if diff := cmp.Diff(want, res.Output); diff != "" {
		t.Errorf("CreateGoal output (-want +got):\n%s", diff)
	}
	res, _ = s.callTool(t, modelCall{Name: GetGoalTool, Input: raw(`{}`)}, c.now())
	if res.Output != want || strings.Contains(res.Output, "goal-1") {
		t.Errorf("GetGoal output differs or shows the goal id:\n%s", res.Output)
	}
}

func TestCreateGoalRefusals(t *testing.T) {
	tests := []struct {
		name, input string
		wantCode    string
		wantText    string
	}{
		{"empty objective", `{"objective":"  "}`, CodeObjectiveEmpty, "empty"},
		{"too long", `{"objective":"` + strings.Repeat("x", 4001) + `"}`, CodeObjectiveTooLong, "file"},
		{"already exists", `{"objective":"other"}`, CodeAlreadyExists, "replace: true"},
		{"strict input", `{"objective":"a","extra":1}`, CodeArgsInvalid, "extra"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			s := withGoal(t, c)
			res, changes := s.callTool(t, modelCall{Name: CreateGoalTool, Input: raw(tt.input)}, c.now())
			if !res.IsError || res.ErrorCode != tt.wantCode || !strings.Contains(res.Output, tt.wantText) || changes != nil {
				t.Errorf("got %+v, want error %s mentioning %q", res, tt.wantCode, tt.wantText)
			}
			if s.Goal.Objective != "ship it" {
				t.Errorf("the goal changed")
			}
		})
	}
}

func TestCreateGoalReplaceAndTaskFile(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	tf := &TaskFileInfo{Path: "plan.md", Exists: false}
	res, changes := s.callTool(t, modelCall{Name: CreateGoalTool, Input: raw(`{"objective":"next","replace":true,"taskFile":"plan.md"}`), TaskFile: tf}, c.now())
	if res.IsError {
		t.Fatalf("replace: %+v", res)
	}
	if diff := cmp.Diff([]string{"replace/system/", "create/model/active"}, kinds(changes)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if !strings.Contains(res.Output, `"path": "plan.md"`) || s.Goal.TaskFile == tf {
		t.Errorf("task file not stored as a copy:\n%s", res.Output)
	}
}

func TestUnsupportedAgent(t *testing.T) {
	for _, tool := range []string{CreateGoalTool, GetGoalTool, SetGoalBudgetTool, UpdateGoalTool} {
		t.Run(tool, func(t *testing.T) {
			c := newClock()
			s := withGoal(t, c)
			res, changes := s.callTool(t, modelCall{Name: tool, Input: raw(`{}`), Agent: "reviewer"}, c.now())
			if !res.IsError || res.ErrorCode != CodeUnsupportedAgent || changes != nil || res.Description == "" {
				t.Errorf("got %+v", res)
			}
		})
	}
}

func TestSetGoalBudgetTool(t *testing.T) {
	tests := []struct {
		name        string
		status      Status
		used        int64 // tokens used before the call
		input       string
		wantCode    string
		wantStop    bool
		wantStatus  Status
		wantLimits  Limits
		wantText    string
		wantChanges []string
	}{
		{"turns on an active goal", Active, 0, `{"value":2.5,"unit":"turns"}`, "", false, Active,
			Limits{TurnBudget: i64(3)}, "Budget recorded: 3 turns (0 turns used so far).", []string{"budget/model/active"}},
		{"tokens merge with existing turns", Active, 0, `{"value":0.4,"unit":"tokens"}`, "", false, Active,
			Limits{TurnBudget: i64(7), TokenBudget: i64(1)}, "1 token", []string{"budget/model/active"}},
		{"hours", Active, 0, `{"value":1.5,"unit":"hours"}`, "", false, Active,
			Limits{TurnBudget: i64(7), WallClockBudgetMs: i64(5_400_000)}, "90 minutes", []string{"budget/model/active"}},
		{"already reached blocks now", Active, 500, `{"value":500,"unit":"tokens"}`, "", true, Blocked,
			Limits{TurnBudget: i64(7), TokenBudget: i64(500)}, "now blocked", []string{"budget/model/active", "budgetWarning/runtime/active", "block/runtime/blocked"}},
		{"reached on a paused goal is only stored", Paused, 500, `{"value":500,"unit":"tokens"}`, "", false, Paused,
			Limits{TurnBudget: i64(7), TokenBudget: i64(500)}, "applies once it is active", []string{"budget/model/paused"}},
		{"too short", Active, 0, `{"value":500,"unit":"milliseconds"}`, CodeBudgetInvalid, false, Active,
			Limits{TurnBudget: i64(7)}, "not a reasonable budget", nil},
		{"too long", Active, 0, `{"value":25,"unit":"hours"}`, CodeBudgetInvalid, false, Active,
			Limits{TurnBudget: i64(7)}, "not a reasonable budget", nil},
		{"zero", Active, 0, `{"value":0,"unit":"turns"}`, CodeBudgetInvalid, false, Active,
			Limits{TurnBudget: i64(7)}, "greater than 0", nil},
		{"complete goal", Complete, 0, `{"value":3,"unit":"turns"}`, CodeStatusInvalid, false, Complete,
			Limits{TurnBudget: i64(7)}, "complete", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			s := withGoal(t, c)
			if tt.name != "turns on an active goal" {
				s.Goal.Limits.TurnBudget = i64(7)
			}
			s.Goal.Status = tt.status
			s.Goal.TokensUsed = tt.used
			res, changes := s.callTool(t, modelCall{Name: SetGoalBudgetTool, Input: raw(tt.input)}, c.now())
			if res.ErrorCode != tt.wantCode || res.IsError != (tt.wantCode != "") {
				t.Fatalf("got %+v, want code %q", res, tt.wantCode)
			}
			if res.StopTurn != tt.wantStop || res.StopBatch != tt.wantStop {
				t.Errorf("stop: got %v/%v, want %v", res.StopTurn, res.StopBatch, tt.wantStop)
			}
			if !strings.Contains(res.Output, tt.wantText) {
				t.Errorf("output %q does not contain %q", res.Output, tt.wantText)
			}
			if s.Status() != tt.wantStatus {
				t.Errorf("status: got %s, want %s", s.Status(), tt.wantStatus)
			}
			if diff := cmp.Diff(tt.wantLimits, s.Goal.Limits); diff != "" {
				t.Errorf("limits (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantChanges, kinds(changes)); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("no goal", func(t *testing.T) {
		res, _ := (&State{}).callTool(t, modelCall{Name: SetGoalBudgetTool, Input: raw(`{"value":3,"unit":"turns"}`)}, newClock().now())
		if res.ErrorCode != CodeNotFound || !res.IsError || res.Description != "Setting goal budget: 3 turns" {
			t.Errorf("got %+v", res)
		}
	})
}

func TestUpdateGoalTool(t *testing.T) {
	tests := []struct {
		name       string
		from       Status // "" = no goal
		input      string
		wantCode   string
		wantError  bool
		wantTurn   bool
		wantBatch  bool
		wantStatus Status
		wantText   string
		wantActor  Actor
	}{
		{"complete an active goal", Active, `{"status":"complete"}`, "", false, true, true, Complete,
			"Goal marked complete. Worked 2 turns over 2m05s, using 12.3k tokens. Write a short final message for the user and call no more goal tools.", Model},
		{"block an active goal", Active, `{"status":"blocked"}`, "", false, true, true, Blocked, "Goal marked blocked. Worked 2 turns", Model},
		{"complete twice", Complete, `{"status":"complete"}`, "", false, true, false, Complete, "already complete", User},
		{"complete a paused goal", Paused, `{"status":"complete"}`, CodeStatusInvalid, true, true, false, Paused, "only an active goal", User},
		{"block a blocked goal", Blocked, `{"status":"blocked"}`, "", false, true, false, Blocked, "already blocked", User},
		{"pause is refused", Active, `{"status":"paused"}`, CodeStatusInvalid, true, false, false, Active, "active, complete, blocked or waiting", User},
		{"cancel is refused", Active, `{"status":"cancelled"}`, CodeStatusInvalid, true, false, false, Active, "Only the user can pause or cancel", User},
		{"resume a paused goal", Paused, `{"status":"active"}`, "", false, false, false, Active, "Goal resumed", Model},
		{"resume a blocked goal", Blocked, `{"status":"active"}`, "", false, false, false, Active, "Goal resumed", Model},
		{"resume an active goal", Active, `{"status":"active"}`, "", false, false, false, Active, "already active", User},
		{"resume a complete goal", Complete, `{"status":"active"}`, CodeNotResumable, true, false, false, Complete, "complete", User},
		{"no goal", "", `{"status":"complete"}`, CodeNotFound, true, false, false, "", "no current goal", ""},
		{"strict input", Active, `{"status":"complete","why":"x"}`, CodeArgsInvalid, true, false, false, Active, "why", User},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			s := &State{}
			if tt.from != "" {
				s = withGoal(t, c)
				s.Goal.TurnsUsed, s.Goal.TokensUsed = 2, 12_345
				if tt.from != Active {
					s.Goal.settle(c.now())
					s.Goal.unstamp()
					s.Goal.WallClockMs = 125_000
				}
				s.Goal.Status = tt.from
			}
			res, _ := s.callTool(t, modelCall{Name: UpdateGoalTool, Input: raw(tt.input)}, c.advance(125*time.Second))
			if res.ErrorCode != tt.wantCode || res.IsError != tt.wantError {
				t.Fatalf("got %+v, want code %q error %v", res, tt.wantCode, tt.wantError)
			}
			if res.StopTurn != tt.wantTurn || res.StopBatch != tt.wantBatch {
				t.Errorf("stop: got %v/%v, want %v/%v", res.StopTurn, res.StopBatch, tt.wantTurn, tt.wantBatch)
			}
			if !strings.Contains(res.Output, tt.wantText) {
				t.Errorf("output %q does not contain %q", res.Output, tt.wantText)
			}
			if s.Status() != tt.wantStatus {
				t.Errorf("status: got %s, want %s", s.Status(), tt.wantStatus)
			}
			if s.Goal != nil && s.Goal.LastActor != tt.wantActor {
				t.Errorf("last actor: got %s, want %s", s.Goal.LastActor, tt.wantActor)
			}
		})
	}
}

// TestStaleCallGuard: goal tools called in a turn whose goal is no longer
// current are ignored with goal.stale_call, not an error, and change
// nothing (docs/runtime.md §2.8).
func TestStaleCallGuard(t *testing.T) {
	calls := []struct{ tool, input string }{
		{CreateGoalTool, `{"objective":"new","replace":true}`},
		{SetGoalBudgetTool, `{"value":3,"unit":"turns"}`},
		{UpdateGoalTool, `{"status":"complete"}`},
	}
	setups := []struct {
		name     string
		change   func(s *State, now Instant)
		wantText string
	}{
		{"cancelled", func(s *State, now Instant) { s.Cancel(now) }, "no current goal"},
		{"replaced", func(s *State, now Instant) { s.Create(CreateParams{Objective: "other", Replace: true}, now) }, "current goal changed"},
	}
	for _, setup := range setups {
		for _, call := range calls {
			t.Run(setup.name+" "+call.tool, func(t *testing.T) {
				c := newClock()
				s := withGoal(t, c)
				beginTurn(t, s, "t1", c.now())
				setup.change(s, c.now())
				before := s.Clone()
				res, changes := s.callTool(t, modelCall{Name: call.tool, Input: raw(call.input), TurnID: "t1"}, c.now())
				if res.IsError || res.ErrorCode != CodeStaleCall || !strings.Contains(res.Output, setup.wantText) || changes != nil {
					t.Errorf("got %+v", res)
				}
				if diff := cmp.Diff(before, *s); diff != "" {
					t.Errorf("state changed (-before +after):\n%s", diff)
				}
			})
		}
	}
	t.Run("the goal the model made active is the turn's goal", func(t *testing.T) {
		fixedIDs(t)
		c := newClock()
		s := &State{}
		beginTurn(t, s, "t1", c.now())
		res, _ := s.callTool(t, modelCall{Name: CreateGoalTool, Input: raw(`{"objective":"a"}`), TurnID: "t1"}, c.now())
		if res.IsError {
			t.Fatalf("create: %+v", res)
		}
		res, _ = s.callTool(t, modelCall{Name: UpdateGoalTool, Input: raw(`{"status":"complete"}`), TurnID: "t1"}, c.now())
		if res.ErrorCode != "" || s.Status() != Complete {
			t.Errorf("complete in the creating turn: %+v", res)
		}
		res, _ = s.callTool(t, modelCall{Name: CreateGoalTool, Input: raw(`{"objective":"b"}`), TurnID: "t1"}, c.now())
		if res.ErrorCode != "" || s.Goal.Objective != "b" {
			t.Errorf("create over the turn's complete goal: %+v", res)
		}
	})
	t.Run("a user goal created during a turn that had none is not stale", func(t *testing.T) {
		fixedIDs(t)
		c := newClock()
		s := &State{}
		beginTurn(t, s, "t1", c.now())
		mustNoErr(t, firstErr(s.Create(CreateParams{Objective: "a"}, c.now())))
		res, _ := s.callTool(t, modelCall{Name: SetGoalBudgetTool, Input: raw(`{"value":3,"unit":"turns"}`), TurnID: "t1"}, c.now())
		if res.ErrorCode != "" {
			t.Errorf("got %+v", res)
		}
	})
	t.Run("GetGoal is never stale", func(t *testing.T) {
		c := newClock()
		s := withGoal(t, c)
		beginTurn(t, s, "t1", c.now())
		s.Cancel(c.now())
		if res, _ := s.callTool(t, modelCall{Name: GetGoalTool, TurnID: "t1"}, c.now()); res.ErrorCode != "" {
			t.Errorf("got %+v", res)
		}
	})
}

func TestToolResultJSON(t *testing.T) {
	b, err := json.Marshal(ToolResult{Output: "x", Description: "d"})
	mustNoErr(t, err)
	if want := `{"output":"x","isError":false,"description":"d","stopTurn":false,"stopBatch":false}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	b, _ = json.Marshal(Change{Kind: ChangeCancel, Actor: User, Goal: &Snapshot{}})
	if want := `{"kind":"cancel","actor":"user"}`; string(b) != want {
		t.Errorf("change JSON: got %s, want %s", b, want)
	}
}

// TestSchemasMatchInputs: each tool's JSON Schema declares exactly the JSON
// fields of its input struct, and requires exactly the fields the decoder
// requires, so that the schema a model reads and the decoder cannot drift.
func TestSchemasMatchInputs(t *testing.T) {
	for _, tool := range Tools() {
		t.Run(tool.Name, func(t *testing.T) {
			in, ok := inputTypes[tool.Name]
			if !ok {
				t.Fatalf("no input type")
			}
			names, required := jsonin.Fields(reflect.TypeOf(in.zero))
			props, _ := tool.InputSchema["properties"].(map[string]any)
			var schemaNames []string
			for name := range props {
				schemaNames = append(schemaNames, name)
			}
			schemaRequired, _ := tool.InputSchema["required"].([]string)
			sortedEq := func(a, b []string) string {
				return cmp.Diff(a, b, cmpopts.SortSlices(func(x, y string) bool { return x < y }), cmpopts.EquateEmpty())
			}
			if diff := sortedEq(names, schemaNames); diff != "" {
				t.Errorf("schema properties vs %T fields (-struct +schema):\n%s", in.zero, diff)
			}
			if diff := sortedEq(required, schemaRequired); diff != "" {
				t.Errorf("schema required vs %T required fields (-struct +schema):\n%s", in.zero, diff)
			}
		})
	}
	if len(inputTypes) != len(Tools()) {
		t.Errorf("%d input types for %d tools", len(inputTypes), len(Tools()))
	}
}
