package hook

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSameWordsCopilotQwen: as TestSameBytesDifferentPlace for Copilot CLI
// and Qwen Code: a model that ends every turn with "Done." makes stop
// events whose bytes differ only in the time they fired; each ends a turn
// of its own with its own call's tokens (11, then 13), read from the
// agent's transcript, and the same stop delivered again is one.
func TestSameWordsCopilotQwen(t *testing.T) {
	for _, tc := range []struct {
		host, prompt, stop string
		record             func(n int) string // the transcript line of model call n (tokens 9+2n)
	}{{
		host:   "copilot",
		prompt: `{"sessionId":"s1","timestamp":1796175900000,"cwd":"/","prompt":"Work."}`,
		stop:   `{"sessionId":"s1","timestamp":TS,"cwd":"/","transcriptPath":"$T","stopReason":"end_turn","stop_hook_active":true}`,
		record: func(n int) string {
			return fmt.Sprintf(`{"type":"session.usage_record","data":{"usage":{"outputTokens":%d,"interactionType":"conversation-agent"}},"id":"u%d"}`, 9+2*n, n)
		},
	}, {
		host:   "qwen",
		prompt: `{"hook_event_name":"UserPromptSubmit","session_id":"q1","transcript_path":"$T","cwd":"/","timestamp":"2026-12-01T09:00:00.000Z","prompt_id":"q1####0","prompt":"Work."}`,
		stop:   `{"hook_event_name":"Stop","session_id":"q1","transcript_path":"$T","cwd":"/","timestamp":"TS","prompt_id":"q1####0","stop_hook_active":true,"last_assistant_message":"Done."}`,
		record: func(n int) string {
			return fmt.Sprintf(`{"uuid":"a%d","type":"assistant","message":{"role":"model","parts":[{"text":"Done."}]},"usageMetadata":{"candidatesTokenCount":%d}}`, n, 9+2*n)
		},
	}} {
		t.Run(tc.host, func(t *testing.T) {
			d := continuing(t)
			transcript := filepath.Join(t.TempDir(), "events.jsonl")
			opts := Options{Host: tc.host, Folder: t.TempDir(), StateDir: t.TempDir(), Dial: d.dial}
			ev := func(in string) (string, []string) { return d.event(opts, strings.ReplaceAll(in, "$T", transcript)) }
			stop := func(n int) string {
				if tc.host == "copilot" {
					return strings.ReplaceAll(tc.stop, "TS", fmt.Sprint(1796175900000+n*1000))
				}
				return strings.ReplaceAll(tc.stop, "TS", fmt.Sprintf("2026-12-01T09:00:0%d.200Z", n))
			}
			ev(tc.prompt)
			var last string
			for n := 1; n <= 2; n++ {
				appendLine(t, transcript, tc.record(n))
				out, calls := ev(stop(n))
				if got := commandsOf(calls); got != stopCalls {
					t.Fatalf("stop %d sent %q, want %q", n, got, stopCalls)
				}
				if want := fmt.Sprintf(`"outputTokens":%d`, 9+2*n); !strings.Contains(calls[0], want) {
					t.Errorf("stop %d: %s, want %s", n, calls[0], want)
				}
				if !strings.Contains(out, `"decision":"block"`) || !strings.Contains(out, "go on") {
					t.Errorf("stop %d printed %q, want the continuation", n, out)
				}
				last = out
			}
			if out, calls := ev(stop(2)); len(calls) != 0 || out != last {
				t.Errorf("the last stop again sent %v and printed %q; want nothing sent and %q", calls, out, last)
			}
		})
	}
}

// TestQwenStopWaitsForALateResponse: Qwen Code writes its transcript
// behind its hooks, on a loaded machine seconds behind
// (tests.TestRealQwenCodeLikeReal): at a Stop the transcript may hold only
// the turn's earlier response, a tool call whose line came after its
// boundary event, and the Stop's own response lands after the other
// events' whole time (DefaultTimeout). The Stop waits for the response
// with its last_assistant_message and ends the step with both responses'
// tokens (docs/hooks.md, "The turn a hook opened").
func TestQwenStopWaitsForALateResponse(t *testing.T) {
	d := continuing(t)
	transcript := filepath.Join(t.TempDir(), "chat.jsonl")
	opts := Options{Host: "qwen", Folder: t.TempDir(), StateDir: t.TempDir(), Dial: d.dial}
	d.event(opts, fmt.Sprintf(`{"hook_event_name":"UserPromptSubmit","session_id":"q1","transcript_path":%q,"cwd":"/","timestamp":"2026-12-01T09:00:00.000Z","prompt_id":"q1####0","prompt":"Work."}`, transcript))
	appendLine(t, transcript, `{"uuid":"a1","type":"assistant","message":{"role":"model","parts":[{"functionCall":{"name":"todo_write","args":{}}}]},"usageMetadata":{"candidatesTokenCount":21}}`)
	written := make(chan error, 1)
	go func() {
		time.Sleep(DefaultTimeout + 200*time.Millisecond) // the late write itself, not a bound
		f, err := os.OpenFile(transcript, os.O_APPEND|os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteString(`{"uuid":"a2","type":"assistant","message":{"role":"model","parts":[{"text":"Let me think.","thought":true},{"text":"Done."}]},"usageMetadata":{"candidatesTokenCount":11}}` + "\n")
			f.Close()
		}
		written <- err
	}()
	out, calls := d.event(opts, fmt.Sprintf(`{"hook_event_name":"Stop","session_id":"q1","transcript_path":%q,"cwd":"/","timestamp":"2026-12-01T09:00:05.000Z","prompt_id":"q1####0","last_assistant_message":"Done."}`, transcript))
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if got := commandsOf(calls); got != stopCalls || !strings.Contains(calls[0], `"outputTokens":32`) {
		t.Fatalf("the Stop sent %v, want %s with both responses' 21+11 output tokens", calls, stopCalls)
	}
	if !strings.Contains(out, `"decision":"block"`) {
		t.Errorf("the Stop printed %q, want the continuation", out)
	}
}

// TestQwenEmptyPromptIsABoundary: Qwen Code sends a UserPromptSubmit with
// an empty prompt when it gives tool results back to the model (issue 26:
// it was read as the user interrupting the turn). It ends the step with
// the response's tokens and begins the next, in the same turn; a second
// one with no model response between (a repeat) changes nothing.
func TestQwenEmptyPromptIsABoundary(t *testing.T) {
	d := continuing(t)
	transcript := filepath.Join(t.TempDir(), "chat.jsonl")
	opts := Options{Host: "qwen", Folder: t.TempDir(), StateDir: t.TempDir(), Dial: d.dial}
	event := func(ts, prompt string) string {
		return fmt.Sprintf(`{"hook_event_name":"UserPromptSubmit","session_id":"q1","transcript_path":%q,"cwd":"/","timestamp":%q,"prompt_id":"q1####0","prompt":%q}`, transcript, ts, prompt)
	}
	d.event(opts, event("2026-12-01T09:00:00.000Z", "Work."))
	appendLine(t, transcript, `{"uuid":"a1","type":"assistant","usageMetadata":{"candidatesTokenCount":20}}`)
	_, calls := d.event(opts, event("2026-12-01T09:00:01.000Z", ""))
	if got := commandsOf(calls); got != "agentd.step.end agentd.step.begin" || !strings.Contains(calls[0], `"finishReason":"tool_calls"`) || !strings.Contains(calls[0], `"outputTokens":20`) {
		t.Errorf("the empty prompt sent %v, want agentd.step.end (tool_calls, 20 tokens) and agentd.step.begin", calls)
	}
	if _, calls := d.event(opts, event("2026-12-01T09:00:02.000Z", "")); len(calls) != 0 {
		t.Errorf("an empty prompt with no model response since the last sent %v, want nothing", calls)
	}
}

// TestCopilotEventByKeys: Copilot CLI's hook input names no event; each
// is told by the keys only it has.
func TestCopilotEventByKeys(t *testing.T) {
	for in, want := range map[string]kind{
		`{"sessionId":"s","timestamp":1,"cwd":"/","prompt":"Work."}`:                                          kindPrompt,
		`{"sessionId":"s","timestamp":1,"cwd":"/","prompt":""}`:                                               kindPrompt,
		`{"sessionId":"s","timestamp":1,"cwd":"/","toolName":"bash","toolArgs":{}}`:                           kindGate,
		`{"sessionId":"s","timestamp":1,"cwd":"/","toolName":"bash","toolArgs":{},"toolResult":{}}`:           kindBoundary,
		`{"sessionId":"s","timestamp":1,"cwd":"/","transcriptPath":"/t","stopReason":"end_turn"}`:             kindStop,
		`{"sessionId":"s","timestamp":1,"cwd":"/","reason":"complete"}`:                                       kindEnd,
		`{"sessionId":"s","timestamp":1,"cwd":"/","source":"new","initialPrompt":"Work."}`:                    kindIgnore,
		`{"hookEventName":"agentStop","sessionId":"s","timestamp":1,"cwd":"/","transcriptPath":"/t"}`:         kindStop,
		`{"sessionId":"s","timestamp":1,"cwd":"/","errorContext":"model_call","error":{"message":"x"}}`:       -1,
		`{"sessionId":"s","timestamp":1,"cwd":"/","toolName":"bash","toolResult":{"resultType":"success"}}`:   kindBoundary,
		`{"sessionId":"s","timestamp":1,"cwd":"/","transcriptPath":"/t","stopReason":"end_turn","reason":""}`: kindStop,
	} {
		ev, err := copilot{}.parse([]byte(in))
		switch {
		case want < 0 && err == nil:
			t.Errorf("%s: parsed as %q, want an error naming what is missing", in, ev.name)
		case want >= 0 && (err != nil || ev.kind != want):
			t.Errorf("%s: kind %d (%v), want %d", in, ev.kind, err, want)
		}
	}
}

// TestClaudeHookUnderCopilot: Copilot CLI runs .claude/settings.json's
// hooks too; `agentd hook claude` leaves its events to `agentd hook
// copilot` (nothing counted twice), and still handles Claude Code's own,
// also when Claude Code runs inside a Copilot CLI shell.
func TestClaudeHookUnderCopilot(t *testing.T) {
	t.Setenv("COPILOT_CLI", "1")
	d := continuing(t)
	opts := Options{Host: "claude", Folder: t.TempDir(), StateDir: t.TempDir(), Dial: d.dial}
	if out, calls := d.event(opts, `{"hook_event_name":"UserPromptSubmit","session_id":"s","timestamp":"2026-12-02T01:45:39.721Z","cwd":"/","prompt":"Work."}`); out != "" || len(calls) != 0 {
		t.Errorf("Copilot CLI's Claude-style prompt: printed %q and sent %v, want nothing", out, calls)
	}
	if _, calls := d.event(opts, `{"hook_event_name":"UserPromptSubmit","session_id":"c","transcript_path":"/none","cwd":"/","prompt_id":"p","prompt":"Work."}`); !strings.HasPrefix(commandsOf(calls), "agentd.turn.begin") {
		t.Errorf("Claude Code's own prompt under COPILOT_CLI=1 sent %v, want a turn begun", calls)
	}
}

// TestBlockCap: Copilot CLI obeys 8 agentStop continuations in a row and
// Qwen Code 7 (its stopHookBlockingCap of 8 overrides the 8th; the
// variable QWEN_CODE_STOP_HOOK_BLOCK_CAP changes it): at the stop after
// the last it would obey, agentd begins no continuation turn that no model
// call would fill, and says why. A prompt of the user starts the count
// again.
func TestBlockCap(t *testing.T) {
	for _, tc := range []struct {
		host, env   string
		obeyed      int
		prompt      func(n int) string
		stop        func(n int) string
		want, block string
	}{{
		host: "copilot", obeyed: 8,
		prompt: func(n int) string {
			return fmt.Sprintf(`{"sessionId":"s1","timestamp":%d,"cwd":"/","prompt":"Work."}`, 1796175900000+n)
		},
		stop: func(n int) string {
			return fmt.Sprintf(`{"sessionId":"s1","timestamp":%d,"cwd":"/","transcriptPath":"$T","stopReason":"end_turn"}`, 1796175910000+n)
		},
		want: "", block: `"decision":"block"`,
	}, {
		host: "qwen", obeyed: 7,
		prompt: func(n int) string {
			return fmt.Sprintf(`{"hook_event_name":"UserPromptSubmit","session_id":"q1","cwd":"/","timestamp":"P%d","prompt_id":"p%d","prompt":"Work."}`, n, n)
		},
		stop: func(n int) string {
			return fmt.Sprintf(`{"hook_event_name":"Stop","session_id":"q1","transcript_path":"$T","cwd":"/","timestamp":"S%d","prompt_id":"p","last_assistant_message":"Done."}`, n)
		},
		want: `{"systemMessage":"agentd paused the goal: Qwen Code stopped after 7 continuations in a row: its stopHookBlockingCap (8)`, block: `"decision":"block"`,
	}, {
		host: "qwen", env: "3", obeyed: 2,
		prompt: func(n int) string {
			return fmt.Sprintf(`{"hook_event_name":"UserPromptSubmit","session_id":"q1","cwd":"/","timestamp":"P%d","prompt_id":"p%d","prompt":"Work."}`, n, n)
		},
		stop: func(n int) string {
			return fmt.Sprintf(`{"hook_event_name":"Stop","session_id":"q1","transcript_path":"$T","cwd":"/","timestamp":"S%d","prompt_id":"p","last_assistant_message":"Done."}`, n)
		},
		want: "after 2 continuations in a row: its stopHookBlockingCap (3)", block: `"decision":"block"`,
	}} {
		t.Run(tc.host+tc.env, func(t *testing.T) {
			t.Setenv("QWEN_CODE_STOP_HOOK_BLOCK_CAP", tc.env)
			d := continuing(t)
			opts := Options{Host: tc.host, Folder: t.TempDir(), StateDir: t.TempDir(), Dial: d.dial}
			transcript := filepath.Join(t.TempDir(), "transcript.jsonl")
			// Each stop ends a model response the agent recorded.
			stop := func(n int) (string, []string) {
				line := fmt.Sprintf(`{"type":"session.usage_record","data":{"usage":{"outputTokens":1}},"id":"u%d"}`, n)
				if tc.host == "qwen" {
					line = fmt.Sprintf(`{"uuid":"a%d","type":"assistant","message":{"role":"model","parts":[{"text":"Done."}]},"usageMetadata":{"candidatesTokenCount":1}}`, n)
				}
				appendLine(t, transcript, line)
				return d.event(opts, strings.ReplaceAll(tc.stop(n), "$T", transcript))
			}
			n := 0
			for round := range 2 {
				d.event(opts, tc.prompt(round))
				for range tc.obeyed {
					n++
					if out, _ := stop(n); !strings.Contains(out, tc.block) {
						t.Fatalf("round %d, stop %d printed %q, want a continuation", round, n, out)
					}
				}
				n++
				out, calls := stop(n)
				if got := commandsOf(calls); got != refusedCalls || !strings.Contains(out, tc.want) || strings.Contains(out, tc.block) {
					t.Errorf("round %d, the stop past the cap sent %q and printed %q; want the turn ended, the unrun continuation begun and ended (no step), and %q", round, got, out, tc.want)
				}
			}
		})
	}
}
