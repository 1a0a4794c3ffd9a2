package hook

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGeminiTokensFromTranscript: Gemini CLI's output tokens come from its
// session transcript, as it writes it (issue 26): a model answer is a
// "gemini" record with tokens, counted once however often the record is
// written again (its tool calls added); the first BeforeModel of a step
// is its own call and one with the same request a retry, no boundary,
// while another request is the next call even when the agent dropped the
// answer before it (loop detection); a "gemini" record without tokens
// (history the agent makes up) is no model call. AfterModel,
// which Gemini CLI runs once per streamed chunk, costs nothing: no call to
// agentd, no cursor read or written.
func TestGeminiTokensFromTranscript(t *testing.T) {
	d := &fakeDaemon{t: t, answers: map[string]string{
		"agentd.turn.begin": `{"goalDriven":true,"goal":null}`,
		"agentd.step.begin": `{"injections":[]}`,
		"agentd.step.end":   `{"stopTurn":false,"graceStep":false,"injections":[]}`,
		"agentd.turn.end":   `{"continuation":null,"goal":null}`,
	}}
	state := t.TempDir()
	transcript := filepath.Join(t.TempDir(), "session-1.jsonl")
	opts := Options{Host: "gemini", Folder: t.TempDir(), StateDir: state, Dial: d.dial}
	at := 0
	ev := func(name, extra string) []string {
		at++
		_, calls := d.event(opts, fmt.Sprintf(`{"hook_event_name":%q,"session_id":"g1","cwd":"/","transcript_path":%q,"timestamp":"2026-12-01T09:00:%02d.000Z"%s}`, name, transcript, at, extra))
		return calls
	}
	answer := func(id string, tokens int) string {
		return fmt.Sprintf(`{"id":%q,"timestamp":"2026-12-01T09:00:00.000Z","type":"gemini","content":"","thoughts":[],"tokens":{"input":300,"output":%d,"cached":0,"thoughts":0,"tool":0,"total":%d},"model":"gemini-2.5-flash"}`, id, tokens, 300+tokens)
	}
	appendLine(t, transcript, `{"sessionId":"g1","projectHash":"p","startTime":"2026-12-01T09:00:00.000Z","kind":"main"}`)
	ev("BeforeAgent", `,"prompt":"Work."`)
	appendLine(t, transcript, `{"id":"u1","type":"user","content":[{"text":"Work."}]}`)
	if calls := ev("BeforeModel", `,"llm_request":{"messages":[]}`); len(calls) != 0 {
		t.Fatalf("the turn's first BeforeModel sent %v, want nothing: its step began with the turn", calls)
	}
	cursors, _ := filepath.Glob(filepath.Join(state, "hooks", "gemini-*.json"))
	if len(cursors) != 1 {
		t.Fatalf("cursors %v, want one", cursors)
	}
	before, _ := os.ReadFile(cursors[0])
	for range 40 { // streamed chunks, an older setup's AfterModel hook
		if calls := ev("AfterModel", `,"llm_request":{"messages":[]},"llm_response":{"candidates":[{"content":{"role":"model","parts":["x"]}}],"usageMetadata":{"candidatesTokenCount":7}}`); len(calls) != 0 {
			t.Fatalf("an AfterModel sent %v, want nothing", calls)
		}
	}
	if after, _ := os.ReadFile(cursors[0]); string(after) != string(before) {
		t.Errorf("AfterModel changed the cursor:\n%s\nthen\n%s", before, after)
	}
	// The call's answer, written again with its tool calls, and history
	// the agent made up.
	appendLine(t, transcript, answer("m1", 9))
	appendLine(t, transcript, strings.Replace(answer("m1", 9), `"model"`, `"toolCalls":[{"id":"c1","name":"read_file"}],"model"`, 1))
	appendLine(t, transcript, `{"id":"s1","type":"gemini","content":[{"text":"Binary content received."}],"tokens":null}`)
	second := `,"llm_request":{"messages":[{"role":"user","content":"Work."},{"role":"model","content":"read"}]}`
	calls := ev("BeforeModel", second)
	if got := commandsOf(calls); got != "agentd.step.end agentd.step.begin" || !strings.Contains(calls[0], `"outputTokens":9,`) {
		t.Fatalf("the second BeforeModel sent %v, want step.end with 9 tokens and step.begin", calls)
	}
	if calls := ev("BeforeModel", second); len(calls) != 0 {
		t.Errorf("a BeforeModel with the same request (a retry) sent %v, want nothing", calls)
	}
	// The second call's answer is dropped by the agent (its loop
	// detection): not in the transcript, but the third call is a step.
	calls = ev("BeforeModel", `,"llm_request":{"messages":[{"role":"user","content":"Work."},{"role":"model","content":"read"},{"role":"user","content":"System: loop"}]}`)
	if got := commandsOf(calls); got != "agentd.step.end agentd.step.begin" || !strings.Contains(calls[0], `"outputTokens":0,`) {
		t.Fatalf("the third BeforeModel sent %v, want step.end with 0 tokens and step.begin", calls)
	}
	appendLine(t, transcript, answer("m2", 13))
	appendLine(t, transcript, answer("m1", 9)) // an older message written again
	calls = ev("AfterAgent", `,"prompt":"Work.","prompt_response":"Done."`)
	if got := commandsOf(calls); got != "agentd.step.end agentd.turn.end" || !strings.Contains(calls[0], `"outputTokens":13,`) {
		t.Errorf("AfterAgent sent %v, want step.end with 13 tokens and turn.end", calls)
	}
}
