package commands_test

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/agentd/agentd/commands/protocol"

	"github.com/agentd/agentd/commands"
	"github.com/agentd/agentd/workspace"
	"github.com/google/go-cmp/cmp"
)

// run is one command of a handler test: its id and its ARGS object.
type run struct {
	id   string
	args string
}

// handlerCase runs setup, then the command under test, on a fresh client
// of a daemon service with one folder open. A refusal names its wantCode;
// a success is checked by check on the result as a client reads it (JSON).
type handlerCase struct {
	name     string
	setup    []run
	cmd      run
	wantCode string
	check    func(t *testing.T, res wire)
	// teamFile: the folder gets a team file (not accepted), whose sha256
	// replaces $TEAMSHA in the command's args.
	teamFile bool
}

// wire is a result as its JSON, the form every client reads.
type wire map[string]json.RawMessage

// get decodes the field at path (object keys) of w into a T.
func get[T any](t *testing.T, w wire, path ...string) T {
	t.Helper()
	var v T
	raw, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range path {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			t.Fatalf("result at %q is not an object: %s", key, raw)
		}
		if raw = obj[key]; raw == nil {
			t.Fatalf("result has no field %v: %v", path, w)
		}
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("result field %v = %s: %v", path, raw, err)
	}
	return v
}

const (
	withGoal  = `{"objective":"port the parser"}`
	beginTurn = `{"turnId":"t1","origin":"user"}`
	setTodos  = `{"items":[{"title":"write tests","status":"pending"}]}`
)

// handlerCases are a success and a refusal of every command (docs/protocol.md
// §3), run in process through Client.Execute, without the binary.
var handlerCases = []handlerCase{
	{name: "tools", cmd: run{"agentd.tools", `{}`}, check: func(t *testing.T, w wire) {
		var names []string
		for _, tool := range get[[]struct{ Name string }](t, w, "tools") {
			names = append(names, tool.Name)
		}
		if diff := cmp.Diff([]string{"TodoList", "CreateGoal", "GetGoal", "SetGoalBudget", "UpdateGoal"}, names); diff != "" {
			t.Errorf("tools (-want +got):\n%s", diff)
		}
	}},
	{name: "tools refuses an unknown field", cmd: run{"agentd.tools", `{"bogus":1}`}, wantCode: "args.invalid"},

	{name: "describeTool", cmd: run{"agentd.describeTool", `{"name":"TodoList","input":{"todos":[{"title":"a","status":"pending"}]}}`}, check: func(t *testing.T, w wire) {
		if d := get[string](t, w, "description"); d == "" {
			t.Errorf("empty description")
		}
	}},
	{name: "describeTool refuses an unknown tool", cmd: run{"agentd.describeTool", `{"name":"Nope","input":{}}`}, wantCode: "args.invalid"},

	{name: "callTool writes the list", cmd: run{"agentd.callTool", `{"name":"TodoList","input":{"todos":[{"title":"a","status":"in_progress"}]}}`}, check: func(t *testing.T, w wire) {
		if get[bool](t, w, "isError") {
			t.Errorf("refused: %v", w)
		}
	}},
	{name: "callTool refuses a non-object input", cmd: run{"agentd.callTool", `{"name":"TodoList","input":3}`}, wantCode: "args.invalid"},
	{name: "callTool answers a model refusal as a result", cmd: run{"agentd.callTool", `{"name":"UpdateGoal","input":{"status":"complete"}}`}, check: func(t *testing.T, w wire) {
		if !get[bool](t, w, "isError") || get[string](t, w, "errorCode") != "goal.not_found" {
			t.Errorf("UpdateGoal without a goal = %v, want isError with goal.not_found", w)
		}
	}},

	{name: "state", setup: []run{{"agentd.todo.set", setTodos}}, cmd: run{"agentd.state", `{}`}, check: func(t *testing.T, w wire) {
		if r := get[uint64](t, w, "revision"); r != 1 {
			t.Errorf("revision %d, want 1", r)
		}
		if items := get[[]any](t, w, "todos", "items"); len(items) != 1 {
			t.Errorf("items %v, want 1", items)
		}
	}},
	{name: "state refuses a session with control characters", cmd: run{"agentd.state", `{"session":"a\nb"}`}, wantCode: "args.invalid"},

	{name: "sessions", setup: []run{{"agentd.todo.set", `{"session":"s1","items":[{"title":"a","status":"pending"}]}`}}, cmd: run{"agentd.sessions", `{}`}, check: func(t *testing.T, w wire) {
		rows := get[[]struct {
			Session   string
			TodoCount int
		}](t, w, "sessions")
		if len(rows) != 1 || rows[0].Session != "s1" || rows[0].TodoCount != 1 {
			t.Errorf("sessions %+v, want s1 with 1 item", rows)
		}
	}},
	{name: "sessions refuses a folder that is not open", cmd: run{"agentd.sessions", `{"workspace":"/not/open"}`}, wantCode: "workspace.unknown"},

	{name: "history", setup: []run{{"agentd.todo.set", setTodos}}, cmd: run{"agentd.history", `{}`}, check: func(t *testing.T, w wire) {
		events := get[[]struct{ Kind, Actor string }](t, w, "events")
		if len(events) != 1 || events[0].Kind != "todo.set" || events[0].Actor != "user" {
			t.Errorf("events %+v, want one todo.set by the user", events)
		}
	}},
	{name: "history refuses a negative limit", cmd: run{"agentd.history", `{"limit":-1}`}, wantCode: "args.invalid"},

	{name: "todo.set", cmd: run{"agentd.todo.set", `{"items":[{"title":"a","status":"pending"}],"expectedRevision":0}`}, check: func(t *testing.T, w wire) {
		if r := get[uint64](t, w, "todos", "revision"); r != 1 {
			t.Errorf("todos.revision %d, want 1", r)
		}
	}},
	{name: "todo.set refuses a stale revision", setup: []run{{"agentd.todo.set", setTodos}}, cmd: run{"agentd.todo.set", `{"items":[],"expectedRevision":0}`}, wantCode: "todo.conflict"},

	{name: "awaitChange answers a newer revision at once", setup: []run{{"agentd.todo.set", setTodos}}, cmd: run{"agentd.awaitChange", `{"afterRevision":0,"timeoutMs":300000}`}, check: func(t *testing.T, w wire) {
		if r := get[uint64](t, w, "revision"); r != 1 {
			t.Errorf("revision %d, want 1", r)
		}
	}},
	{name: "awaitChange refuses a timeout above the bound", cmd: run{"agentd.awaitChange", `{"afterRevision":0,"timeoutMs":300001}`}, wantCode: "args.invalid"},

	{name: "goal.create", cmd: run{"agentd.goal.create", withGoal}, check: func(t *testing.T, w wire) {
		if s := get[string](t, w, "goal", "status"); s != "active" {
			t.Errorf("goal status %q, want active", s)
		}
	}},
	{name: "goal.create refuses an empty objective", cmd: run{"agentd.goal.create", `{"objective":"  "}`}, wantCode: "goal.objective_empty"},
	{name: "goal.create refuses a second goal", setup: []run{{"agentd.goal.create", withGoal}}, cmd: run{"agentd.goal.create", withGoal}, wantCode: "goal.already_exists"},

	{name: "goal.pause", setup: []run{{"agentd.goal.create", withGoal}}, cmd: run{"agentd.goal.pause", `{"reason":"lunch"}`}, check: func(t *testing.T, w wire) {
		if s := get[string](t, w, "goal", "status"); s != "paused" {
			t.Errorf("goal status %q, want paused", s)
		}
	}},
	{name: "goal.wait", setup: []run{{"agentd.goal.create", withGoal}}, cmd: run{"agentd.goal.wait", `{"for":"30m","paths":["build/out.log"],"note":"the build"}`}, check: func(t *testing.T, w wire) {
		if s := get[string](t, w, "goal", "status"); s != "waiting" {
			t.Errorf("goal status %q, want waiting", s)
		}
		if p := get[[]any](t, w, "goal", "wait", "paths"); len(p) != 1 || p[0] != "build/out.log" {
			t.Errorf("wait paths %v", p)
		}
		if by := get[string](t, w, "goal", "wait", "by"); by != "user" {
			t.Errorf("wait by %q, want user", by)
		}
	}},
	{name: "goal.wait refuses a wait with no condition", setup: []run{{"agentd.goal.create", withGoal}}, cmd: run{"agentd.goal.wait", `{"note":"soon"}`}, wantCode: "args.invalid"},
	{name: "goal.wait refuses a path outside the workspace", setup: []run{{"agentd.goal.create", withGoal}}, cmd: run{"agentd.goal.wait", `{"paths":["../elsewhere"]}`}, wantCode: "goal.task_file_outside"},
	{name: "goal.pause refuses without a goal", cmd: run{"agentd.goal.pause", `{}`}, wantCode: "goal.not_found"},

	{name: "goal.resume", setup: []run{{"agentd.goal.create", withGoal}, {"agentd.goal.pause", `{}`}}, cmd: run{"agentd.goal.resume", `{}`}, check: func(t *testing.T, w wire) {
		if s := get[string](t, w, "goal", "status"); s != "active" {
			t.Errorf("goal status %q, want active", s)
		}
	}},
	{name: "goal.resume refuses a spent budget", setup: []run{{"agentd.goal.create", withGoal}, {"agentd.goal.setBudget", `{"turns":1}`}, {"agentd.turn.begin", beginTurn}, {"agentd.step.begin", `{"turnId":"t1"}`}, {"agentd.step.end", `{"turnId":"t1","outputTokens":1,"finishReason":"stop"}`}, {"agentd.turn.end", `{"turnId":"t1","outcome":"completed"}`}},
		cmd: run{"agentd.goal.resume", `{}`}, wantCode: "goal.not_resumable"},

	{name: "goal.cancel", setup: []run{{"agentd.goal.create", withGoal}}, cmd: run{"agentd.goal.cancel", `{}`}, check: func(t *testing.T, w wire) {
		if o := get[string](t, w, "cancelled", "objective"); o != "port the parser" {
			t.Errorf("cancelled objective %q", o)
		}
		if g := get[any](t, w, "goal"); g != nil {
			t.Errorf("goal after cancel %v, want null", g)
		}
	}},
	{name: "goal.cancel refuses without a goal", cmd: run{"agentd.goal.cancel", `{}`}, wantCode: "goal.not_found"},

	{name: "undo", setup: []run{{"agentd.todo.set", setTodos}, {"agentd.goal.create", withGoal}, {"agentd.goal.cancel", `{}`}}, cmd: run{"agentd.undo", `{"scope":"todo"}`}, check: func(t *testing.T, w wire) {
		if items := get[[]any](t, w, "todos", "items"); len(items) != 0 {
			t.Errorf("list after undoing the only todo change: %v, want empty", items)
		}
		if k := get[string](t, w, "undone", "kind"); k != "todo.set" {
			t.Errorf("undone %q, want todo.set", k)
		}
		if g := get[any](t, w, "goal"); g != nil {
			t.Errorf("a todo undo touched the goal: %v", g)
		}
	}},
	{name: "undo refuses with nothing to undo", cmd: run{"agentd.undo", `{}`}, wantCode: "args.invalid"},
	{name: "undo refuses a change newer than expectedRevision", setup: []run{{"agentd.todo.set", setTodos}}, cmd: run{"agentd.undo", `{"expectedRevision":0}`}, wantCode: "todo.conflict"},
	{name: "undo refuses an unknown scope", setup: []run{{"agentd.todo.set", setTodos}}, cmd: run{"agentd.undo", `{"scope":"goals"}`}, wantCode: "args.invalid"},
	{name: "goal.setCheck", setup: []run{{"agentd.goal.create", withGoal}}, cmd: run{"agentd.goal.setCheck", `{"command":"  test -d .  "}`}, check: func(t *testing.T, w wire) {
		if c := get[string](t, w, "goal", "check", "command"); c != "test -d ." {
			t.Errorf("check command %q, want it trimmed: test -d .", c)
		}
		if !get[bool](t, w, "goal", "check", "approved") || get[string](t, w, "goal", "check", "setBy", "user") == "" || get[string](t, w, "goal", "check", "setBy", "host") == "" {
			t.Errorf("a check set by the person here is approved and names its setter: %v", w)
		}
	}},
	{name: "goal.approveCheck", setup: []run{{"agentd.goal.create", `{"objective":"o","check":"true"}`}}, cmd: run{"agentd.goal.approveCheck", `{"command":"true"}`}, check: func(t *testing.T, w wire) {
		if !get[bool](t, w, "goal", "check", "approved") {
			t.Errorf("check after approving: %v", w)
		}
	}},
	{name: "goal.approveCheck refuses another command than the goal's", setup: []run{{"agentd.goal.create", `{"objective":"o","check":"true"}`}}, cmd: run{"agentd.goal.approveCheck", `{"command":"true; touch x"}`}, wantCode: "goal.check_changed"},
	{name: "goal.setCheck refuses without a goal", cmd: run{"agentd.goal.setCheck", `{"command":"true"}`}, wantCode: "goal.not_found"},
	{name: "goal.setCheck refuses arguments without command", setup: []run{{"agentd.goal.create", `{"objective":"o","check":"true"}`}}, cmd: run{"agentd.goal.setCheck", `{}`}, wantCode: "args.invalid"},

	{name: "goal.runCheck", setup: []run{{"agentd.goal.create", `{"objective":"o","check":"echo checked; exit 4"}`}}, cmd: run{"agentd.goal.runCheck", `{}`}, check: func(t *testing.T, w wire) {
		if code := get[int](t, w, "run", "exitCode"); code != 4 {
			t.Errorf("exit code %d, want 4", code)
		}
		if tail := get[string](t, w, "run", "outputTail"); tail != "checked\n" {
			t.Errorf("output tail %q", tail)
		}
		if get[bool](t, w, "passed") || get[string](t, w, "goal", "status") != "active" {
			t.Errorf("a failed check on demand: %v", w)
		}
		if code := get[int](t, w, "goal", "check", "lastRun", "exitCode"); code != 4 {
			t.Errorf("lastRun exit code %d, want 4", code)
		}
	}},
	{name: "goal.runCheck refuses a goal without a check", setup: []run{{"agentd.goal.create", withGoal}}, cmd: run{"agentd.goal.runCheck", `{}`}, wantCode: "goal.no_check"},

	{name: "goal.setBudget", setup: []run{{"agentd.goal.create", withGoal}}, cmd: run{"agentd.goal.setBudget", `{"turns":5,"tokens":null}`}, check: func(t *testing.T, w wire) {
		if b := get[int64](t, w, "goal", "budget", "turnBudget"); b != 5 {
			t.Errorf("turn budget %d, want 5", b)
		}
	}},
	{name: "goal.setBudget refuses a budget of 0", setup: []run{{"agentd.goal.create", withGoal}}, cmd: run{"agentd.goal.setBudget", `{"turns":0}`}, wantCode: "goal.budget_invalid"},

	{name: "goal.queue.add", cmd: run{"agentd.goal.queue.add", `{"objective":" then docs ","completionCriterion":"docs build","check":"make docs"}`}, check: func(t *testing.T, w wire) {
		items := get[[]map[string]any](t, w, "queue", "items")
		if len(items) != 1 || items[0]["objective"] != "then docs" || items[0]["check"] != "make docs" || items[0]["completionCriterion"] != "docs build" || items[0]["id"] == "" {
			t.Errorf("queue items: %v", items)
		}
		if !get[bool](t, w, "queue", "autoAdvance") {
			t.Errorf("auto-advance is off by default")
		}
	}},
	{name: "goal.queue.add with budgets", cmd: run{"agentd.goal.queue.add", `{"objective":"next","turns":3,"tokens":null,"wallClockMs":60000}`}, check: func(t *testing.T, w wire) {
		items := get[[]map[string]any](t, w, "queue", "items")
		if len(items) != 1 || items[0]["turnBudget"] != 3.0 || items[0]["wallClockBudgetMs"] != 60000.0 || items[0]["tokenBudget"] != nil {
			t.Errorf("queue items: %v, want turnBudget 3, wallClockBudgetMs 60000, no tokenBudget", items)
		}
	}},
	{name: "goal.queue.add refuses a wall-clock budget under 1 second", cmd: run{"agentd.goal.queue.add", `{"objective":"o","wallClockMs":999}`}, wantCode: "goal.budget_invalid"},
	{name: "SetGoalBudget cannot raise a queued goal's budget after the advance", setup: []run{{"agentd.goal.create", withGoal}, {"agentd.goal.queue.add", `{"objective":"next","turns":3}`}, {"agentd.callTool", `{"name":"UpdateGoal","input":{"status":"complete"}}`}}, cmd: run{"agentd.callTool", `{"name":"SetGoalBudget","input":{"value":30,"unit":"turns"}}`}, check: func(t *testing.T, w wire) {
		if !get[bool](t, w, "isError") || get[string](t, w, "errorCode") != "goal.person_set" {
			t.Errorf("SetGoalBudget raising the queued goal's 3 turns = %v, want isError with goal.person_set", w)
		}
	}},
	{name: "goal.queue.add refuses a blank check", cmd: run{"agentd.goal.queue.add", `{"objective":"o","check":"  "}`}, wantCode: "args.invalid"},
	{name: "goal.queue.list", setup: []run{{"agentd.goal.queue.add", `{"objective":"a"}`}, {"agentd.goal.queue.add", `{"objective":"b"}`}}, cmd: run{"agentd.goal.queue.list", `{}`}, check: func(t *testing.T, w wire) {
		if got := objectivesOf(get[[]map[string]any](t, w, "queue", "items")); !cmp.Equal(got, []string{"a", "b"}) {
			t.Errorf("queue: %v", got)
		}
	}},
	{name: "goal.queue.list refuses an unknown field", cmd: run{"agentd.goal.queue.list", `{"bogus":1}`}, wantCode: "args.invalid"},
	{name: "goal.queue.remove", setup: []run{{"agentd.goal.queue.add", `{"objective":"a"}`}, {"agentd.goal.queue.add", `{"objective":"b"}`}}, cmd: run{"agentd.goal.queue.remove", `{"id":"$QUEUED0"}`}, check: func(t *testing.T, w wire) {
		if got := objectivesOf(get[[]map[string]any](t, w, "queue", "items")); !cmp.Equal(got, []string{"b"}) {
			t.Errorf("queue: %v", got)
		}
	}},
	{name: "goal.queue.remove refuses an unknown id", cmd: run{"agentd.goal.queue.remove", `{"id":"nope"}`}, wantCode: "args.invalid"},
	{name: "goal.queue.move", setup: []run{{"agentd.goal.queue.add", `{"objective":"a"}`}, {"agentd.goal.queue.add", `{"objective":"b"}`}}, cmd: run{"agentd.goal.queue.move", `{"id":"$QUEUED0","index":1}`}, check: func(t *testing.T, w wire) {
		if got := objectivesOf(get[[]map[string]any](t, w, "queue", "items")); !cmp.Equal(got, []string{"b", "a"}) {
			t.Errorf("queue: %v", got)
		}
	}},
	{name: "goal.queue.move refuses an index outside the queue", setup: []run{{"agentd.goal.queue.add", `{"objective":"a"}`}}, cmd: run{"agentd.goal.queue.move", `{"id":"$QUEUED0","index":1}`}, wantCode: "args.invalid"},
	{name: "goal.queue.setAutoAdvance", cmd: run{"agentd.goal.queue.setAutoAdvance", `{"on":false}`}, check: func(t *testing.T, w wire) {
		if get[bool](t, w, "queue", "autoAdvance") {
			t.Errorf("auto-advance is still on")
		}
	}},
	{name: "goal.queue.setAutoAdvance refuses a missing on", cmd: run{"agentd.goal.queue.setAutoAdvance", `{}`}, wantCode: "args.invalid"},

	{name: "turn.begin", setup: []run{{"agentd.goal.create", withGoal}}, cmd: run{"agentd.turn.begin", beginTurn}, check: func(t *testing.T, w wire) {
		if !get[bool](t, w, "goalDriven") {
			t.Errorf("a user turn under an active goal is not goal-driven: %v", w)
		}
	}},
	{name: "turn.begin refuses a missing turnId", cmd: run{"agentd.turn.begin", `{"origin":"user"}`}, wantCode: "args.invalid"},

	{name: "step.begin injects the goal reminder", setup: []run{{"agentd.goal.create", withGoal}, {"agentd.turn.begin", beginTurn}}, cmd: run{"agentd.step.begin", `{"turnId":"t1"}`}, check: func(t *testing.T, w wire) {
		var variants []string
		for _, inj := range get[[]struct{ Variant string }](t, w, "injections") {
			variants = append(variants, inj.Variant)
		}
		if diff := cmp.Diff([]string{"goal"}, variants); diff != "" {
			t.Errorf("injections (-want +got):\n%s", diff)
		}
	}},
	{name: "step.begin injects nothing without a goal", setup: []run{{"agentd.turn.begin", beginTurn}}, cmd: run{"agentd.step.begin", `{"turnId":"t1"}`}, check: func(t *testing.T, w wire) {
		if inj := get[[]any](t, w, "injections"); inj == nil || len(inj) != 0 {
			t.Errorf("injections %v, want []", inj)
		}
	}},
	{name: "step.begin refuses an unknown turn", cmd: run{"agentd.step.begin", `{"turnId":"nope"}`}, wantCode: "args.invalid"},

	{name: "step.end", setup: []run{{"agentd.goal.create", withGoal}, {"agentd.turn.begin", beginTurn}, {"agentd.step.begin", `{"turnId":"t1"}`}}, cmd: run{"agentd.step.end", `{"turnId":"t1","outputTokens":1200,"finishReason":"tool_calls"}`}, check: func(t *testing.T, w wire) {
		if get[bool](t, w, "stopTurn") || get[bool](t, w, "graceStep") {
			t.Errorf("a step within budget stops the turn: %v", w)
		}
	}},
	{name: "step.end refuses negative tokens", setup: []run{{"agentd.turn.begin", beginTurn}, {"agentd.step.begin", `{"turnId":"t1"}`}}, cmd: run{"agentd.step.end", `{"turnId":"t1","outputTokens":-1,"finishReason":"stop"}`}, wantCode: "args.invalid"},

	{name: "step.next", setup: []run{{"agentd.goal.create", withGoal}, {"agentd.turn.begin", beginTurn}, {"agentd.step.begin", `{"turnId":"t1"}`}}, cmd: run{"agentd.step.next", `{"turnId":"t1","outputTokens":1200,"finishReason":"tool_calls"}`}, check: func(t *testing.T, w wire) {
		if get[bool](t, w, "end", "stopTurn") || get[bool](t, w, "end", "graceStep") {
			t.Errorf("a step within budget stops the turn: %v", w)
		}
		if inj := get[[]any](t, w, "begin", "injections"); inj == nil {
			t.Errorf("no next step begun: %v", w)
		}
	}},
	{name: "step.next refuses a step that stops", setup: []run{{"agentd.turn.begin", beginTurn}, {"agentd.step.begin", `{"turnId":"t1"}`}}, cmd: run{"agentd.step.next", `{"turnId":"t1","outputTokens":1,"finishReason":"stop"}`}, wantCode: "args.invalid"},
	{name: "step.next refuses negative tokens", setup: []run{{"agentd.turn.begin", beginTurn}, {"agentd.step.begin", `{"turnId":"t1"}`}}, cmd: run{"agentd.step.next", `{"turnId":"t1","outputTokens":-1,"finishReason":"tool_calls"}`}, wantCode: "args.invalid"},

	{name: "turn.end continues an active goal", setup: []run{{"agentd.goal.create", withGoal}, {"agentd.turn.begin", beginTurn}, {"agentd.step.begin", `{"turnId":"t1"}`}, {"agentd.step.end", `{"turnId":"t1","outputTokens":10,"finishReason":"stop"}`}},
		cmd: run{"agentd.turn.end", `{"turnId":"t1","outcome":"completed"}`}, check: func(t *testing.T, w wire) {
			if v := get[string](t, w, "continuation", "variant"); v == "" {
				t.Errorf("no continuation variant: %v", w)
			}
			if n := get[int64](t, w, "goal", "turnsUsed"); n != 1 {
				t.Errorf("turnsUsed %d, want 1", n)
			}
		}},
	{name: "turn.end refuses an unknown turn", cmd: run{"agentd.turn.end", `{"turnId":"nope","outcome":"completed"}`}, wantCode: "args.invalid"},

	{name: "team.accept", teamFile: true, cmd: run{"agentd.team.accept", `{"sha256":"$TEAMSHA"}`}, check: func(t *testing.T, w wire) {
		if p, eps := get[string](t, w, "path"), get[[]string](t, w, "sendsTo"); p != ".agentd/team.json" || len(eps) != 1 || !get[bool](t, w, "reopened") {
			t.Errorf("team.accept answered %v", w)
		}
	}},
	{name: "team.accept refuses another file's hash", teamFile: true, cmd: run{"agentd.team.accept", `{"sha256":"` + strings.Repeat("0", 64) + `"}`}, wantCode: "args.invalid"},
	{name: "team.accept refuses a folder without a team file", cmd: run{"agentd.team.accept", `{"sha256":"` + strings.Repeat("0", 64) + `"}`}, wantCode: "args.invalid"},
	{name: "team.accept refuses a missing hash", teamFile: true, cmd: run{"agentd.team.accept", `{}`}, wantCode: "args.invalid"},
}

// TestHandlers runs every handler case on its own client and state
// directory.
func TestHandlers(t *testing.T) {
	for _, tc := range handlerCases {
		t.Run(tc.name, func(t *testing.T) {
			cl, root := newTestClient(t)
			if tc.teamFile {
				tc.cmd.args = strings.ReplaceAll(tc.cmd.args, "$TEAMSHA", pendingTeamFile(t, cl, root).SHA256)
			}
			for _, r := range tc.setup {
				if _, err := cl.Execute(context.Background(), r.id, json.RawMessage("["+r.args+"]")); err != nil {
					t.Fatalf("setup %s %s: %v", r.id, r.args, err)
				}
			}
			res, err := cl.Execute(context.Background(), tc.cmd.id, json.RawMessage("["+withQueuedID(t, cl, tc.cmd.args)+"]"))
			if tc.wantCode != "" {
				if code := protocol.ErrorCode(err); code != tc.wantCode {
					t.Fatalf("%s %s = %v, %v; want a refusal %s", tc.cmd.id, tc.cmd.args, res, err, tc.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s %s: %v", tc.cmd.id, tc.cmd.args, err)
			}
			raw, err := json.Marshal(res)
			if err != nil {
				t.Fatalf("result does not encode: %v", err)
			}
			var w wire
			if err := json.Unmarshal(raw, &w); err != nil {
				t.Fatalf("result is not a JSON object: %s", raw)
			}
			tc.check(t, w)
		})
	}
}

// pendingTeamFile writes a team file into the folder root of cl and
// returns what agentd.state says of it.
func pendingTeamFile(t *testing.T, cl *commands.Client, root string) *protocol.TeamFileNotice {
	t.Helper()
	if err := workspace.WriteTeam(root, workspace.Team{ID: workspace.NewTeamID(), Etcd: []string{"http://127.0.0.1:1"}}); err != nil {
		t.Fatal(err)
	}
	res, err := cl.Execute(context.Background(), "agentd.state", nil)
	if err != nil {
		t.Fatal(err)
	}
	tf := res.(protocol.State).TeamFile
	if tf == nil || tf.Status != workspace.TeamFilePending {
		t.Fatalf("agentd.state of a folder with a team file not accepted: teamFile %+v, want pending", tf)
	}
	return tf
}

// TestHandlersCoverEveryCommand: each command of the table has a success
// and a refusal among handlerCases, so a new command needs both.
func TestHandlersCoverEveryCommand(t *testing.T) {
	ok, refused := map[string]bool{}, map[string]bool{}
	for _, tc := range handlerCases {
		if tc.wantCode != "" {
			refused[tc.cmd.id] = true
		} else {
			ok[tc.cmd.id] = true
		}
	}
	var missing []string
	for _, id := range commands.IDs() {
		if !ok[id] {
			missing = append(missing, id+" (success)")
		}
		if !refused[id] {
			missing = append(missing, id+" (refusal)")
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("commands without a handler case: %v", missing)
	}
}

// withQueuedID replaces $QUEUED0 in args with the id of the first queued
// goal of the default session (ids are uuids, known only once queued).
func withQueuedID(t *testing.T, cl *commands.Client, args string) string {
	t.Helper()
	if !strings.Contains(args, "$QUEUED0") {
		return args
	}
	res, err := cl.Execute(context.Background(), "agentd.state", nil)
	if err != nil {
		t.Fatal(err)
	}
	st := res.(protocol.State)
	if len(st.Queue.Items) == 0 {
		t.Fatalf("%s names the first queued goal, but the queue is empty", args)
	}
	return strings.ReplaceAll(args, "$QUEUED0", st.Queue.Items[0].ID)
}

// objectivesOf lists the objectives of queue items as a client reads them.
func objectivesOf(items []map[string]any) []string {
	var out []string
	for _, it := range items {
		out = append(out, it["objective"].(string))
	}
	return out
}
