package hook

import (
	"fmt"
	"strings"
	"testing"
)

// claudeSession is a Claude Code session whose daemon continues every
// turn: prompt, a Stop after model call n (its message written to the
// transcript first), a tool batch.
type claudeSession struct {
	*shellSession
	n int
}

func newClaudeSession(t *testing.T) *claudeSession {
	return &claudeSession{shellSession: claudeShell(t, continuing(t))}
}

func (s *claudeSession) prompt(id string) { s.send(prompt(id)) }

// answer writes model call n's message ("Done.", n tokens) and sends its Stop.
func (s *claudeSession) answer() (string, []string) {
	s.n++
	return s.send(hookEvent(`"hook_event_name":"Stop","prompt_id":"p1","stop_hook_active":true,"last_assistant_message":"Done."`).
		after(fmt.Sprintf(`{"type":"assistant","message":{"id":"msg_%d","content":[{"type":"text","text":"Done."}],"usage":{"output_tokens":%d}}}`, s.n, s.n)))
}

// tools writes model call n's tool call and sends its PostToolBatch.
func (s *claudeSession) tools() {
	s.n++
	s.send(hookEvent(fmt.Sprintf(`"hook_event_name":"PostToolBatch","tool_calls":[{"tool_use_id":"toolu_%d"}]`, s.n)).
		after(fmt.Sprintf(`{"type":"assistant","message":{"id":"msg_%d","content":[{"type":"tool_use"}],"usage":{"output_tokens":1}}}`, s.n)))
}

// The calls of a Stop whose continuation Claude Code would not run: the
// turn ends, and the continuation's turn is begun and ended at once,
// without a step.
const refusedCalls = "agentd.step.end agentd.turn.end agentd.turn.begin agentd.turn.end"

// TestClaudeBlockCap: Claude Code obeys CLAUDE_CODE_STOP_HOOK_BLOCK_CAP
// Stop blocks in a row (docs/hooks.md, "The agents' own limits"); the
// hook continues it that many times, and at the next Stop ends the
// continuation's turn unrun (agent_limit, no step: nothing counted) and
// stops Claude Code with the reason. A tool batch starts the count again,
// as in Claude Code; a cap of 0 is none; unset is 8.
func TestClaudeBlockCap(t *testing.T) {
	for _, tc := range []struct {
		cap       string
		continues int
	}{{"2", 2}, {"", 8}, {"many", 8}, {"0", 20}} {
		t.Run("cap="+tc.cap, func(t *testing.T) {
			t.Setenv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", tc.cap)
			s := newClaudeSession(t)
			s.prompt("p1")
			for range tc.continues {
				if out, calls := s.answer(); commandsOf(calls) != stopCalls || !strings.Contains(out, `"decision":"block"`) {
					t.Fatalf("Stop %d sent %v and printed %s, want a continuation", s.n, calls, out)
				}
			}
			if tc.cap == "0" {
				return
			}
			out, calls := s.answer()
			if commandsOf(calls) != refusedCalls {
				t.Fatalf("Stop %d past the cap sent %v, want %s", s.n, calls, refusedCalls)
			}
			last := calls[len(calls)-1]
			want := fmt.Sprintf("Claude Code stopped after %d continuations in a row without a tool call: its CLAUDE_CODE_STOP_HOOK_BLOCK_CAP (%d)", tc.continues, tc.continues)
			if !strings.Contains(last, `"outcome":"failed"`) || !strings.Contains(last, `"kind":"agent_limit"`) || !strings.Contains(last, want) {
				t.Errorf("the unrun continuation ended with %s, want failed, agent_limit, %q", last, want)
			}
			if !strings.Contains(out, `"continue":false`) || !strings.Contains(out, "agentd paused the goal: "+want) {
				t.Errorf("Stop past the cap printed %s, want Claude Code stopped with the reason", out)
			}
		})
	}
	t.Run("a tool batch starts the count again", func(t *testing.T) {
		t.Setenv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "2")
		s := newClaudeSession(t)
		s.prompt("p1")
		s.answer()
		s.answer()
		s.tools()
		for i := range 2 {
			if _, calls := s.answer(); commandsOf(calls) != stopCalls {
				t.Fatalf("Stop %d after the tool batch sent %v, want a continuation", i+1, calls)
			}
		}
		if _, calls := s.answer(); commandsOf(calls) != refusedCalls {
			t.Errorf("the third Stop after the tool batch sent %v, want %s", calls, refusedCalls)
		}
	})
	t.Run("a prompt starts the count again", func(t *testing.T) {
		t.Setenv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "1")
		s := newClaudeSession(t)
		s.prompt("p1")
		s.answer()
		s.answer() // refused: the goal pauses and Claude Code stops
		s.prompt("p2")
		if _, calls := s.answer(); commandsOf(calls) != stopCalls {
			t.Errorf("the first Stop after the user's next prompt sent %v, want a continuation", calls)
		}
	})
}

// TestClaudeContinuationNotRun: when Claude Code ends the run without
// running the continuation a Stop gave (a cap the hook did not foresee),
// SessionEnd finds no new message in the transcript: the turn ends
// agent_limit (the daemon takes back its count), not "the user
// interrupted". With a new message it was run, and ends cancelled.
func TestClaudeContinuationNotRun(t *testing.T) {
	t.Setenv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "0")
	for _, ran := range []bool{false, true} {
		s := newClaudeSession(t)
		s.prompt("p1")
		s.answer()
		if ran {
			s.n++
			appendLine(t, s.transcript, fmt.Sprintf(`{"type":"assistant","message":{"id":"msg_%d","content":[{"type":"text","text":"Half"}],"usage":{"output_tokens":3}}}`, s.n))
		}
		_, calls := s.send(sessionEnd)
		if commandsOf(calls) != "agentd.step.end agentd.turn.end" {
			t.Fatalf("ran %v: SessionEnd sent %v", ran, calls)
		}
		end := calls[1]
		if got := strings.Contains(end, `"kind":"agent_limit"`) && strings.Contains(end, "Claude Code ended the run without running agentd's continuation"); got == ran {
			t.Errorf("ran %v: SessionEnd ended the turn with %s", ran, end)
		}
		if ran && !strings.Contains(end, `"outcome":"cancelled"`) {
			t.Errorf("a continuation the model answered in ended %s, want cancelled", end)
		}
	}
	// In an interactive session the user's next prompt comes instead: the
	// unrun continuation ends agent_limit, and the prompt begins the
	// user's own turn.
	s := newClaudeSession(t)
	s.prompt("p1")
	s.answer()
	_, calls := s.send(hookEvent(`"hook_event_name":"UserPromptSubmit","prompt_id":"p2","prompt":"Something else."`))
	if commandsOf(calls) != "agentd.step.end agentd.turn.end agentd.turn.begin agentd.step.begin" || !strings.Contains(calls[1], `"kind":"agent_limit"`) || !strings.Contains(calls[2], `"origin":"user"`) {
		t.Errorf("the user's prompt after an unrun continuation sent %v", calls)
	}
}

// TestGeminiTurnWithoutModelCall: Gemini CLI runs BeforeAgent and
// AfterAgent for a continuation it makes no model call in (its loop
// detection, MAX_TURNS, maxSessionTurns). The AfterAgent ends that turn
// agent_limit, which counts nothing, continues no more, and stops Gemini
// CLI with the reason; after Gemini CLI's loop warning reached the model,
// the reason names the loop detection.
func TestGeminiTurnWithoutModelCall(t *testing.T) {
	for _, loop := range []bool{false, true} {
		d := continuing(t)
		opts := Options{Host: "gemini", Folder: t.TempDir(), StateDir: t.TempDir(), Dial: d.dial}
		at := 0
		ev := func(name, rest string) (string, []string) {
			at++
			return d.event(opts, fmt.Sprintf(`{"hook_event_name":%q,"session_id":"g1","cwd":"/","timestamp":"2026-12-01T09:00:%02d.000Z"%s}`, name, at, rest))
		}
		ev("BeforeAgent", `,"prompt":"Work."`)
		ev("BeforeModel", `,"llm_request":{"messages":[{"role":"user","content":"Work."}]}`)
		if loop {
			ev("BeforeModel", `,"llm_request":{"messages":[{"role":"user","content":"System: Potential loop detected. Details: Repeating content"}]}`)
		}
		if out, _ := ev("AfterAgent", `,"prompt_response":"Done."`); !strings.Contains(out, `"decision":"deny"`) {
			t.Fatalf("the first AfterAgent printed %s, want the continuation", out)
		}
		ev("BeforeAgent", `,"prompt":"go on"`)
		out, calls := ev("AfterAgent", `,"prompt_response":"[no response text]"`)
		if commandsOf(calls) != "agentd.step.end agentd.turn.end" || !strings.Contains(calls[1], `"kind":"agent_limit"`) {
			t.Fatalf("loop %v: the AfterAgent with no model call sent %v, want the turn ended agent_limit", loop, calls)
		}
		want := "Gemini CLI ended a turn without calling the model"
		if loop {
			want = "Gemini CLI stopped calling the model: its loop detection"
		}
		if !strings.Contains(calls[1], want) || !strings.Contains(out, `"continue":false`) || !strings.Contains(out, want) {
			t.Errorf("loop %v: ended with %s and printed %s, want %q", loop, calls[1], out, want)
		}
	}
	// A model call that got no response (it failed) is still a call: the
	// turn ends completed.
	d := continuing(t)
	opts := Options{Host: "gemini", Folder: t.TempDir(), StateDir: t.TempDir(), Dial: d.dial}
	d.event(opts, `{"hook_event_name":"BeforeAgent","session_id":"g2","cwd":"/","timestamp":"2026-12-01T09:00:01.000Z","prompt":"Work."}`)
	d.event(opts, `{"hook_event_name":"BeforeModel","session_id":"g2","cwd":"/","timestamp":"2026-12-01T09:00:02.000Z","llm_request":{"messages":[{"role":"user","content":"Work."}]}}`)
	_, calls := d.event(opts, `{"hook_event_name":"AfterAgent","session_id":"g2","cwd":"/","timestamp":"2026-12-01T09:00:03.000Z","prompt_response":"[no response text]"}`)
	if len(calls) < 2 || strings.Contains(calls[1], "agent_limit") || !strings.Contains(calls[1], `"outcome":"completed"`) {
		t.Errorf("a turn whose model call got no response ended with %v, want completed", calls)
	}
}

// TestGeminiMaxTurns: Gemini CLI's MAX_TURNS gives one prompt 100 model
// calls, one less at each continuation; at the 100th continuation it runs
// a turn without one, and the reason names MAX_TURNS.
func TestGeminiMaxTurns(t *testing.T) {
	d := continuing(t)
	opts := Options{Host: "gemini", Folder: t.TempDir(), StateDir: t.TempDir(), Dial: d.dial}
	at := 0
	ev := func(name, rest string) (string, []string) {
		at++
		return d.event(opts, fmt.Sprintf(`{"hook_event_name":%q,"session_id":"g1","cwd":"/","timestamp":"2026-12-01T09:%02d:%02d.000Z"%s}`, name, at/60, at%60, rest))
	}
	ev("BeforeAgent", `,"prompt":"Work."`)
	for n := range 100 {
		ev("BeforeModel", fmt.Sprintf(`,"llm_request":{"messages":[{"role":"user","content":"call %d"}]}`, n))
		if out, _ := ev("AfterAgent", `,"prompt_response":"Done."`); !strings.Contains(out, `"decision":"deny"`) {
			t.Fatalf("AfterAgent %d printed %s, want a continuation", n+1, out)
		}
		ev("BeforeAgent", `,"prompt":"go on"`)
	}
	_, calls := ev("AfterAgent", `,"prompt_response":"[no response text]"`)
	if want := "Gemini CLI stopped calling the model after 100 continuations of one prompt: its MAX_TURNS (100)"; len(calls) < 2 || !strings.Contains(calls[1], want) {
		t.Errorf("the turn after 100 continuations ended with %v, want %q", calls, want)
	}
}
