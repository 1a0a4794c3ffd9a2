package hook

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// shellSession plays Claude Code events of one session, tools included, through Run
// against d, with a transcript the test writes.
type shellSession struct {
	t          *testing.T
	d          *fakeDaemon
	opts       Options
	transcript string
}

func newShellSession(t *testing.T, d *fakeDaemon) *shellSession {
	return &shellSession{t: t, d: d, opts: Options{Host: "claude", Folder: t.TempDir(), StateDir: t.TempDir(), Dial: d.dial},
		transcript: filepath.Join(t.TempDir(), "transcript.jsonl")}
}

// ev sends one event (its fields after the common ones) and returns its
// output and the command names it sent.
func (s *shellSession) ev(body string) (string, string) {
	s.t.Helper()
	out, calls := s.d.event(s.opts, fmt.Sprintf(`{"session_id":"c1","cwd":"/","transcript_path":%q,%s}`, s.transcript, body))
	return out, commandsOf(calls)
}

func (s *shellSession) prompt(id string) (string, string) {
	return s.ev(`"hook_event_name":"UserPromptSubmit","prompt_id":"` + id + `","prompt":"Work."`)
}
func (s *shellSession) gate(id string) (string, string) {
	return s.ev(`"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"x"},"tool_use_id":"` + id + `"`)
}

// batch writes the model message that asked for the tools and sends
// their PostToolBatch.
func (s *shellSession) batch(msg string, ids ...string) (string, string) {
	appendLine(s.t, s.transcript, `{"type":"assistant","message":{"id":"`+msg+`","content":[{"type":"tool_use"}],"usage":{"output_tokens":7}}}`)
	var calls []string
	for _, id := range ids {
		calls = append(calls, `{"tool_use_id":"`+id+`"}`)
	}
	return s.ev(`"hook_event_name":"PostToolBatch","tool_calls":[` + strings.Join(calls, ",") + `]`)
}

// stop writes the model's closing message and sends its Stop.
func (s *shellSession) stop(msg, text string) (string, string) {
	appendLine(s.t, s.transcript, `{"type":"assistant","message":{"id":"`+msg+`","content":[{"type":"text","text":"`+text+`"}],"usage":{"output_tokens":3}}}`)
	return s.ev(`"hook_event_name":"Stop","prompt_id":"p1","last_assistant_message":"` + text + `"`)
}

func (s *shellSession) sessionEnd() (string, string) {
	return s.ev(`"hook_event_name":"SessionEnd","reason":"other"`)
}

// lastTurnEnd is the outcome of the last agentd.turn.end d got.
func lastTurnEnd(d *fakeDaemon) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := len(d.calls) - 1; i >= 0; i-- {
		if rest, ok := strings.CutPrefix(d.calls[i], "agentd.turn.end "); ok {
			return rest
		}
	}
	return ""
}

// goalDaemon is a daemon whose turns a goal drives and whose turn ends
// give no continuation.
func goalDaemon(t *testing.T) *fakeDaemon {
	return &fakeDaemon{t: t, answers: map[string]string{
		"agentd.turn.begin": `{"goalDriven":true,"goal":null}`,
		"agentd.step.begin": `{"injections":[]}`,
		"agentd.step.end":   `{"stopTurn":false,"graceStep":false,"injections":[]}`,
		"agentd.turn.end":   `{"continuation":null,"goal":{"status":"paused","terminalReason":"paused after the user interrupted the turn"}}`,
	}}
}

// TestShellEventWhileToolRunsIsRefused: the model's Bash tool runs
// agentd-hook with a SessionEnd, a prompt or a StopFailure it wrote (docs/security.md,
// "The agent's shell cannot end a goal's turn"). It comes while the tool
// call is in flight (its PreToolUse passed, no PostToolBatch yet), so the
// goal's turn is not ended and no turn is begun; when the tool's batch
// ends, the agent kept working: the step boundary is counted as usual and
// the model is told the event was refused; the Stop ends the turn
// completed, and the hook's log says what it refused. A copy of the event sent again is held again, not answered
// from the cursor.
func TestShellEventWhileToolRunsIsRefused(t *testing.T) {
	for name, forged := range map[string]func(s *shellSession) (string, string){
		"SessionEnd":       (*shellSession).sessionEnd,
		"UserPromptSubmit": func(s *shellSession) (string, string) { return s.prompt("forged") },
		"StopFailure": func(s *shellSession) (string, string) {
			return s.ev(`"hook_event_name":"StopFailure","error":"rate_limit","error_details":"429"`)
		},
	} {
		t.Run(name, func(t *testing.T) {
			d := goalDaemon(t)
			s := newShellSession(t, d)
			var log bytes.Buffer
			s.opts.Logger = slog.New(slog.NewTextHandler(&log, nil))
			s.prompt("p1")
			s.gate("t1")
			for range 2 {
				if out, calls := forged(s); out != "" || calls != "" {
					t.Fatalf("the %s from the tool's shell printed %q and sent %q, want nothing", name, out, calls)
				}
			}
			out, calls := s.batch("msg_1", "t1")
			if calls != "agentd.step.end agentd.step.begin" {
				t.Errorf("the tool's batch sent %q, want the step boundary", calls)
			}
			if want := "a hook event (" + name + ") was sent from this agent's own shell while your tool ran; agentd refused it"; !strings.Contains(out, want) {
				t.Errorf("the batch told the model %s, want %q", out, want)
			}
			if want := `msg="refused a hook event from the agent's own shell: it came while a tool ran, and the agent went on working after it; the goal's turn goes on and counts" event=` + name; !strings.Contains(log.String(), want) {
				t.Errorf("the log says\n%s\nwant %s", log.String(), want)
			}
			if _, calls := s.stop("msg_2", "Done."); calls != "agentd.step.end agentd.turn.end" {
				t.Errorf("the stop sent %q", calls)
			}
			if got := lastTurnEnd(d); !strings.Contains(got, `"outcome":"completed"`) {
				t.Errorf("the turn ended %s, want completed", got)
			}
		})
	}
}

// TestPersonInterruptsARunningTool: the person presses Esc while a tool
// runs (Claude Code reports no end of that tool) and types a new prompt.
// The prompt comes with the call still in flight to the cursor, so it is
// held; the new prompt's tools are other calls, which settle nothing, and
// when the agent stops, the turn ends cancelled: the goal pauses, as for
// any interrupt of the person's, with no continuation.
func TestPersonInterruptsARunningTool(t *testing.T) {
	d := goalDaemon(t)
	s := newShellSession(t, d)
	s.prompt("p1")
	s.gate("t1")
	if _, calls := s.prompt("p2"); calls != "" {
		t.Fatalf("the prompt after the interrupted tool sent %q, want it held", calls)
	}
	s.gate("t2")
	if out, _ := s.batch("msg_1", "t2"); strings.Contains(out, "refused") {
		t.Errorf("the new prompt's batch said %s, want no refusal", out)
	}
	if out, calls := s.stop("msg_2", "Done."); out != "" || calls != "agentd.step.end agentd.turn.end" {
		t.Errorf("the stop printed %q and sent %q", out, calls)
	}
	if got := lastTurnEnd(d); !strings.Contains(got, `"outcome":"cancelled"`) {
		t.Errorf("the turn ended %s, want cancelled (the person's interrupt)", got)
	}
	// The session goes on as before: the next prompt begins a turn.
	if _, calls := s.prompt("p3"); calls != "agentd.turn.begin agentd.step.begin" {
		t.Errorf("the next prompt sent %q", calls)
	}
}

// TestShellEndBetweenToolsStopsTheAgent: a process the model's shell left
// running sends a SessionEnd between tool calls, when none is in flight.
// It ends the goal's turn as any end does (the goal pauses), but the agent
// works on: its next tool is refused unexecuted and its next batch stops
// it, since a real end or interrupt leaves no tool call behind. The
// person's next prompt begins a turn as usual and the tools run again.
func TestShellEndBetweenToolsStopsTheAgent(t *testing.T) {
	d := goalDaemon(t)
	s := newShellSession(t, d)
	s.prompt("p1")
	s.gate("t1")
	s.batch("msg_1", "t1")
	if _, calls := s.sessionEnd(); calls != "agentd.step.end agentd.turn.end" {
		t.Fatalf("the SessionEnd between tools sent %q, want the turn ended", calls)
	}
	if out, calls := s.gate("t2"); calls != "" || !strings.Contains(out, `"permissionDecision":"deny"`) || !strings.Contains(out, "a hook event (SessionEnd) sent from this agent's own shell") {
		t.Errorf("the tool after the SessionEnd printed %s and sent %q, want it refused", out, calls)
	}
	if out, calls := s.batch("msg_2", "t2"); calls != "" || !strings.Contains(out, `"continue":false`) {
		t.Errorf("the batch after the SessionEnd printed %s and sent %q, want the agent stopped", out, calls)
	}
	if _, calls := s.prompt("p2"); calls != "agentd.turn.begin agentd.step.begin" {
		t.Errorf("the person's prompt sent %q, want a turn begun", calls)
	}
	if out, _ := s.gate("t3"); out != "" {
		t.Errorf("a tool of the person's new turn printed %s, want it run", out)
	}
}

// TestRealEndsStillEnd: with no tool in flight, a SessionEnd or a prompt
// ends the goal's turn cancelled at once, as before; a gate of a turn no
// goal drives records nothing, so a SessionEnd in the middle of its tool
// ends it too (it has no budget to leave).
func TestRealEndsStillEnd(t *testing.T) {
	d := goalDaemon(t)
	s := newShellSession(t, d)
	s.prompt("p1")
	if _, calls := s.prompt("p2"); calls != "agentd.step.end agentd.turn.end agentd.turn.begin agentd.step.begin" {
		t.Errorf("a prompt while the model answered sent %q, want the turn cancelled and a new one", calls)
	}
	if _, calls := s.sessionEnd(); calls != "agentd.step.end agentd.turn.end" {
		t.Errorf("a SessionEnd while the model answered sent %q", calls)
	}
	if got := lastTurnEnd(d); !strings.Contains(got, `"outcome":"cancelled"`) {
		t.Errorf("the SessionEnd ended the turn %s, want cancelled", got)
	}

	plain := goalDaemon(t)
	plain.answers["agentd.turn.begin"] = `{"goalDriven":false,"goal":null}`
	s = newShellSession(t, plain)
	s.prompt("p1")
	s.gate("t1")
	if _, calls := s.sessionEnd(); calls != "agentd.step.end agentd.turn.end" {
		t.Errorf("a SessionEnd in a tool of a turn no goal drives sent %q, want it ended", calls)
	}
}

// TestCodexInterruptWhileToolRuns: Codex's PreToolUse and PostToolUse
// name the call (tool_use_id). An Interrupt that comes while the call runs
// is held; the call's PostToolUse proves the agent went on, so it was the
// shell's and the model is told; an Interrupt while another call of the
// same response still runs is held too.
func TestCodexInterruptWhileToolRuns(t *testing.T) {
	d := goalDaemon(t)
	opts := Options{Host: "codex", Folder: t.TempDir(), StateDir: t.TempDir(), Dial: d.dial}
	rollout := filepath.Join(t.TempDir(), "rollout.jsonl")
	if err := os.WriteFile(rollout, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ev := func(body string) (string, string) {
		out, calls := d.event(opts, fmt.Sprintf(`{"session_id":"x1","turn_id":"u1","cwd":"/","transcript_path":%q,%s}`, rollout, body))
		return out, commandsOf(calls)
	}
	ev(`"hook_event_name":"UserPromptSubmit","prompt":"Work."`)
	ev(`"hook_event_name":"PreToolUse","tool_name":"exec_command","tool_use_id":"call_1","tool_input":{}`)
	ev(`"hook_event_name":"PreToolUse","tool_name":"exec_command","tool_use_id":"call_2","tool_input":{}`)
	if out, calls := ev(`"hook_event_name":"Interrupt"`); out != "" || calls != "" {
		t.Fatalf("the Interrupt from the tool's shell printed %q and sent %q, want nothing", out, calls)
	}
	appendLine(t, rollout, `{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"call_1"}}`)
	appendLine(t, rollout, `{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"call_2"}}`)
	appendLine(t, rollout, `{"type":"token_usage_record","payload":{"response_id":"resp_1","usage":{"output_tokens":5}}}`)
	out, calls := ev(`"hook_event_name":"PostToolUse","tool_name":"exec_command","tool_use_id":"call_1","tool_input":{}`)
	if calls != "agentd.step.end agentd.step.begin" || !strings.Contains(out, "a hook event (Interrupt) was sent from this agent's own shell") {
		t.Errorf("the call's PostToolUse printed %s and sent %q, want the step boundary and the refusal told", out, calls)
	}
	if _, calls := ev(`"hook_event_name":"SessionEnd"`); calls != "" {
		t.Errorf("a SessionEnd while call_2 runs sent %q, want it held", calls)
	}
}

// TestHeldWithoutCallIDs: Gemini CLI's events name no tool call, so a
// boundary cannot tell the end of the call that ran when a SessionEnd
// came from the tools of a prompt the person typed after interrupting it.
// The event stays held: the boundary counts its step as usual, and the
// turn ends cancelled at the stop (the goal pauses), never earlier and
// never with a step uncounted.
func TestHeldWithoutCallIDs(t *testing.T) {
	d := goalDaemon(t)
	opts := Options{Host: "gemini", Folder: t.TempDir(), StateDir: t.TempDir(), Dial: d.dial}
	transcript := filepath.Join(t.TempDir(), "session.jsonl")
	ev := func(body string) (string, string) {
		out, calls := d.event(opts, fmt.Sprintf(`{"session_id":"g1","cwd":"/","transcript_path":%q,%s}`, transcript, body))
		return out, commandsOf(calls)
	}
	ev(`"hook_event_name":"BeforeAgent","timestamp":"2026-12-02T09:00:00.000Z","prompt":"Work."`)
	ev(`"hook_event_name":"BeforeModel","timestamp":"2026-12-02T09:00:00.100Z","llm_request":{"messages":[]}`)
	ev(`"hook_event_name":"BeforeTool","timestamp":"2026-12-02T09:00:00.200Z","tool_name":"run_shell_command","tool_input":{}`)
	if _, calls := ev(`"hook_event_name":"SessionEnd","timestamp":"2026-12-02T09:00:00.300Z"`); calls != "" {
		t.Fatalf("the SessionEnd while the tool ran sent %q, want it held", calls)
	}
	appendLine(t, transcript, `{"id":"m1","type":"gemini","content":"","tokens":{"output":30}}`)
	out, calls := ev(`"hook_event_name":"BeforeModel","timestamp":"2026-12-02T09:00:00.400Z","llm_request":{"messages":[{"role":"model","content":"ok"}]}`)
	if calls != "agentd.step.end agentd.step.begin" || strings.Contains(out, "refused") {
		t.Errorf("the boundary after the tool printed %s and sent %q, want the step counted and nothing said", out, calls)
	}
	if _, calls := ev(`"hook_event_name":"AfterAgent","timestamp":"2026-12-02T09:00:00.500Z","prompt_response":"Done."`); calls != "agentd.step.end agentd.turn.end" {
		t.Errorf("the stop sent %q", calls)
	}
	if got := lastTurnEnd(d); !strings.Contains(got, `"outcome":"cancelled"`) {
		t.Errorf("the turn ended %s, want cancelled", got)
	}
}
