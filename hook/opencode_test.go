package hook

import (
	"fmt"
	"strings"
	"testing"
)

// opencodeEvent is one event of agentd's opencode plugin in session o1,
// with the session's responses so far (ids a1, a2, ..., tokens 9+2n).
func opencodeEvent(name string, responses int, extra string) string {
	var ms []string
	for n := 1; n <= responses; n++ {
		ms = append(ms, fmt.Sprintf(`{"id":"a%d","outputTokens":%d}`, n, 9+2*n))
	}
	return fmt.Sprintf(`{"event":%q,"session_id":"o1","cwd":"/","messages":[%s]%s}`, name, strings.Join(ms, ","), extra)
}

// TestOpencodeTurns: the plugin's events make agentd's turns: a prompt
// begins one, a model call after a new response is a step boundary that
// counts that response's tokens once, an idle ends the turn with the last
// response's tokens and answers the continuation, which the continuation's
// own prompt begins. A model that answers "Done." every time makes equal
// idle events but for the response they follow: each ends its own turn,
// and the same idle again gets its first answer and counts nothing.
func TestOpencodeTurns(t *testing.T) {
	d := continuing(t)
	opts := Options{Host: "opencode", Folder: t.TempDir(), StateDir: t.TempDir(), Dial: d.dial}
	if _, calls := d.event(opts, opencodeEvent("prompt", 0, `,"id":"u1"`)); commandsOf(calls) != "agentd.turn.begin agentd.step.begin" || !strings.Contains(calls[0], `"origin":"user"`) {
		t.Fatalf("the prompt sent %v", calls)
	}
	if out, calls := d.event(opts, opencodeEvent("model", 0, "")); len(calls) != 0 || out != "" {
		t.Errorf("the turn's first model call sent %v and printed %q, want nothing: the prompt began its step", calls, out)
	}
	if _, calls := d.event(opts, opencodeEvent("model", 1, "")); commandsOf(calls) != "agentd.step.end agentd.step.begin" || !strings.Contains(calls[0], `"outputTokens":11`) {
		t.Errorf("the model call after a response sent %v, want its 11 tokens at a step boundary", calls)
	}
	if _, calls := d.event(opts, opencodeEvent("model", 1, "")); len(calls) != 0 {
		t.Errorf("a model call with no new response (a retry) sent %v", calls)
	}
	out, calls := d.event(opts, opencodeEvent("idle", 2, ""))
	if commandsOf(calls) != "agentd.step.end agentd.turn.end" || !strings.Contains(calls[0], `"outputTokens":13`) || out != `{"prompt":"go on"}`+"\n" {
		t.Fatalf("the idle sent %v and printed %q, want the turn ended with 13 tokens and the continuation", calls, out)
	}
	if again, calls := d.event(opts, opencodeEvent("idle", 2, "")); len(calls) != 0 || again != out {
		t.Errorf("the same idle again sent %v and printed %q, want nothing sent and %q", calls, again, out)
	}
	if _, calls := d.event(opts, opencodeEvent("prompt", 2, `,"id":"u2"`)); commandsOf(calls) != "agentd.turn.begin agentd.step.begin" || !strings.Contains(calls[0], `"origin":"continuation"`) {
		t.Errorf("the continuation's prompt sent %v", calls)
	}
	if _, calls := d.event(opts, opencodeEvent("idle", 3, "")); commandsOf(calls) != "agentd.step.end agentd.turn.end" || !strings.Contains(calls[0], `"outputTokens":15`) {
		t.Errorf("the second idle with the same words sent %v, want its own turn end with 15 tokens", calls)
	}
}

// TestOpencodeRunCannotContinue: `opencode run` ends at its first idle, so
// the plugin says so (one_shot) and gets no continuation, and the next
// prompt begins a turn of the user's, not a continuation.
func TestOpencodeRunCannotContinue(t *testing.T) {
	d := continuing(t)
	opts := Options{Host: "opencode", Folder: t.TempDir(), StateDir: t.TempDir(), Dial: d.dial}
	d.event(opts, opencodeEvent("prompt", 0, `,"id":"u1"`))
	if out, calls := d.event(opts, opencodeEvent("idle", 1, `,"one_shot":true`)); commandsOf(calls) != "agentd.step.end agentd.turn.end" || out != "" {
		t.Errorf("the idle of opencode run sent %v and printed %q, want the turn ended and no continuation", calls, out)
	}
	if _, calls := d.event(opts, opencodeEvent("prompt", 1, `,"id":"u2"`)); len(calls) == 0 || !strings.Contains(calls[0], `"origin":"user"`) {
		t.Errorf("the next run's prompt sent %v, want a user turn", calls)
	}
}

// TestOpencodeParse: opencode's names map to agentd's: its MCP tools
// (agentd_CreateGoal), a subagent's session (parent_id), todowrite's
// list, and the person's abort, which ends the turn as cancelled.
func TestOpencodeParse(t *testing.T) {
	ev, err := opencode{}.parse([]byte(`{"event":"tool","session_id":"child","parent_id":"o1","id":"c1","tool":"agentd_CreateGoal"}`))
	if err != nil || ev.kind != kindGate || ev.session != "o1" || ev.subagent != "child" || agentdTool(ev.tool) != "CreateGoal" {
		t.Errorf("a subagent's tool event: %+v, %v", ev, err)
	}
	ev, err = opencode{}.parse([]byte(`{"event":"todos","session_id":"o1","todos":[{"content":"read","status":"in_progress"},{"content":"ship","status":"cancelled"}]}`))
	if err != nil || ev.kind != kindTodos || fmt.Sprint(ev.todos) != "[{read in_progress} {ship done}]" {
		t.Errorf("todowrite: %+v, %v", ev, err)
	}
	ev, err = opencode{}.parse([]byte(`{"event":"error","session_id":"o1","error":{"name":"MessageAbortedError","message":"aborted"}}`))
	if err != nil || ev.kind != kindEnd {
		t.Errorf("an abort: %+v, %v", ev, err)
	}
	ev, err = opencode{}.parse([]byte(`{"event":"error","session_id":"o1","error":{"name":"ProviderAuthError","message":"bad key"}}`))
	if err != nil || ev.kind != kindFailure || ev.errKind != "auth" || ev.errMsg != "bad key" {
		t.Errorf("an auth error: %+v, %v", ev, err)
	}
	for _, bad := range []string{`{"session_id":"o1"}`, `[]`, `{"event":"idle","messages":{}}`} {
		if _, err := (opencode{}).parse([]byte(bad)); err == nil {
			t.Errorf("%s was accepted", bad)
		}
	}
}
