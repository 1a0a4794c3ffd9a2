package tests

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentd/agentd/tests/lsptest"
	"github.com/google/go-cmp/cmp"
)

type toolResult struct {
	Output      string `json:"output"`
	IsError     bool   `json:"isError"`
	ErrorCode   string `json:"errorCode"`
	Description string `json:"description"`
	StopTurn    bool   `json:"stopTurn"`
	StopBatch   bool   `json:"stopBatch"`
}

type item struct {
	Title  string `json:"title"`
	Status string `json:"status"`
}

type state struct {
	Workspace string `json:"workspace"`
	Session   string `json:"session"`
	Revision  uint64 `json:"revision"`
	Todos     struct {
		Items    []item `json:"items"`
		Revision uint64 `json:"revision"`
	} `json:"todos"`
	Goal json.RawMessage `json:"goal"`
}

func (c *client) tool(name string, input any) toolResult {
	c.T.Helper()
	var res toolResult
	c.MustExec("agentd.callTool", map[string]any{"name": name, "input": input}, &res)
	return res
}

func (c *client) state() state {
	c.T.Helper()
	var st state
	c.MustExec("agentd.state", nil, &st)
	return st
}

// TestTodoListModes drives the three TodoList modes of docs/runtime.md §1.
func TestTodoListModes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)

	if got := c.tool("TodoList", map[string]any{}); got.Output != "Todo list is empty." || got.IsError || got.Description != "Reading todo list" {
		t.Fatalf("read of an empty list = %+v", got)
	}
	got := c.tool("TodoList", map[string]any{"todos": []item{{"  write tests ", "in_progress"}, {"ship", "pending"}}})
	wantPrefix := "Todo list updated.\nCurrent todo list:\n  [in_progress] write tests\n  [pending] ship\n\n"
	if !strings.HasPrefix(got.Output, wantPrefix) || got.IsError || got.Description != "Updating todo list" {
		t.Fatalf("write = %+v, want output starting %q", got, wantPrefix)
	}
	reminder := strings.TrimPrefix(got.Output, wantPrefix)
	for _, phrase := range []string{"done as soon as", "exactly one item in_progress"} {
		if !strings.Contains(reminder, phrase) {
			t.Errorf("write reminder %q does not say %q", reminder, phrase)
		}
	}
	if got := c.tool("TodoList", nil); got.Output != "Current todo list:\n  [in_progress] write tests\n  [pending] ship" {
		t.Fatalf("read = %q", got.Output)
	}
	if got := c.tool("TodoList", map[string]any{"todos": []item{}}); got.Output != "Todo list cleared." || got.Description != "Clearing todo list" {
		t.Fatalf("clear = %+v", got)
	}
	if st := c.state(); len(st.Todos.Items) != 0 || st.Revision != 2 {
		t.Fatalf("state after clear = %+v, want empty list at revision 2", st)
	}
}

// TestTodoListRefusals: bad input is a model-facing refusal naming the
// problem, and nothing is stored (docs/runtime.md §1).
func TestTodoListRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	c.tool("TodoList", map[string]any{"todos": []item{{"keep me", "pending"}}})
	long := strings.Repeat("x", 501)
	many := make([]item, 201)
	for i := range many {
		many[i] = item{"t", "pending"}
	}
	tests := []struct {
		name  string
		input any
		want  []string
	}{
		{"completed is not a status", map[string]any{"todos": []item{{"a", "completed"}}}, []string{`"completed"`, "pending", "in_progress", "done"}},
		{"blank title", map[string]any{"todos": []item{{"   ", "pending"}}}, []string{"title"}},
		{"title over 500", map[string]any{"todos": []item{{long, "pending"}}}, []string{"500"}},
		{"over 200 items", map[string]any{"todos": many}, []string{"200"}},
		{"unknown top-level key", map[string]any{"todos": []item{}, "merge": true}, []string{`"merge"`}},
		{"unknown item key", map[string]any{"todos": []any{map[string]any{"title": "a", "status": "pending", "id": 1}}}, []string{`"id"`}},
		{"todos not an array", map[string]any{"todos": "a"}, []string{"todos", "array"}},
		{"a key differing only in case", map[string]any{"Todos": []item{}}, []string{`"Todos"`}},
		{"an item key differing only in case", map[string]any{"todos": []any{map[string]any{"title": "a", "status": "pending", "Status": "done"}}}, []string{`"Status"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := c.tool("TodoList", tt.input)
			if !got.IsError || got.ErrorCode != "todo.invalid" {
				t.Fatalf("got %+v, want isError with todo.invalid", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got.Output, w) {
					t.Errorf("output %q does not mention %s", got.Output, w)
				}
			}
		})
	}
	if st := c.state(); st.Revision != 1 || len(st.Todos.Items) != 1 {
		t.Fatalf("state after refusals = %+v, want the one item at revision 1", st)
	}
}

// TestTodoPersistsAcrossRestart: the list survives the daemon.
func TestTodoPersistsAcrossRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	c.tool("TodoList", map[string]any{"todos": []item{{"survive", "in_progress"}}})
	c.shutdown()

	c2 := e.start().connect()
	c2.Initialize(nil, e.ws)
	st := c2.state()
	if diff := cmp.Diff([]item{{"survive", "in_progress"}}, st.Todos.Items); diff != "" || st.Revision != 1 {
		t.Fatalf("after restart (-want +got):\n%s revision %d", diff, st.Revision)
	}
}

// TestTodoSetCompareAndSet: a person's edit with a stale revision is
// refused with the current state; nothing is overwritten.
func TestTodoSetCompareAndSet(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	var st state
	c.MustExec("agentd.todo.set", map[string]any{"items": []item{{"from panel", "pending"}}, "expectedRevision": 0}, &st)
	if st.Todos.Revision != 1 {
		t.Fatalf("todo.set revision = %d, want 1", st.Todos.Revision)
	}
	c.tool("TodoList", map[string]any{"todos": []item{{"from agent", "in_progress"}}})
	err := c.Exec("agentd.todo.set", map[string]any{"items": []item{{"stale edit", "done"}}, "expectedRevision": 1}, nil)
	re, ok := err.(*lsptest.Error)
	if !ok || re.Code != -32803 || string(re.DataField("code")) != `"todo.conflict"` {
		t.Fatalf("stale todo.set: got %v, want -32803 todo.conflict", err)
	}
	var cur state
	if err := json.Unmarshal(re.DataField("state"), &cur); err != nil || len(cur.Todos.Items) != 1 || cur.Todos.Items[0].Title != "from agent" || cur.Todos.Revision != 2 {
		t.Fatalf("conflict data.state = %s (%v), want the agent's list at revision 2", re.DataField("state"), err)
	}
	if st := c.state(); st.Todos.Items[0].Title != "from agent" {
		t.Fatalf("the stale edit overwrote the list: %+v", st)
	}
	c.MustExec("agentd.todo.set", map[string]any{"items": []item{{"from agent", "done"}}, "expectedRevision": 2}, &st)
	if st.Todos.Items[0].Status != "done" {
		t.Fatalf("todo.set with the current revision = %+v", st)
	}
}

// TestTodoChangedNotification: every change is pushed with the revision
// and actor, after initialized only (docs/protocol.md §4).
func TestTodoChangedNotification(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	c.tool("TodoList", map[string]any{"todos": []item{{"one", "pending"}}})
	c.MustExec("agentd.todo.set", map[string]any{"items": []item{{"one", "done"}}}, nil)
	var first, second struct {
		Workspace, Session, Actor string
		Revision                  uint64
		Items                     []item
	}
	json.Unmarshal(c.Await("agentd/todoChanged", revisionAtLeast(1)), &first)
	json.Unmarshal(c.Await("agentd/todoChanged", revisionAtLeast(2)), &second)
	if first.Actor != "model" || first.Revision != 1 || first.Session != "default" || first.Workspace != fileURI(e.ws) || first.Items[0].Title != "one" {
		t.Errorf("first todoChanged = %+v", first)
	}
	if second.Actor != "user" || second.Revision != 2 || second.Items[0].Status != "done" {
		t.Errorf("second todoChanged = %+v", second)
	}
	// A read changes nothing and sends nothing.
	c.tool("TodoList", nil)
	c.MustExec("agentd.state", nil, nil)
	if n := len(c.NotesOf("agentd/todoChanged")); n != 2 {
		t.Errorf("got %d todoChanged notifications, want 2", n)
	}
}

// TestCLIToolAndState: the shell commands work on the embedded default
// state from any directory.
func TestCLIToolAndState(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	out, errOut, code := e.cli("tool", "TodoList", `{"todos":[{"title":"from shell","status":"in_progress"}]}`, "--workspace", e.ws)
	if code != 0 || !strings.Contains(out, "[in_progress] from shell") {
		t.Fatalf("agentd tool: code %d out %q err %q", code, out, errOut)
	}
	out, _, code = e.cli("tool", "TodoList", `{"todos":[{"title":"x","status":"completed"}]}`, "--workspace", e.ws)
	if code != 1 || !strings.Contains(out, "completed") {
		t.Fatalf("agentd tool with a bad status: code %d out %q, want 1 and the reason", code, out)
	}
	out, _, code = e.cli("--workspace", e.ws, "state", "--json")
	var st state
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Todos.Items[0].Title != "from shell" {
		t.Fatalf("agentd state --json: code %d out %q", code, out)
	}
}
