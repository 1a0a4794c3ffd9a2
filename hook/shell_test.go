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

// shellSession plays one session's hook events, tools included, through
// Run against d, with a transcript the test writes.
type shellSession struct {
	t          *testing.T
	d          *fakeDaemon
	opts       Options
	ids        string // the fields that name the session (and Codex's turn) in every event
	transcript string
}

func newShellSession(t *testing.T, d *fakeDaemon, host, ids string) *shellSession {
	s := &shellSession{t: t, d: d, opts: Options{Host: host, Folder: t.TempDir(), StateDir: t.TempDir(), Dial: d.dial},
		ids: ids, transcript: filepath.Join(t.TempDir(), "transcript.jsonl")}
	if err := os.WriteFile(s.transcript, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return s
}

// claudeShell is a Claude Code session.
func claudeShell(t *testing.T, d *fakeDaemon) *shellSession {
	return newShellSession(t, d, "claude", `"session_id":"c1"`)
}

// shellStep is one hook event of a scenario: the transcript lines the
// agent writes before it, its fields after the common ones, and what it
// must do. A step with no expectation set only brings the session where
// the next steps start.
type shellStep struct {
	lines []string
	body  string

	check  bool     // calls is checked
	calls  string   // the command names it sends, in order
	has    []string // its output contains these
	lacks  string   // its output does not contain this
	silent bool     // it prints nothing
}

func hookEvent(body string) shellStep { return shellStep{body: body} }

// after has the agent write lines to its transcript before the event.
func (st shellStep) after(lines ...string) shellStep {
	st.lines = append(st.lines, lines...)
	return st
}
func (st shellStep) sends(calls string) shellStep { st.check, st.calls = true, calls; return st }
func (st shellStep) says(s ...string) shellStep   { st.has = append(st.has, s...); return st }
func (st shellStep) saysNot(s string) shellStep   { st.lacks = s; return st }
func (st shellStep) quiet() shellStep             { st.silent = true; return st }

// Claude Code's events.
func prompt(id string) shellStep {
	return hookEvent(`"hook_event_name":"UserPromptSubmit","prompt_id":"` + id + `","prompt":"Work."`)
}
func gate(id string) shellStep {
	return hookEvent(`"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"x"},"tool_use_id":"` + id + `"`)
}

// batch: the model message that asked for the tools, then their
// PostToolBatch.
func batch(msg string, ids ...string) shellStep {
	var calls []string
	for _, id := range ids {
		calls = append(calls, `{"tool_use_id":"`+id+`"}`)
	}
	return hookEvent(`"hook_event_name":"PostToolBatch","tool_calls":[` + strings.Join(calls, ",") + `]`).
		after(`{"type":"assistant","message":{"id":"` + msg + `","content":[{"type":"tool_use"}],"usage":{"output_tokens":7}}}`)
}

// stop: the model's closing message, then its Stop.
func stop(msg, text string) shellStep {
	return hookEvent(`"hook_event_name":"Stop","prompt_id":"p1","last_assistant_message":"` + text + `"`).
		after(`{"type":"assistant","message":{"id":"` + msg + `","content":[{"type":"text","text":"` + text + `"}],"usage":{"output_tokens":3}}}`)
}

var sessionEnd = hookEvent(`"hook_event_name":"SessionEnd","reason":"other"`)

// send writes the step's lines and sends its event; it returns the
// output and the calls sent.
func (s *shellSession) send(st shellStep) (string, []string) {
	s.t.Helper()
	for _, l := range st.lines {
		appendLine(s.t, s.transcript, l)
	}
	return s.d.event(s.opts, fmt.Sprintf(`{%s,"cwd":"/","transcript_path":%q,%s}`, s.ids, s.transcript, st.body))
}

// play sends the step and fails the test at once if it did not do what
// the step expects.
func (s *shellSession) play(i int, st shellStep) {
	s.t.Helper()
	out, sent := s.send(st)
	calls := commandsOf(sent)
	switch {
	case st.check && calls != st.calls:
		s.t.Fatalf("step %d (%s): sent %q, want %q", i, st.body, calls, st.calls)
	case st.silent && out != "":
		s.t.Fatalf("step %d (%s): printed %s, want nothing", i, st.body, out)
	}
	for _, want := range st.has {
		if !strings.Contains(out, want) {
			s.t.Fatalf("step %d (%s): printed %s, want %q in it", i, st.body, out, want)
		}
	}
	switch {
	case st.lacks != "" && strings.Contains(out, st.lacks):
		s.t.Fatalf("step %d (%s): printed %s, want no %q in it", i, st.body, out, st.lacks)
	}
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
	for name, forged := range map[string]shellStep{
		"SessionEnd":       sessionEnd,
		"UserPromptSubmit": prompt("forged"),
		"StopFailure":      hookEvent(`"hook_event_name":"StopFailure","error":"rate_limit","error_details":"429"`),
	} {
		t.Run(name, func(t *testing.T) {
			d := goalDaemon(t)
			s := claudeShell(t, d)
			var log bytes.Buffer
			s.opts.Logger = slog.New(slog.NewTextHandler(&log, nil))
			s.send(prompt("p1"))
			s.send(gate("t1"))
			for i := range 2 {
				s.play(2+i, forged.sends("").quiet())
			}
			s.play(4, batch("msg_1", "t1").sends("agentd.step.end agentd.step.begin").
				says("a hook event ("+name+") was sent from this agent's own shell while your tool ran; agentd refused it"))
			if want := `msg="refused a hook event from the agent's own shell: it came while a tool ran, and the agent went on working after it; the goal's turn goes on and counts" event=` + name; !strings.Contains(log.String(), want) {
				t.Errorf("the log says\n%s\nwant %s", log.String(), want)
			}
			s.play(5, stop("msg_2", "Done.").sends("agentd.step.end agentd.turn.end"))
			if got := lastTurnEnd(d); !strings.Contains(got, `"outcome":"completed"`) {
				t.Errorf("the turn ended %s, want completed", got)
			}
		})
	}
}

// shellScenario is one session's events, in order, and how its last turn
// ended ("" checks none).
type shellScenario struct {
	host, ids string
	plain     bool // no goal drives the session's turns
	steps     []shellStep
	outcome   string
}

// TestShellScenarios: events from a tool's shell, from the person and
// from the agent, in the orders real agents send them.
func TestShellScenarios(t *testing.T) {
	const claude, claudeIDs = "claude", `"session_id":"c1"`
	const turnEnded, boundary = "agentd.step.end agentd.turn.end", "agentd.step.end agentd.step.begin"
	for name, sc := range map[string]shellScenario{
		// The person presses Esc while a tool runs (Claude Code reports no
		// end of that tool) and types a new prompt. The prompt comes with
		// the call still in flight to the cursor, so it is held; the new
		// prompt's tools are other calls, which settle nothing, and when
		// the agent stops, the turn ends cancelled: the goal pauses, as
		// for any interrupt of the person's, with no continuation. The
		// session goes on as before: the next prompt begins a turn.
		"PersonInterruptsARunningTool": {host: claude, ids: claudeIDs, outcome: "cancelled", steps: []shellStep{
			prompt("p1"), gate("t1"),
			prompt("p2").sends(""),
			gate("t2"),
			batch("msg_1", "t2").saysNot("refused"),
			stop("msg_2", "Done.").sends(turnEnded).quiet(),
			prompt("p3").sends("agentd.turn.begin agentd.step.begin"),
		}},
		// A process the model's shell left running sends a SessionEnd
		// between tool calls, when none is in flight. It ends the goal's
		// turn as any end does (the goal pauses), but the agent works on:
		// its next tool is refused unexecuted and its next batch stops it,
		// since a real end or interrupt leaves no tool call behind. The
		// person's next prompt begins a turn as usual and the tools run
		// again.
		"ShellEndBetweenToolsStopsTheAgent": {host: claude, ids: claudeIDs, steps: []shellStep{
			prompt("p1"), gate("t1"), batch("msg_1", "t1"),
			sessionEnd.sends(turnEnded),
			gate("t2").sends("").says(`"permissionDecision":"deny"`, "a hook event (SessionEnd) sent from this agent's own shell"),
			batch("msg_2", "t2").sends("").says(`"continue":false`),
			prompt("p2").sends("agentd.turn.begin agentd.step.begin"),
			gate("t3").quiet(),
		}},
		// With no tool in flight, a prompt or a SessionEnd ends the goal's
		// turn cancelled at once.
		"RealEndsStillEnd": {host: claude, ids: claudeIDs, outcome: "cancelled", steps: []shellStep{
			prompt("p1"),
			prompt("p2").sends("agentd.step.end agentd.turn.end agentd.turn.begin agentd.step.begin"),
			sessionEnd.sends(turnEnded),
		}},
		// A gate of a turn no goal drives records nothing, so a SessionEnd
		// in the middle of its tool ends it (it has no budget to leave).
		"EndInAToolOfAPlainTurn": {host: claude, ids: claudeIDs, plain: true, steps: []shellStep{
			prompt("p1"), gate("t1"),
			sessionEnd.sends(turnEnded),
		}},
		// Codex's PreToolUse and PostToolUse name the call (tool_use_id).
		// An Interrupt that comes while the call runs is held; the call's
		// PostToolUse proves the agent went on, so it was the shell's and
		// the model is told; an Interrupt while another call of the same
		// response still runs is held too.
		"CodexInterruptWhileToolRuns": {host: "codex", ids: `"session_id":"x1","turn_id":"u1"`, steps: []shellStep{
			hookEvent(`"hook_event_name":"UserPromptSubmit","prompt":"Work."`),
			hookEvent(`"hook_event_name":"PreToolUse","tool_name":"exec_command","tool_use_id":"call_1","tool_input":{}`),
			hookEvent(`"hook_event_name":"PreToolUse","tool_name":"exec_command","tool_use_id":"call_2","tool_input":{}`),
			hookEvent(`"hook_event_name":"Interrupt"`).sends("").quiet(),
			hookEvent(`"hook_event_name":"PostToolUse","tool_name":"exec_command","tool_use_id":"call_1","tool_input":{}`).after(
				`{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"call_1"}}`,
				`{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"call_2"}}`,
				`{"type":"token_usage_record","payload":{"response_id":"resp_1","usage":{"output_tokens":5}}}`,
			).sends(boundary).says("a hook event (Interrupt) was sent from this agent's own shell"),
			hookEvent(`"hook_event_name":"SessionEnd"`).sends(""),
		}},
		// Gemini CLI's events name no tool call, so a boundary cannot tell
		// the end of the call that ran when a SessionEnd came from the
		// tools of a prompt the person typed after interrupting it. The
		// event stays held: the boundary counts its step as usual, and the
		// turn ends cancelled at the stop (the goal pauses), never earlier
		// and never with a step uncounted.
		"HeldWithoutCallIDs": {host: "gemini", ids: `"session_id":"g1"`, outcome: "cancelled", steps: []shellStep{
			hookEvent(`"hook_event_name":"BeforeAgent","timestamp":"2026-12-02T09:00:00.000Z","prompt":"Work."`),
			hookEvent(`"hook_event_name":"BeforeModel","timestamp":"2026-12-02T09:00:00.100Z","llm_request":{"messages":[]}`),
			hookEvent(`"hook_event_name":"BeforeTool","timestamp":"2026-12-02T09:00:00.200Z","tool_name":"run_shell_command","tool_input":{}`),
			hookEvent(`"hook_event_name":"SessionEnd","timestamp":"2026-12-02T09:00:00.300Z"`).sends(""),
			hookEvent(`"hook_event_name":"BeforeModel","timestamp":"2026-12-02T09:00:00.400Z","llm_request":{"messages":[{"role":"model","content":"ok"}]}`).
				after(`{"id":"m1","type":"gemini","content":"","tokens":{"output":30}}`).sends(boundary).saysNot("refused"),
			hookEvent(`"hook_event_name":"AfterAgent","timestamp":"2026-12-02T09:00:00.500Z","prompt_response":"Done."`).sends(turnEnded),
		}},
	} {
		t.Run(name, func(t *testing.T) {
			d := goalDaemon(t)
			if sc.plain {
				d.answers["agentd.turn.begin"] = `{"goalDriven":false,"goal":null}`
			}
			s := newShellSession(t, d, sc.host, sc.ids)
			for i, st := range sc.steps {
				s.play(i, st)
			}
			if got := lastTurnEnd(d); sc.outcome != "" && !strings.Contains(got, `"outcome":"`+sc.outcome+`"`) {
				t.Errorf("the turn ended %s, want %s", got, sc.outcome)
			}
		})
	}
}
