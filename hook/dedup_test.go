package hook

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// continuing is a daemon whose every turn end continues the agent.
func continuing(t *testing.T) *fakeDaemon {
	return &fakeDaemon{t: t, answers: map[string]string{
		"agentd.turn.begin": `{"goalDriven":true,"goal":null}`,
		"agentd.step.begin": `{"injections":[]}`,
		"agentd.step.end":   `{"stopTurn":false,"graceStep":false,"injections":[]}`,
		"agentd.turn.end":   `{"continuation":{"variant":"goal_continuation","prompt":"go on"},"goal":null}`,
	}}
}

// appendLine appends one JSON line to the file at path.
func appendLine(t *testing.T, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
}

// commandsOf is the command names of calls.
func commandsOf(calls []string) string {
	var names []string
	for _, c := range calls {
		names = append(names, strings.Fields(c)[0])
	}
	return strings.Join(names, " ")
}

// The calls of a Stop that ends a turn and begins its continuation.
const stopCalls = "agentd.step.end agentd.turn.end agentd.turn.begin agentd.step.begin"

// TestSameBytesDifferentPlace: a model that ends every turn with "Done."
// makes byte-identical stop events (issue 26). In Claude Code each ends
// another assistant message of the transcript, in Codex each comes after
// more output tokens in the rollout, in Gemini CLI each fires at another
// time: each is a turn end of its own, with its own call's tokens (11,
// then 13). The same event at the same place (delivered twice) is one: no
// calls, the first answer.
func TestSameBytesDifferentPlace(t *testing.T) {
	for _, tc := range []struct {
		host, prompt, stop string
		// record is what the agent records of model call n (tokens
		// 9+2n), and the events it sends before that call.
		record func(n int) (line string, events []string)
		calls  string // what a stop sends
	}{{
		host:   "claude",
		prompt: `{"hook_event_name":"UserPromptSubmit","session_id":"c1","cwd":"/","transcript_path":"$T","prompt_id":"p1","prompt":"Work."}`,
		stop:   `{"hook_event_name":"Stop","session_id":"c1","cwd":"/","transcript_path":"$T","prompt_id":"p1","stop_hook_active":true,"last_assistant_message":"Done."}`,
		record: func(n int) (string, []string) {
			return fmt.Sprintf(`{"type":"assistant","uuid":"u%d","message":{"id":"msg_%d","content":[{"type":"text","text":"Done."}],"usage":{"output_tokens":%d}}}`, n, n, 9+2*n), nil
		},
		calls: stopCalls,
	}, {
		host:   "codex",
		prompt: `{"hook_event_name":"UserPromptSubmit","session_id":"x1","turn_id":"t1","cwd":"/","transcript_path":"$T","prompt":"Work."}`,
		stop:   `{"hook_event_name":"Stop","session_id":"x1","turn_id":"t1","cwd":"/","transcript_path":"$T","stop_hook_active":true,"last_assistant_message":"Done."}`,
		record: func(n int) (string, []string) {
			total := n * (n + 10) // 11, then 24: the rollout's cumulative count
			return fmt.Sprintf(`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"output_tokens":%d}}}}`, total), nil
		},
		calls: stopCalls,
	}, {
		host:   "gemini",
		prompt: `{"hook_event_name":"BeforeAgent","session_id":"g1","cwd":"/","transcript_path":"$T","timestamp":"2026-12-01T09:00:00.000Z","prompt":"Work."}`,
		stop:   `{"hook_event_name":"AfterAgent","session_id":"g1","cwd":"/","transcript_path":"$T","timestamp":"TS","prompt":"Work.","prompt_response":"Done.","stop_hook_active":true}`,
		record: func(n int) (string, []string) {
			var events []string
			if n > 1 { // the continuation's prompt
				events = append(events, fmt.Sprintf(`{"hook_event_name":"BeforeAgent","session_id":"g1","cwd":"/","transcript_path":"$T","timestamp":"2026-12-01T09:00:0%d.000Z","prompt":"go on"}`, n))
			}
			return fmt.Sprintf(`{"id":"m%d","type":"gemini","content":"Done.","tokens":{"input":100,"output":%d,"total":%d}}`, n, 9+2*n, 109+2*n), events
		},
		calls: "agentd.step.end agentd.turn.end",
	}} {
		t.Run(tc.host, func(t *testing.T) {
			d := continuing(t)
			transcript := filepath.Join(t.TempDir(), "transcript.jsonl")
			opts := Options{Host: tc.host, Folder: t.TempDir(), StateDir: t.TempDir(), Dial: d.dial}
			ev := func(in string) (string, []string) { return d.event(opts, strings.ReplaceAll(in, "$T", transcript)) }
			// Gemini CLI's AfterAgent of call n fires at second n.
			stop := func(n int) string {
				return strings.ReplaceAll(tc.stop, "TS", fmt.Sprintf("2026-12-01T09:00:0%d.200Z", n))
			}
			ev(tc.prompt)
			var last string
			for n := 1; n <= 2; n++ {
				line, events := tc.record(n)
				for _, e := range events {
					ev(e)
				}
				appendLine(t, transcript, line)
				out, calls := ev(stop(n))
				if got := commandsOf(calls); got != tc.calls {
					t.Fatalf("stop %d sent %q, want %q", n, got, tc.calls)
				}
				if want := fmt.Sprintf(`"outputTokens":%d`, 9+2*n); !strings.Contains(calls[0], want) {
					t.Errorf("stop %d: %s, want %s", n, calls[0], want)
				}
				if !strings.Contains(out, "go on") {
					t.Errorf("stop %d printed %q, want the continuation", n, out)
				}
				last = out
			}
			out, calls := ev(stop(2))
			if len(calls) != 0 || out != last {
				t.Errorf("the last stop again sent %v and printed %q; want nothing sent and its first answer %q", calls, out, last)
			}
		})
	}
}

// TestStopWaitsForItsMessage: Claude Code writes its transcript behind its
// hooks, so a Stop can come before the message it ends; when that message
// has the same words as the last turn's, the Stop waits for the new one
// and counts its tokens, and is not taken for the last Stop again.
func TestStopWaitsForItsMessage(t *testing.T) {
	d := continuing(t)
	transcript := filepath.Join(t.TempDir(), "transcript.jsonl")
	opts := Options{Host: "claude", Folder: t.TempDir(), StateDir: t.TempDir(), Dial: d.dial}
	msg := func(n, tokens int) string {
		return fmt.Sprintf(`{"type":"assistant","uuid":"u%d","message":{"id":"msg_%d","content":[{"type":"text","text":"Done."}],"usage":{"output_tokens":%d}}}`, n, n, tokens)
	}
	stop := fmt.Sprintf(`{"hook_event_name":"Stop","session_id":"c1","cwd":"/","transcript_path":%q,"prompt_id":"p1","stop_hook_active":false,"last_assistant_message":"Done."}`, transcript)
	d.event(opts, fmt.Sprintf(`{"hook_event_name":"UserPromptSubmit","session_id":"c1","cwd":"/","transcript_path":%q,"prompt_id":"p1","prompt":"Work."}`, transcript))
	appendLine(t, transcript, msg(1, 11))
	d.event(opts, stop)
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(200 * time.Millisecond) // Claude Code's transcript lags its hooks
		appendLine(t, transcript, msg(2, 13))
	}()
	_, calls := d.event(opts, strings.Replace(stop, `"stop_hook_active":false`, `"stop_hook_active":true`, 1))
	<-done
	if got := commandsOf(calls); got != stopCalls || !strings.Contains(calls[0], `"outputTokens":13`) {
		t.Errorf("the second Stop sent %v, want %s with the second message's 13 tokens", calls, stopCalls)
	}
}

// TestNoPlaceNoRepeat: a Stop whose transcript holds no message (none
// written, a wrong path) has no place to tell it from the last Stop, and
// equal bytes alone never make a repeat: each ends a turn.
func TestNoPlaceNoRepeat(t *testing.T) {
	d := continuing(t)
	missing := filepath.Join(t.TempDir(), "none.jsonl")
	opts := Options{Host: "claude", Folder: t.TempDir(), StateDir: t.TempDir(), Dial: d.dial}
	d.event(opts, fmt.Sprintf(`{"hook_event_name":"UserPromptSubmit","session_id":"c1","cwd":"/","transcript_path":%q,"prompt_id":"p1","prompt":"Work."}`, missing))
	stop := fmt.Sprintf(`{"hook_event_name":"Stop","session_id":"c1","cwd":"/","transcript_path":%q,"prompt_id":"p1","stop_hook_active":true,"last_assistant_message":"Done."}`, missing)
	for n := 1; n <= 2; n++ {
		if _, calls := d.event(opts, stop); commandsOf(calls) != stopCalls {
			t.Errorf("stop %d sent %v, want %s", n, calls, stopCalls)
		}
	}
}
