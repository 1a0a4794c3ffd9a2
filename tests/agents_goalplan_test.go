package tests

// Real Claude Code on a goal that requires its todo items
// (docs/runtime.md §2.12), offline, after `agentd setup`: a misbehaving
// scripted model tries again and again to complete the goal while an item
// of its list is open, and to clear the list to get there; every try is
// refused, naming the item; once the item is done, the goal completes.
// Skipped unless AGENTD_AGENTS is set (tests/agents/ci.sh).

import (
	"encoding/json"
	"strings"
	"testing"
)

// Marks of agentd's texts in the tool results the model gets.
const (
	markTodosOpen   = `Goal not complete: it requires its todo items, and 1 item of the list is not done: "write done.txt"`
	markDropRefused = `The todo list was not changed: the goal requires its todo items, and this list drops 1 item that is not done: "write done.txt"`
)

// TestRealClaudeCodeGoalWaitsForTodos: Claude Code's model writes one
// item through agentd's TodoList, calls UpdateGoal complete twice, clears
// the list, calls complete again (all refused), marks the item done and
// completes the goal. The goal completes once, by the model, after the
// item was done; on the code before the rule, the first complete did it.
func TestRealClaudeCodeGoalWaitsForTodos(t *testing.T) {
	a := newAgentEnv(t)
	const update, todos = "mcp__agentd__UpdateGoal", "mcp__agentd__TodoList"
	complete := map[string]any{"status": "complete"}
	list := func(status string) map[string]any {
		if status == "" {
			return map[string]any{"todos": []any{}}
		}
		return map[string]any{"todos": []map[string]any{{"title": "write done.txt", "status": status}}}
	}
	model := newScriptedModel(t, []reply{
		{tool: todos, input: list("in_progress"), tokens: 5},
		{tool: update, input: complete, tokens: 7},
		{tool: update, input: complete, tokens: 7},
		{tool: todos, input: list(""), tokens: 5},
		{tool: update, input: complete, tokens: 7},
		{tool: todos, input: list("done"), tokens: 5},
		{tool: update, input: complete, tokens: 7},
		{text: "The parser is shipped.", tokens: 5},
	})
	lc, claude := claudeRun(t, a, model, nil)
	if out, errOut, code := a.cli("goal", "create", "Ship the parser", "--workspace", a.ws); code != 0 {
		t.Fatalf("agentd goal create: %s%s", out, errOut)
	}
	if out := claude("Work on the goal."); !strings.Contains(out, "The parser is shipped.") {
		t.Errorf("claude -p output: %q, want the last turn's answer", out)
	}
	calls := model.calls()
	if len(calls) != 8 {
		t.Fatalf("%d model calls, want 8", len(calls))
	}
	for call, want := range map[int]string{2: markTodosOpen, 3: markTodosOpen, 4: markDropRefused, 5: markTodosOpen} {
		if got := newMessagesText(calls[call-1], calls[call]); !strings.Contains(got, want) {
			t.Errorf("what the model got after call %d lacks %q:\n%s", call, want, got)
		}
	}
	if got := newMessagesText(calls[6], calls[7]); !strings.Contains(got, "Goal marked complete") {
		t.Errorf("the last complete: the model got %q", got)
	}
	var st struct {
		Goal  *goalSnap `json:"goal"`
		Todos struct {
			Items []struct{ Title, Status string }
		} `json:"todos"`
	}
	lc.MustExec("agentd.state", nil, &st)
	if st.Goal == nil || st.Goal.Status != "complete" || st.Goal.LastActor != "model" || len(st.Todos.Items) != 1 || st.Todos.Items[0].Status != "done" {
		t.Errorf("state after the agent: goal %+v, todos %+v", st.Goal, st.Todos.Items)
	}
	if n := count(lc.historyKinds(), "goal.complete"); n != 1 {
		t.Errorf("the history holds %d goal.complete events, want 1: %v", n, lc.historyKinds())
	}
}

// newMessagesText is the text of the messages of the Messages API request
// body cur that the request before it, prev, did not have: what the agent
// sent the model after its last answer (its tool results, and any reminder
// the agent adds after them).
func newMessagesText(prev, cur string) string {
	var p, c anthropicRequest
	json.Unmarshal([]byte(prev), &p)
	json.Unmarshal([]byte(cur), &c)
	var b strings.Builder
	for i := len(p.Messages); i < len(c.Messages); i++ {
		one, _ := json.Marshal(map[string]any{"messages": []any{c.Messages[i]}})
		b.WriteString(lastMessageText(string(one)))
	}
	return b.String()
}
