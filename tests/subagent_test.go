package tests

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// subagentList is a subagent's list as State and agentd/todoChanged carry
// it (docs/protocol.md §3).
type subagentList struct {
	Agent      string `json:"agent"`
	ParentItem string `json:"parentItem"`
	Items      []item `json:"items"`
}

// TestSubagentListKeepsTheParentsList drives the real binary through
// Claude Code's hook: the main agent's TodoWrite is the session's list; a
// Task subagent's TodoWrite (agent_id), sent twice at once as a model that
// repeats itself, becomes its own list linked to the main agent's item in
// progress, told to the editor, and the main list stays; the subagent's
// calls of agentd's TodoList over MCP get its id added to their input,
// and the main agent's that names an agent is refused; `agentd state` prints the subagent's list under its item
// (docs/runtime.md §1.3).
func TestSubagentListKeepsTheParentsList(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, editor := e.forwarder()
	editor.Initialize(nil, e.ws)
	transcript := filepath.Join(e.runDir, "transcript.jsonl")
	base := `"session_id":"s-1","transcript_path":"` + jsonText(transcript) + `","cwd":"` + jsonText(e.ws) + `"`
	send := func(copies int, event string) []string {
		outs := make([]string, copies)
		var wg sync.WaitGroup
		for k := range copies {
			wg.Go(func() {
				outs[k], _ = e.hook("claude", "{"+base+","+strings.ReplaceAll(event, "%[1]d", fmt.Sprint(k))+"}", "--workspace", e.ws)
			})
		}
		wg.Wait()
		return outs
	}
	send(1, `"hook_event_name":"UserPromptSubmit","prompt_id":"p1","prompt":"go"`)
	send(1, `"hook_event_name":"PostToolUse","tool_name":"TodoWrite","tool_use_id":"t1","tool_input":{"todos":[`+
		`{"content":"Write the parser","status":"in_progress","activeForm":"Writing"},{"content":"Document it","status":"pending","activeForm":"Documenting"}]},"tool_response":{}`)
	parent := []item{{"Write the parser", "in_progress"}, {"Document it", "pending"}}
	sub := `"agent_id":"agent-7","agent_type":"general-purpose"`
	send(2, `"hook_event_name":"PostToolUse",`+sub+`,"tool_name":"TodoWrite","tool_use_id":"t2-%[1]d","tool_input":{"todos":[`+
		`{"content":"Read the grammar","status":"completed","activeForm":"Reading"},{"content":"List the tokens","status":"in_progress","activeForm":"Listing"}]},"tool_response":{}`)
	mine := []item{{"Read the grammar", "done"}, {"List the tokens", "in_progress"}}
	var note struct {
		Items         []item         `json:"items"`
		Actor         string         `json:"actor"`
		SubagentLists []subagentList `json:"subagentLists"`
	}
	json.Unmarshal(editor.Await("agentd/todoChanged", func(raw json.RawMessage) bool {
		return strings.Contains(string(raw), `"subagentLists"`)
	}), &note)
	want := []subagentList{{Agent: "agent-7", ParentItem: "Write the parser", Items: mine}}
	if !cmp.Equal(note.Items, parent) || note.Actor != "model" || !cmp.Equal(note.SubagentLists, want) {
		t.Fatalf("agentd/todoChanged after the subagent's write: items %v, actor %s, subagent lists %+v; want %v, model, %+v", note.Items, note.Actor, note.SubagentLists, parent, want)
	}
	for _, out := range send(2, `"hook_event_name":"PreToolUse",`+sub+`,"tool_name":"mcp__agentd__TodoList","tool_use_id":"t3-%[1]d","tool_input":{"todos":[]}`) {
		if want := `"updatedInput":{"agent":"agent-7","todos":[]}`; !strings.Contains(out, want) {
			t.Fatalf("the subagent's call of agentd's TodoList: %q; want it let through with %s", out, want)
		}
	}
	// The main agent's model that names an agent in its call of agentd's
	// TodoList, to have it sent as that subagent's, is refused.
	for _, out := range send(1, `"hook_event_name":"PreToolUse","tool_name":"mcp__agentd__TodoList","tool_use_id":"t4","tool_input":{"agent":"agent-9","todos":[]}`) {
		if !strings.Contains(out, `"permissionDecision":"deny"`) || strings.Contains(out, "updatedInput") {
			t.Fatalf("the main agent's call of agentd's TodoList naming an agent: %q; want it refused", out)
		}
	}
	out, errOut, code := e.cli("state", "--workspace", e.ws, "--json")
	var st struct {
		Todos struct {
			Items         []item         `json:"items"`
			SubagentLists []subagentList `json:"subagentLists"`
		} `json:"todos"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
		t.Fatalf("agentd state --json: %d %s%s", code, out, errOut)
	}
	if !cmp.Equal(st.Todos.Items, parent) || !cmp.Equal(st.Todos.SubagentLists, want) {
		t.Fatalf("state: items %v, subagent lists %+v; want %v, %+v", st.Todos.Items, st.Todos.SubagentLists, parent, want)
	}
	out, errOut, code = e.cli("state", "--workspace", e.ws)
	nested := "  [in_progress] Write the parser\n    subagent agent-7:\n      [done] Read the grammar\n      [in_progress] List the tokens\n  [pending] Document it\n"
	if code != 0 || !strings.Contains(out, nested) {
		t.Fatalf("agentd state: %d\n%s%s\nwant the subagent's list nested:\n%s", code, out, errOut, nested)
	}
}
