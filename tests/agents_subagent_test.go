package tests

// Real Claude Code with a Task subagent that keeps a todo list of its own
// (docs/runtime.md §1.3), offline, after `agentd setup`. Skipped unless
// AGENTD_AGENTS is set (tests/agents/ci.sh).

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRealClaudeCodeSubagentList: the main agent's model writes its plan
// with agentd's TodoList and hands its item in progress to a subagent
// (Claude Code's Agent tool), whose model writes a list of its own with
// the same tool, twice in one response (a model that repeats itself in
// parallel), then again with one item done, and answers. The hook adds
// the subagent's id to its calls (docs/runtime.md §1.3): the session's list
// is the main agent's plan throughout, the subagent's list is nested under
// the item, and the editor was told of it.
func TestRealClaudeCodeSubagentList(t *testing.T) {
	a := newAgentEnv(t)
	const todoList, agentTool = "mcp__agentd__TodoList", "Agent"
	list := func(items ...item) map[string]any { return map[string]any{"todos": items} }
	plan := []item{{"Write the parser", "in_progress"}, {"Document it", "pending"}}
	mine := []item{{"Read the grammar", "in_progress"}, {"List the tokens", "pending"}}
	want := []item{{"Read the grammar", "done"}, {"List the tokens", "in_progress"}}
	model := newScriptedModel(t, []reply{
		{tool: todoList, input: list(plan...), tokens: 5},
		{tool: agentTool, input: map[string]any{"description": "Write the parser", "prompt": "Write the parser.", "subagent_type": "general-purpose", "run_in_background": false}, tokens: 5},
		// the subagent's calls
		{tool: todoList, input: list(mine...), tokens: 5, also: []reply{{tool: todoList, input: list(mine...)}}},
		{tool: todoList, input: list(want...), tokens: 5},
		{text: "The parser is written.", tokens: 5},
		// the main agent again
		{text: "Done: the parser is written.", tokens: 5},
	})
	lc, claude := claudeRun(t, a, model, []string{agentTool})
	out := claude("Write the parser.")
	calls := model.calls()
	if len(calls) < 6 {
		t.Fatalf("%d model calls, want 6; claude -p said %q", len(calls), out)
	}
	if got := newMessagesText(calls[2], calls[3]); !strings.Contains(got, "Todo list updated.") || strings.Contains(got, "Write the parser") {
		t.Errorf("the subagent's TodoList calls answered:\n%s\nwant its own list, without the main agent's", got)
	}
	var st struct {
		Todos struct {
			Items         []item         `json:"items"`
			SubagentLists []subagentList `json:"subagentLists"`
		} `json:"todos"`
	}
	lc.MustExec("agentd.state", nil, &st)
	if !cmp.Equal(st.Todos.Items, plan) {
		t.Errorf("the session's list after the subagent: %v, want the main agent's plan %v", st.Todos.Items, plan)
	}
	if len(st.Todos.SubagentLists) != 1 || st.Todos.SubagentLists[0].ParentItem != "Write the parser" || !cmp.Equal(st.Todos.SubagentLists[0].Items, want) || st.Todos.SubagentLists[0].Agent == "" {
		t.Errorf("subagent lists %+v, want one, under %q, holding %v", st.Todos.SubagentLists, "Write the parser", want)
	}
	lc.Await("agentd/todoChanged", func(raw json.RawMessage) bool {
		return strings.Contains(string(raw), `"List the tokens","status":"in_progress"`)
	})
	if kinds := lc.historyKinds(); count(kinds, "todo.subagentWrite") != 3 || count(kinds, "todo.write") != 1 {
		t.Errorf("history %v, want the main agent's todo.write and the subagent's three todo.subagentWrite", kinds)
	}
}
