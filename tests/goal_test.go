package tests

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentd/agentd/tests/lsptest"
)

type goalSnap struct {
	GoalID              string `json:"goalId"`
	Objective           string `json:"objective"`
	CompletionCriterion string `json:"completionCriterion"`
	Status              string `json:"status"`
	TurnsUsed           int64  `json:"turnsUsed"`
	TokensUsed          int64  `json:"tokensUsed"`
	TerminalReason      string `json:"terminalReason"`
	LastActor           string `json:"lastActor"`
	Stalled             bool   `json:"stalled"`
	Budget              struct {
		TurnBudget        *int64 `json:"turnBudget"`
		TokenBudget       *int64 `json:"tokenBudget"`
		WallClockBudgetMs *int64 `json:"wallClockBudgetMs"`
		RemainingTurns    *int64 `json:"remainingTurns"`
		TurnBudgetReached bool   `json:"turnBudgetReached"`
	} `json:"budget"`
}

type goalChanged struct {
	Revision uint64    `json:"revision"`
	Goal     *goalSnap `json:"goal"`
	Change   struct {
		Kind, Status, Reason, Actor string
		Percent                     int
	} `json:"change"`
}

func (c *client) goal() *goalSnap {
	c.T.Helper()
	var st struct {
		Goal *goalSnap `json:"goal"`
	}
	c.MustExec("agentd.state", nil, &st)
	return st.Goal
}

// awaitGoal waits for a goalChanged notification of change kind.
func (c *client) awaitGoal(kind string) goalChanged {
	c.T.Helper()
	var gc goalChanged
	raw := c.Await("agentd/goalChanged", func(raw json.RawMessage) bool {
		var g goalChanged
		return json.Unmarshal(raw, &g) == nil && g.Change.Kind == kind
	})
	json.Unmarshal(raw, &gc)
	return gc
}

func refusalCode(err error) string {
	if re, ok := err.(*lsptest.Error); ok && re.Code == -32803 {
		var code string
		json.Unmarshal(re.DataField("code"), &code)
		return code
	}
	return ""
}

// TestGoalToolsEndToEnd: the model creates, reads, budgets and completes a
// goal through agentd.callTool (docs/runtime.md §2.8), and clients are told.
func TestGoalToolsEndToEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)

	var tools struct{ Tools []struct{ Name string } }
	c.MustExec("agentd.tools", nil, &tools)
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, ","); got != "TodoList,CreateGoal,GetGoal,SetGoalBudget,UpdateGoal" {
		t.Fatalf("agentd.tools = %s", got)
	}

	var desc struct {
		Description string
		Display     map[string]string
	}
	c.MustExec("agentd.describeTool", map[string]any{"name": "CreateGoal", "input": map[string]any{"objective": "ship v1", "completionCriterion": "tests pass"}}, &desc)
	if desc.Description != "Creating a goal" || desc.Display["kind"] != "goal_start" || desc.Display["objective"] != "ship v1" || desc.Display["completionCriterion"] != "tests pass" {
		t.Fatalf("describeTool CreateGoal = %+v", desc)
	}

	res := c.tool("CreateGoal", map[string]any{"objective": "  ship v1  ", "completionCriterion": "tests pass"})
	if res.IsError || res.Description != "Creating a goal" || strings.Contains(res.Output, "goalId") || !strings.HasPrefix(res.Output, "{\n  \"goal\": {") {
		t.Fatalf("CreateGoal = %+v, want pretty JSON without goalId", res)
	}
	var out struct{ Goal goalSnap }
	json.Unmarshal([]byte(res.Output), &out)
	if out.Goal.Objective != "ship v1" || out.Goal.Status != "active" {
		t.Fatalf("CreateGoal goal = %+v", out.Goal)
	}
	if gc := c.awaitGoal("create"); gc.Change.Actor != "model" || gc.Change.Status != "active" || gc.Goal.GoalID == "" {
		t.Fatalf("goalChanged create = %+v", gc)
	}

	if res := c.tool("SetGoalBudget", map[string]any{"value": 5, "unit": "turns"}); res.IsError || res.Description != "Setting goal budget: 5 turns" {
		t.Fatalf("SetGoalBudget = %+v", res)
	}
	if g := c.goal(); g.Budget.TurnBudget == nil || *g.Budget.TurnBudget != 5 || *g.Budget.RemainingTurns != 5 {
		t.Fatalf("budget after SetGoalBudget = %+v", g.Budget)
	}
	if res := c.tool("SetGoalBudget", map[string]any{"value": 0.2, "unit": "seconds"}); !res.IsError || res.ErrorCode != "goal.budget_invalid" {
		t.Fatalf("SetGoalBudget 0.2 seconds = %+v, want goal.budget_invalid", res)
	}
	if res := c.tool("UpdateGoal", map[string]any{"status": "paused"}); !res.IsError || !strings.Contains(res.Output, "complete") || !strings.Contains(res.Output, "blocked") {
		t.Fatalf("UpdateGoal paused = %+v, want an error listing the valid values", res)
	}
	if res := c.tool("GetGoal", map[string]any{}); !strings.Contains(res.Output, `"status": "active"`) || strings.Contains(res.Output, "goalId") {
		t.Fatalf("GetGoal = %q", res.Output)
	}
	res = c.tool("UpdateGoal", map[string]any{"status": "complete"})
	if res.IsError || !res.StopTurn || !res.StopBatch || !strings.Contains(res.Output, "Worked 0 turns over") {
		t.Fatalf("UpdateGoal complete = %+v", res)
	}
	if gc := c.awaitGoal("complete"); gc.Goal.Status != "complete" {
		t.Fatalf("goalChanged complete = %+v", gc)
	}
	if msg := c.Await("window/showMessage", nil); !strings.Contains(string(msg), "goal complete") {
		t.Errorf("showMessage = %s, want the goal complete message", msg)
	}
	// A complete goal does not block a new one.
	if res := c.tool("CreateGoal", map[string]any{"objective": "next"}); res.IsError {
		t.Fatalf("CreateGoal over a complete goal = %+v", res)
	}
	if res := c.tool("CreateGoal", map[string]any{"objective": "another"}); res.ErrorCode != "goal.already_exists" {
		t.Fatalf("CreateGoal over an active goal = %+v, want goal.already_exists", res)
	}
	if res := c.tool("CreateGoal", map[string]any{"objective": "x", "extra": 1}); !res.IsError || !strings.Contains(res.Output, "extra") {
		t.Fatalf("CreateGoal with an unknown key = %+v", res)
	}
}

// TestGoalRefusedForSubagent: goal tools are for the main agent only.
func TestGoalRefusedForSubagent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	var res toolResult
	c.MustExec("agentd.callTool", map[string]any{"name": "CreateGoal", "agent": "explorer", "input": map[string]any{"objective": "x"}}, &res)
	if !res.IsError || res.ErrorCode != "goal.unsupported_agent" {
		t.Fatalf("subagent CreateGoal = %+v", res)
	}
	if c.goal() != nil {
		t.Fatal("a subagent's refused call created a goal")
	}
}

// TestGoalUserControls: a person creates, pauses, resumes, budgets and
// cancels a goal (actor user), with the refusals of docs/runtime.md §2.3.
func TestGoalUserControls(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	if err := c.Exec("agentd.goal.cancel", nil, nil); refusalCode(err) != "goal.not_found" {
		t.Fatalf("cancel with no goal: %v, want goal.not_found", err)
	}
	if err := c.Exec("agentd.goal.create", map[string]any{"objective": "   "}, nil); refusalCode(err) != "goal.objective_empty" {
		t.Fatalf("empty objective: %v", err)
	}
	if err := c.Exec("agentd.goal.create", map[string]any{"objective": strings.Repeat("x", 4001)}, nil); refusalCode(err) != "goal.objective_too_long" || !strings.Contains(err.Error(), "file") {
		t.Fatalf("long objective: %v, want goal.objective_too_long with file advice", err)
	}
	c.MustExec("agentd.goal.create", map[string]any{"objective": "refactor the store", "completionCriterion": "go test passes"}, nil)
	if gc := c.awaitGoal("create"); gc.Change.Actor != "user" {
		t.Fatalf("create actor = %q, want user", gc.Change.Actor)
	}
	if err := c.Exec("agentd.goal.create", map[string]any{"objective": "other"}, nil); refusalCode(err) != "goal.already_exists" {
		t.Fatalf("second create: %v", err)
	}
	c.MustExec("agentd.goal.resume", nil, nil) // active: no-op
	c.MustExec("agentd.goal.pause", map[string]any{"reason": "lunch"}, nil)
	if g := c.goal(); g.Status != "paused" || !strings.Contains(g.TerminalReason, "lunch") || g.LastActor != "user" {
		t.Fatalf("after pause: %+v", g)
	}
	c.MustExec("agentd.goal.pause", nil, nil) // paused: no-op
	c.MustExec("agentd.goal.setBudget", map[string]any{"turns": 3, "wallClockMs": 60000}, nil)
	c.MustExec("agentd.goal.setBudget", map[string]any{"wallClockMs": nil}, nil)
	if g := c.goal(); g.Budget.TurnBudget == nil || *g.Budget.TurnBudget != 3 || g.Budget.WallClockBudgetMs != nil {
		t.Fatalf("budget after set and remove = %+v", g.Budget)
	}
	if err := c.Exec("agentd.goal.setBudget", map[string]any{"turns": "three"}, nil); err == nil {
		t.Fatal("setBudget with a string was accepted")
	}
	c.MustExec("agentd.goal.resume", nil, nil)
	if g := c.goal(); g.Status != "active" || g.TerminalReason != "" {
		t.Fatalf("after resume: %+v", g)
	}
	c.awaitGoal("resume")
	c.MustExec("agentd.goal.cancel", nil, nil)
	if gc := c.awaitGoal("cancel"); gc.Goal != nil || gc.Change.Actor != "user" {
		t.Fatalf("cancel notification = %+v", gc)
	}
	var h struct {
		Events []struct{ Kind, Actor string }
	}
	c.MustExec("agentd.history", map[string]any{"limit": 3}, &h)
	if len(h.Events) != 3 || h.Events[0].Kind != "goal.cancel" {
		t.Fatalf("history = %+v, want newest first starting with goal.cancel", h.Events)
	}
}

// TestGoalRestartWithoutTurnStaysActive: a goal no agent was driving when
// the serving process ended stays active in the next one, whether that
// process was shut down or killed between turns (docs/runtime.md
// §2.3.2), and the next process counts its wall clock on.
func TestGoalRestartWithoutTurnStaysActive(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "survive restarts"}, nil)
	c.shutdown()

	p := e.start()
	c2 := p.connect()
	c2.Initialize(nil, e.ws)
	if g := c2.goal(); g == nil || g.Status != "active" || g.TerminalReason != "" {
		t.Fatalf("after a shutdown: %+v, want still active", g)
	}
	h := newHost(c2)
	turn, _ := h.beginTurn("user")
	h.beginStep(turn)
	h.endStep(turn, 10, "stop")
	if end := h.endTurn(turn, "completed"); end.Continuation == nil {
		t.Fatalf("turn end = %+v, want a continuation", end)
	}
	p.Cmd.Process.Kill() // between turns
	p.waitExit()

	c3 := e.start().connect()
	c3.Initialize(nil, e.ws)
	if g := c3.goal(); g == nil || g.Status != "active" || g.TurnsUsed != 1 {
		t.Fatalf("after a kill between turns: %+v, want still active with its turn", g)
	}
	if n := c3.NotesOf("agentd/goalChanged"); len(n) != 0 {
		t.Fatalf("goal notifications at open: %s", n)
	}
}

// TestGoalShellCommands: agentd goal ... with status exit codes.
func TestGoalShellCommands(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	status := func() int {
		_, _, code := e.cli("goal", "status", "--exit-code", "--workspace", e.ws)
		return code
	}
	if code := status(); code != 1 {
		t.Fatalf("status with no goal = %d, want 1", code)
	}
	out, errOut, code := e.cli("goal", "create", "write the docs", "--criterion", "README reviewed", "--workspace", e.ws)
	if code != 0 || !strings.Contains(out, "Goal (active): write the docs") || !strings.Contains(out, "README reviewed") {
		t.Fatalf("goal create: %d %q %q", code, out, errOut)
	}
	if code := status(); code != 2 {
		t.Fatalf("active status = %d, want 2", code)
	}
	if _, errOut, code := e.cli("goal", "budget", "90", "minutes", "--workspace", e.ws); code != 0 {
		t.Fatalf("goal budget: %d %s", code, errOut)
	}
	if _, errOut, code := e.cli("goal", "budget", "2", "fortnights", "--workspace", e.ws); code != 2 || !strings.Contains(errOut, "fortnights") {
		t.Fatalf("goal budget with a bad unit: %d %q", code, errOut)
	}
	e.cli("goal", "pause", "--workspace", e.ws)
	if code := status(); code != 6 {
		t.Fatalf("paused status = %d, want 6", code)
	}
	out, _, _ = e.cli("goal", "status", "--json", "--workspace", e.ws)
	var g goalSnap
	if err := json.Unmarshal([]byte(out), &g); err != nil || g.Budget.WallClockBudgetMs == nil || *g.Budget.WallClockBudgetMs != 5400000 {
		t.Fatalf("status --json = %s (%v)", out, err)
	}
	e.cli("goal", "resume", "--workspace", e.ws)
	e.cli("goal", "cancel", "--workspace", e.ws)
	if code := status(); code != 1 {
		t.Fatalf("status after cancel = %d, want 1", code)
	}
}

// TestGoalWorkDoneProgress: while a goal is active a client that declared
// window.workDoneProgress gets standard progress; it ends when the goal
// stops (docs/protocol.md §4).
func TestGoalWorkDoneProgress(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	var res map[string]any
	if err := c.Call("initialize", map[string]any{"processId": nil, "rootUri": fileURI(e.ws),
		"capabilities": map[string]any{"window": map[string]any{"workDoneProgress": true}}}, &res); err != nil {
		t.Fatal(err)
	}
	c.MustNotify("initialized", map[string]any{})
	c.MustExec("agentd.goal.create", map[string]any{"objective": "progress"}, nil)
	create := c.Await("window/workDoneProgress/create", nil)
	var tok struct{ Token string }
	json.Unmarshal(create, &tok)
	isKind := func(kind string) func(json.RawMessage) bool {
		return func(raw json.RawMessage) bool {
			var p struct {
				Token string
				Value struct{ Kind, Message string }
			}
			return json.Unmarshal(raw, &p) == nil && p.Token == tok.Token && p.Value.Kind == kind
		}
	}
	begin := c.Await("$/progress", isKind("begin"))
	if !strings.Contains(string(begin), "Goal: 0 turns") {
		t.Errorf("progress begin = %s", begin)
	}
	c.MustExec("agentd.goal.pause", nil, nil)
	c.Await("$/progress", isKind("end"))
}

// TestFolderReopenedWithActiveGoal: a client whose folder is locked by
// another server retries the open on its next command; when the other
// server was killed in the middle of a goal-driven turn, that retry runs the
// restart rule without deadlocking the connection (its notices reach the
// fan-out while the folder is being added), and the client is told of the
// pause.
func TestFolderReopenedWithActiveGoal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pa := e.start()
	a := pa.connect()
	a.Initialize(nil, e.ws)
	a.MustExec("agentd.goal.create", map[string]any{"objective": "keep going"}, nil)
	h := newHost(a)
	turn, _ := h.beginTurn("user")
	h.beginStep(turn)

	b := e.start().connect()
	b.Initialize(nil, e.ws)
	if err := b.Exec("agentd.state", nil, nil); refusalCode(err) != "workspace.locked" {
		t.Fatalf("second server: %v, want workspace.locked", err)
	}
	pa.Cmd.Process.Kill()
	pa.waitExit()
	g := b.goal() // retries the open, which pauses the goal the dead server's turn drove
	if g == nil || g.Status != "paused" || g.TerminalReason != restartReason {
		t.Fatalf("after the owner died: %+v, want the goal paused by the restart rule", g)
	}
	if gc := b.awaitGoal("pause"); gc.Change.Reason != restartReason || gc.Goal == nil || gc.Goal.Status != "paused" {
		t.Fatalf("pause notification = %+v", gc)
	}
	b.MustExec("agentd.tools", nil, nil)
}
