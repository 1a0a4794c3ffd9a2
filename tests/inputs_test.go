package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd/agentd/tests/lsptest"
)

// Inputs as clients really send them (docs/protocol.md §3.1): Lua's
// empty tables, JSON that encoding/json would read loosely, names that are
// not UTF-8, task-file paths the file system cannot follow.

// TestInputEmptyTablesAreObjects: an empty Lua table arrives as [] where an
// object is expected; agentd reads it as {} in initializationOptions, its
// settings, workspace/didChangeConfiguration, command arguments and tool
// inputs.
func TestInputEmptyTablesAreObjects(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name         string
		initOptions  any
		capabilities any
		session      string
	}{
		{"initializationOptions []", []any{}, map[string]any{}, "default"},
		{"initializationOptions.settings []", map[string]any{"session": "lua", "settings": []any{}}, map[string]any{}, "lua"},
		{"capabilities.window []", nil, map[string]any{"window": []any{}}, "default"},
		{"didChangeConfiguration settings.agentd []", nil, map[string]any{}, "default"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			p := e.start().connect()
			m, err := p.Request("initialize", map[string]any{"processId": nil, "rootUri": fileURI(e.ws),
				"capabilities": tt.capabilities, "initializationOptions": tt.initOptions})
			if err != nil || m.Error != nil {
				t.Fatalf("initialize: %v %+v", err, m.Error)
			}
			p.SendBody(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
			// settings.agentd [] changes nothing and is no error; the bad
			// value after it is told, so a message about [] would come first.
			p.SendBody(`{"jsonrpc":"2.0","method":"workspace/didChangeConfiguration","params":{"settings":{"agentd":[]}}}`)
			p.SendBody(`{"jsonrpc":"2.0","method":"workspace/didChangeConfiguration","params":{"settings":{"agentd":{"todoReminderSteps":-1}}}}`)
			told := p.Await("window/showMessage", nil)
			if !strings.Contains(string(told), "todoReminderSteps") {
				t.Fatalf("first message = %s, want the one about todoReminderSteps (settings.agentd [] must not be refused)", told)
			}
			var res toolResult
			p.MustExec("agentd.callTool", json.RawMessage(`{"name":"TodoList","input":[]}`), &res)
			if res.IsError || res.Output != "Todo list is empty." {
				t.Fatalf("TodoList with input [] = %+v, want a read", res)
			}
			p.MustExec("agentd.callTool", json.RawMessage(`{"name":"GetGoal","input":[ ]}`), &res)
			if res.IsError || !strings.Contains(res.Output, `"goal": null`) {
				t.Fatalf("GetGoal with input [ ] = %+v", res)
			}
			var st state
			p.MustExec("agentd.state", json.RawMessage(`[]`), &st)
			if st.Session != tt.session {
				t.Fatalf("session = %q, want %q", st.Session, tt.session)
			}
		})
	}
}

// TestInputTodosNull: todos null is neither a read nor a clear, and a null
// item is no item: both are todo.invalid saying so, and nothing changes.
func TestInputTodosNull(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	c.tool("TodoList", map[string]any{"todos": []item{{"keep me", "pending"}}})
	for input, want := range map[string]string{
		`{"todos":null}`:   `TodoList input.todos must be an array, got null`,
		`{"todos":[null]}`: `TodoList input.todos[0] must be an object, got null`,
		`{"todos":[{"title":"a","status":"done"},null]}`: `TodoList input.todos[1] must be an object, got null`,
	} {
		got := c.tool("TodoList", json.RawMessage(input))
		if !got.IsError || got.ErrorCode != "todo.invalid" || !strings.Contains(got.Output, want) {
			t.Errorf("TodoList %s = %+v, want todo.invalid saying %q", input, got, want)
		}
	}
	if st := c.state(); st.Revision != 1 || len(st.Todos.Items) != 1 || st.Todos.Items[0].Title != "keep me" {
		t.Fatalf("state after the refusals = %+v, want the list of revision 1", st)
	}
}

// TestInputDuplicateKeys: a key given twice (which encoding/json would
// resolve silently to the last one) is refused, naming the key, in a tool
// input (a refusal the model reads) and in command arguments (-32602), and
// nothing changes.
func TestInputDuplicateKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pr := e.start()
	p := pr.connect()
	p.InitializeRoot(e.ws, nil)
	p.MustExec("agentd.goal.create", map[string]any{"objective": "dup keys"}, nil)
	tools := []struct{ input, code, want string }{
		{`{"name":"TodoList","input":{"todos":[{"title":"a","status":"pending"}],"todos":[]}}`, "todo.invalid", `TodoList input: key "todos" appears twice`},
		{`{"name":"TodoList","input":{"todos":[{"title":"a","title":"b","status":"pending"}]}}`, "todo.invalid", `TodoList input.todos[0]: key "title" appears twice`},
		{`{"name":"SetGoalBudget","input":{"value":5,"unit":"turns","value":50}}`, "args.invalid", `SetGoalBudget input: key "value" appears twice`},
		{`{"name":"UpdateGoal","input":{"status":"blocked","status":"complete"}}`, "args.invalid", `UpdateGoal input: key "status" appears twice`},
	}
	for _, tt := range tools {
		var res toolResult
		p.MustExec("agentd.callTool", json.RawMessage(tt.input), &res)
		if !res.IsError || res.ErrorCode != tt.code || !strings.Contains(res.Output, tt.want) {
			t.Errorf("callTool %s = %+v, want %s saying %q", tt.input, res, tt.code, tt.want)
		}
	}
	commands := []struct{ command, args, want string }{
		{"agentd.todo.set", `{"items":[{"title":"a","status":"pending"}],"items":[]}`, `key "items" appears twice`},
		{"agentd.goal.setBudget", `{"turns":5,"turns":null}`, `key "turns" appears twice`},
		{"agentd.state", `{"session":"a","session":"b"}`, `key "session" appears twice`},
	}
	for _, tt := range commands {
		err := p.Exec(tt.command, json.RawMessage(tt.args), nil)
		we, ok := err.(*lsptest.Error)
		if !ok || we.Code != -32602 || we.DataCode() != "args.invalid" || !strings.Contains(we.Message, tt.want) {
			t.Errorf("%s %s = %v, want -32602 args.invalid saying %q", tt.command, tt.args, err, tt.want)
		}
	}
	var st struct {
		Revision uint64
		Todos    struct{ Items []item }
		Goal     *goalSnap
	}
	p.MustExec("agentd.state", nil, &st)
	if st.Revision != 1 || len(st.Todos.Items) != 0 || st.Goal == nil || st.Goal.Status != "active" || st.Goal.Budget.TurnBudget != nil {
		t.Fatalf("state after the refusals = %+v, want the goal as created at revision 1", st)
	}
	// From a shell, the same refusal and exit code 1.
	p.Request("shutdown", nil)
	p.SendBody(`{"jsonrpc":"2.0","method":"exit"}`)
	pr.waitExit()
	out, _, code := e.cli("tool", "TodoList", `{"todos":[],"todos":[{"title":"x","status":"pending"}]}`, "--workspace", e.ws)
	if code != 1 || !strings.Contains(out, `key "todos" appears twice`) {
		t.Fatalf("agentd tool with a duplicate key: exit %d, %q", code, out)
	}
}

// TestInputSessionNotUTF8: session names that are not UTF-8 are refused,
// wherever they come from; before, Go's decoder turned every invalid byte
// into U+FFFD, so "\xff" and "\xfe" named one session.
func TestInputSessionNotUTF8(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// From a shell: --session with invalid bytes is refused.
	for _, args := range [][]string{
		{"tool", "TodoList", `{"todos":[{"title":"from a shell","status":"pending"}]}`, "--session", "\xff"},
		{"state", "--session", "\xfe"},
	} {
		_, errOut, code := e.cli(append(args, "--workspace", e.ws)...)
		if code != 1 || !strings.Contains(errOut, `"session" must be valid UTF-8`) {
			t.Errorf("agentd %s --session <invalid UTF-8>: exit %d, stderr %q", args[0], code, errOut)
		}
	}
	// initializationOptions.session: initialize fails and says why.
	pr := e.start()
	p := pr.connect()
	ch := p.Expect("1")
	p.SendBody("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"processId\":null,\"rootUri\":null,\"capabilities\":{},\"initializationOptions\":{\"session\":\"\xff\"}}}")
	m, err := p.Wait(ch, "initialize")
	if err != nil {
		t.Fatal(err)
	}
	if m.Error == nil || m.Error.Code != -32602 || !strings.Contains(m.Error.Message, "UTF-8") {
		t.Fatalf("initialize with session \\xff: error %+v, want -32602 about UTF-8", m.Error)
	}
	pr.Stdin.Close()
	pr.waitExit()
	// Command arguments: raw invalid bytes and lone surrogates.
	p = e.start().connect()
	p.InitializeRoot(e.ws, nil)
	for _, session := range []string{"\"\xff\"", "\"\xfe\"", `"\udc80"`, `"\udfff"`, "\"ok\xc3\""} {
		err := p.Exec("agentd.todo.set", json.RawMessage(`{"session":`+session+`,"items":[{"title":"t","status":"pending"}]}`), nil)
		we, ok := err.(*lsptest.Error)
		if !ok || we.Code != -32602 || we.DataCode() != "args.invalid" || !strings.Contains(we.Message, `"session" must be valid UTF-8`) {
			t.Errorf("todo.set with session %q = %v, want -32602 args.invalid about UTF-8", session, err)
		}
	}
	var list struct{ Sessions []struct{ Session string } }
	p.MustExec("agentd.sessions", nil, &list)
	if len(list.Sessions) != 0 {
		t.Fatalf("sessions after the refusals = %+v, want none", list.Sessions)
	}
}

// TestInputTaskFileErrorsHaveCodes: a task file path the file system
// cannot follow (a loop of symbolic links, a name too long, a file used as
// a folder) is refused with args.invalid like every other refusal, saying
// why, both from the user command and from CreateGoal.
func TestInputTaskFileErrorsHaveCodes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, link := range [][2]string{{"loop-b", "loop-a"}, {"loop-a", "loop-b"}} {
		if err := os.Symlink(link[0], filepath.Join(e.ws, link[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(e.ws, "notes.md"), []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	for path, why := range map[string]string{
		"loop-a/TASKS.md":                "a loop of symbolic links",
		"loop-b":                         "a loop of symbolic links",
		strings.Repeat("n", 300) + ".md": "too long",
		"notes.md/TASKS.md":              "a file, not a folder",
	} {
		err := c.Exec("agentd.goal.create", map[string]any{"objective": "x", "taskFile": path}, nil)
		re, ok := err.(*lsptest.Error)
		var code string
		if ok {
			json.Unmarshal(re.DataField("code"), &code)
		}
		if !ok || re.Code != -32602 || code != "args.invalid" || !strings.Contains(re.Message, why) {
			t.Errorf("goal.create with task file %.40s: %v (code %q), want -32602 args.invalid saying %q", path, err, code, why)
		}
		res := c.tool("CreateGoal", map[string]any{"objective": "x", "taskFile": path})
		if !res.IsError || res.ErrorCode != "args.invalid" || !strings.Contains(res.Output, why) {
			t.Errorf("CreateGoal with task file %.40s = %+v, want args.invalid saying %q", path, res, why)
		}
	}
	if g := c.goal(); g != nil {
		t.Fatalf("a goal was created: %+v", g)
	}
}

// TestInputInitializeParamsShapes: initialize params [] mean {} like
// everywhere else, and params of a wrong shape are -32602 naming the field
// in JSON words, never a Go type name.
func TestInputInitializeParamsShapes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.start().connect()
	m, err := p.Request("initialize", json.RawMessage(`[]`))
	if err != nil || m.Error != nil {
		t.Fatalf("initialize with params []: %v %+v", err, m.Error)
	}
	for _, tt := range []struct{ params, want string }{
		{`[1]`, "initialize params must be a JSON object, got an array"},
		{`{"rootUri":5}`, `initialize params: field "rootUri" must be a string, got number`},
	} {
		p := e.start().connect()
		m, err := p.Request("initialize", json.RawMessage(tt.params))
		if err != nil {
			t.Fatalf("initialize with params %s: %v", tt.params, err)
		}
		if m.Error == nil || m.Error.Code != -32602 || !strings.Contains(m.Error.Message, tt.want) || strings.Contains(m.Error.Message, "Go value") {
			t.Errorf("initialize with params %s: %+v, want -32602 containing %q", tt.params, m.Error, tt.want)
		}
	}
}
