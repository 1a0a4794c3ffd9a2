package goal

import (
	"strings"
	"testing"

	"github.com/agentd/agentd/commands/protocol"
	"github.com/google/go-cmp/cmp"
)

func items(spec ...string) []protocol.TodoItem {
	var out []protocol.TodoItem
	for _, s := range spec {
		title, status, _ := strings.Cut(s, ":")
		out = append(out, protocol.TodoItem{Title: title, Status: protocol.TodoStatus(status)})
	}
	return out
}

// completeWith runs the model's UpdateGoal complete with list as the
// session's todo list, as the service does (service/check.go), the check
// (when the goal has one) passing.
func (s *State) completeWith(t *testing.T, list []protocol.TodoItem, now Instant) ToolResult {
	t.Helper()
	call, err := NewCall(UpdateGoalTool, raw(`{"status":"complete"}`), "")
	mustNoErr(t, err)
	tc := ToolCall{Call: call, Todos: list}
	if !s.CompletionCheck(tc) {
		res, _ := s.CallTool(tc, now)
		return res
	}
	start, _, err := s.StartCheck(Model, "run-1", now)
	mustNoErr(t, err)
	run := CheckRun{ExitCode: 0}
	_, recorded := s.FinishCheck(start, run, now)
	res, _ := s.CompleteAfterCheck(tc, start, run, recorded, now)
	return res
}

// TestCompleteWaitsForRequiredItems: a goal requires its todo items by
// default; UpdateGoal complete is refused with goal.todos_open, naming the
// open items, as often as the model tries, and the goal stays active; once
// every item is done it completes (docs/runtime.md §2.12).
func TestCompleteWaitsForRequiredItems(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	if !s.Snapshot(c.now()).RequireTodos {
		t.Fatal("a new goal does not require its items; the default is to require them")
	}
	list := items("parse comments:done", "write the tests:in_progress", "update the docs:pending")
	for try := range 3 {
		res := s.completeWith(t, list, c.now())
		if !res.IsError || res.ErrorCode != CodeTodosOpen || res.StopTurn || res.StopBatch {
			t.Fatalf("try %d: got %+v, want a goal.todos_open refusal that does not stop the turn", try, res)
		}
		for _, want := range []string{`2 items of the list are not done: "write the tests", "update the docs"`, "mark it done with TodoList", "ask the user"} {
			if !strings.Contains(res.Output, want) {
				t.Errorf("refusal %q lacks %q", res.Output, want)
			}
		}
		if strings.Contains(res.Output, "parse comments") {
			t.Errorf("refusal names a done item: %q", res.Output)
		}
		if s.Goal.Status != Active {
			t.Fatalf("try %d: goal is %s, want active", try, s.Goal.Status)
		}
	}
	res := s.completeWith(t, items("parse comments:done", "write the tests:done", "update the docs:done"), c.now())
	if res.IsError || s.Goal.Status != Complete {
		t.Fatalf("all items done: got %+v and status %s, want complete", res, s.Goal.Status)
	}
}

// TestOpenItemsRefuseBeforeTheCheckRuns: with items open, a goal's check
// does not run; with them done, it does and decides.
func TestOpenItemsRefuseBeforeTheCheckRuns(t *testing.T) {
	c := newClock()
	s := withCheck(t, c, "go test ./...")
	call, err := NewCall(UpdateGoalTool, raw(`{"status":"complete"}`), "")
	mustNoErr(t, err)
	if s.CompletionCheck(ToolCall{Call: call, Todos: items("a:pending")}) {
		t.Error("the check would run with a required item open")
	}
	if !s.CompletionCheck(ToolCall{Call: call, Todos: items("a:done")}) {
		t.Error("the check would not run with every item done")
	}
	if res := s.completeWith(t, items("a:done"), c.now()); res.IsError || s.Goal.Status != Complete {
		t.Fatalf("got %+v, want complete", res)
	}
}

// TestPersonMayCreateAGoalThatDoesNotRequireItems: only a person's create
// turns the rule off; CreateGoal has no such field.
func TestPersonMayCreateAGoalThatDoesNotRequireItems(t *testing.T) {
	c := newClock()
	s := &State{}
	_, err := s.Create(CreateParams{Objective: "explore", TodosOptional: true}, c.now())
	mustNoErr(t, err)
	if s.Snapshot(c.now()).RequireTodos {
		t.Fatal("the person's goal requires its items")
	}
	if res := s.completeWith(t, items("a:pending"), c.now()); res.IsError || s.Goal.Status != Complete {
		t.Fatalf("got %+v, want complete with an item open", res)
	}
	res, _ := s.callTool(t, modelCall{Name: CreateGoalTool, Input: raw(`{"objective":"x","requireTodos":false}`)}, c.now())
	if !res.IsError || res.ErrorCode != CodeArgsInvalid {
		t.Fatalf("CreateGoal with requireTodos: got %+v, want args.invalid", res)
	}
	t2 := &State{}
	_, err = t2.create(CreateParams{Objective: "x", TodosOptional: true}, Model, "", c.now())
	mustNoErr(t, err)
	if !t2.Goal.RequiresTodos() {
		t.Error("a goal the model created does not require its items")
	}
}

// TestModelMayNotDropOpenItems: while the goal is unfinished and requires
// its items, the model's list write may not drop (or rename) an item that
// is not done, whatever the goal's status; done items may go, and nothing
// binds once the goal is complete or gone, or when it does not require
// its items (docs/runtime.md §2.12).
func TestModelMayNotDropOpenItems(t *testing.T) {
	before := items("a:done", "b:in_progress", "c:pending")
	tests := []struct {
		name    string
		setup   func(t *testing.T, s *State, c *clock)
		after   []protocol.TodoItem
		dropped string // "" when the write may go ahead
	}{
		{"clear the list", nil, nil, `"b", "c"`},
		{"drop one open item", nil, items("a:done", "b:done"), `"c"`},
		{"rename an open item", nil, items("a:done", "b:in_progress", "c (not needed):done"), `"c"`},
		{"drop a done item", nil, items("b:in_progress", "c:pending"), ""},
		{"mark done and keep", nil, items("a:done", "b:done", "c:done"), ""},
		{"reorder and add", nil, items("d:pending", "c:pending", "b:done", "a:done"), ""},
		{"complete goal", func(t *testing.T, s *State, c *clock) {
			if res := s.completeWith(t, nil, c.now()); res.IsError {
				t.Fatalf("complete: %+v", res)
			}
		}, nil, ""},
		{"paused goal", func(t *testing.T, s *State, c *clock) {
			_, err := s.Pause("", c.now())
			mustNoErr(t, err)
		}, nil, `"b", "c"`},
		{"model-blocked goal", func(t *testing.T, s *State, c *clock) {
			res, _ := s.callTool(t, updateCall("blocked", ""), c.now())
			if res.IsError {
				t.Fatalf("block: %+v", res)
			}
		}, nil, `"b", "c"`},
		{"no goal", func(t *testing.T, s *State, c *clock) {
			_, err := s.Cancel(c.now())
			mustNoErr(t, err)
		}, nil, ""},
		{"optional items", func(t *testing.T, s *State, c *clock) {
			s.Goal.TodosOptional = true
		}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			s := withGoal(t, c)
			if tt.setup != nil {
				tt.setup(t, s, c)
			}
			err := s.DroppedRequired(before, tt.after)
			if tt.dropped == "" {
				if err != nil {
					t.Fatalf("got %v, want no refusal", err)
				}
				return
			}
			if codeOf(err) != CodeTodosOpen || !strings.HasSuffix(err.Error(), "not done: "+tt.dropped) {
				t.Fatalf("got %v, want goal.todos_open naming %s", err, tt.dropped)
			}
		})
	}
}

// TestProgressFromThePlan: the snapshot's progress counts the list and
// the task file's checkboxes, and names at most MaxOpenItemsNamed open
// items.
func TestProgressFromThePlan(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	if p := s.Snapshot(c.now()).WithPlan(nil).Progress; p != nil {
		t.Errorf("no list, no task file: got %+v, want no progress", p)
	}
	s.Goal.TaskFile = &TaskFileInfo{Path: "TASKS.md", Exists: true, Checkboxes: &Checkboxes{Checked: 3, Total: 7}}
	got := s.Snapshot(c.now()).WithPlan(items("a:done", "b:pending", "c:in_progress")).Progress
	want := &Progress{Todos: &TodoProgress{Done: 1, Total: 3, Open: []string{"b", "c"}}, Checkboxes: &Checkboxes{Checked: 3, Total: 7}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	var long []protocol.TodoItem
	for range MaxOpenItemsNamed + 5 {
		long = append(long, protocol.TodoItem{Title: "x", Status: protocol.TodoPending})
	}
	p := s.Snapshot(c.now()).WithPlan(long).Progress.Todos
	if p.Total != MaxOpenItemsNamed+5 || len(p.Open) != MaxOpenItemsNamed {
		t.Errorf("got total %d and %d open named, want %d and %d", p.Total, len(p.Open), MaxOpenItemsNamed+5, MaxOpenItemsNamed)
	}
	if (*Snapshot)(nil).WithPlan(long) != nil {
		t.Error("WithPlan of no goal is not nil")
	}
}
