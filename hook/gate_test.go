package hook

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGateLeavesTheCursor: the tool's gate (PreToolUse), which comes with
// nearly every model call, reads the cursor and leaves the file as it was
// in a turn no goal drives (no rewrite: issue 26's cost per event; a goal
// turn's gate records its call in flight, TestGateRecordsTheCallOnce),
// while a gate in a grace step
// still refuses the tool, every copy of it, and an event that changes the
// cursor still writes it.
func TestGateLeavesTheCursor(t *testing.T) {
	d := &fakeDaemon{t: t, answers: map[string]string{
		"agentd.turn.begin": `{"goalDriven":false,"goal":null}`,
		"agentd.step.begin": `{"injections":[]}`,
		"agentd.step.end":   `{"stopTurn":false,"graceStep":true,"injections":[{"variant":"goal_budget_stop","text":"budget spent"}]}`,
	}}
	state := t.TempDir()
	transcript := filepath.Join(t.TempDir(), "transcript.jsonl")
	opts := Options{Host: "claude", Folder: t.TempDir(), StateDir: state, Dial: d.dial}
	ev := func(body string) (string, []string) {
		return d.event(opts, fmt.Sprintf(`{"session_id":"c1","cwd":"/","transcript_path":%q,%s}`, transcript, body))
	}
	gate := func(id string) string {
		out, calls := ev(`"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{},"tool_use_id":"` + id + `"`)
		if len(calls) != 0 {
			t.Errorf("the gate sent %v, want nothing", calls)
		}
		return out
	}
	ev(`"hook_event_name":"UserPromptSubmit","prompt_id":"p1","prompt":"Work."`)
	cursors, _ := filepath.Glob(filepath.Join(state, "hooks", "claude-*.json"))
	if len(cursors) != 1 {
		t.Fatalf("cursors %v, want one", cursors)
	}
	before, err := os.Stat(cursors[0])
	if err != nil {
		t.Fatal(err)
	}
	if out := gate("t1"); out != "" {
		t.Errorf("the gate outside a grace step printed %q, want nothing", out)
	}
	if after, err := os.Stat(cursors[0]); err != nil || !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("the gate rewrote the cursor (%v)", err)
	}
	appendLine(t, transcript, `{"type":"assistant","message":{"id":"msg_1","content":[{"type":"tool_use"}],"usage":{"output_tokens":9}}}`)
	if _, calls := ev(`"hook_event_name":"PostToolBatch","tool_calls":[{"tool_use_id":"t1"}]`); commandsOf(calls) != "agentd.step.end agentd.step.begin" {
		t.Fatalf("the boundary sent %v", calls)
	}
	if after, _ := os.Stat(cursors[0]); os.SameFile(before, after) {
		t.Errorf("the boundary, which opened a grace step, did not write the cursor")
	}
	for range 2 { // the same gate twice: each copy is refused
		if out := gate("t2"); !strings.Contains(out, `"permissionDecision":"deny"`) {
			t.Errorf("the gate in a grace step printed %q, want a deny", out)
		}
	}
}
