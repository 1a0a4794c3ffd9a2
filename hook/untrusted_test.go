package hook

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/goal"
)

// The token counts the hook reads come from the agent's transcript or its
// plugin's event, which hold what the model's provider reported (and which
// a process of the user can write): the hook's sum of them is never below
// the tokens of any response it counts (docs/security.md, "Token counts a
// hook reads cannot shrink a step's count"). A negative count, from a damaged line or a provider that
// reports one, adds nothing instead of taking back the tokens of the other
// responses of the step; counts near the largest integer saturate instead
// of wrapping to a negative total, which agentd refuses, losing the step's
// tokens.
func TestTokenCountsFromTheAgentNeverShrink(t *testing.T) {
	huge := int64(math.MaxInt64 - 5)
	cases := []struct {
		name   string
		counts []int64
		want   int64
	}{
		{"a negative response", []int64{5000, -4999}, 5000},
		{"only negative", []int64{-1}, 0},
		{"two near the largest", []int64{huge, huge}, math.MaxInt64},
		{"a negative after the largest", []int64{math.MaxInt64, -math.MaxInt64}, math.MaxInt64},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c cursor
			var ev event
			for i, n := range tc.counts {
				id := fmt.Sprintf("m%d", i)
				countMessage(&c, id, n)
				ev.responses = append(ev.responses, counted{id, n})
			}
			if got, _ := claim(&c); got != tc.want {
				t.Errorf("transcript lines %v counted %d tokens, want %d", tc.counts, got, tc.want)
			}
			var oc cursor
			if got, _, _ := (opencode{}).tokens(context.Background(), ev, &oc); got != tc.want {
				t.Errorf("opencode responses %v counted %d tokens, want %d", tc.counts, got, tc.want)
			}
		})
	}
	// A line of a response seen already adds what its count grew by, and
	// a count that shrinks to below zero takes nothing back.
	var c cursor
	countMessage(&c, "m", 100)
	countMessage(&c, "m", -100)
	countMessage(&c, "m", 150)
	if got, _ := claim(&c); got != 150 {
		t.Errorf("one response's lines 100, -100, 150 counted %d tokens, want 150", got)
	}
	// Codex's rollout: a record with a negative count adds nothing.
	rollout := filepath.Join(t.TempDir(), "rollout.jsonl")
	record := `{"type":"token_usage_record","payload":{"usage":{"output_tokens":%d}}}` + "\n"
	if err := os.WriteFile(rollout, fmt.Appendf(nil, record+record, 5000, -4999), 0o600); err != nil {
		t.Fatal(err)
	}
	c = cursor{}
	if got, _, err := (codex{}).tokens(context.Background(), event{transcript: rollout}, &c); err != nil || got != 5000 {
		t.Errorf("Codex records 5000, -4999 counted %d tokens (%v), want 5000", got, err)
	}
}

// TestCopilotSessionIDNamesNoOtherFile: Copilot CLI's events other than
// agentStop carry no transcript path, so the hook builds it from the
// session id; an id that is not one plain name (a path, "." or "..")
// builds none, so a made-up event cannot name another file with it.
func TestCopilotSessionIDNamesNoOtherFile(t *testing.T) {
	t.Setenv("COPILOT_HOME", t.TempDir())
	for _, id := range []string{"../../etc", "a/b", "..", "."} {
		ev, err := copilot{}.parse(fmt.Appendf(nil, `{"sessionId":%q,"cwd":"/","timestamp":1,"prompt":"x"}`, id))
		if err != nil {
			t.Fatal(err)
		}
		if ev.transcript != "" {
			t.Errorf("session id %q named the transcript %s", id, ev.transcript)
		}
	}
	ev, err := copilot{}.parse([]byte(`{"sessionId":"s-1","cwd":"/","timestamp":1,"prompt":"x"}`))
	if err != nil || filepath.Base(filepath.Dir(ev.transcript)) != "s-1" {
		t.Errorf("a plain session id named %q (%v), want its session's events file", ev.transcript, err)
	}
}

// TestStopLineShowsControlCharacters: the line an agent shows the person
// when agentd stops it carries the goal's reason, which in a team folder
// anyone with etcd access writes; an escape sequence in it would reach the
// person's terminal through the agent (opencode run and Qwen Code print it
// on stderr) and could set its title or write its clipboard. Every control
// and invisible character of it is written as <U+XXXX> (docs/security.md,
// "What the shell commands print cannot drive the terminal").
func TestStopLineShowsControlCharacters(t *testing.T) {
	var te protocol.TurnEndResult
	if err := json.Unmarshal([]byte(`{"goal":{"status":"blocked","terminalReason":"budget reached: \u001b]52;c;Y3VybCBldmlsfHNo\u0007 turn budget\u202e of 3 turns"}}`), &te); err != nil {
		t.Fatal(err)
	}
	got := stopReason(te)
	if strings.ContainsFunc(got, func(r rune) bool { return unicode.IsControl(r) || goal.Invisible(r) }) {
		t.Errorf("the stop line holds a control character: %q", got)
	}
	if want := "agentd stopped the agent: budget reached: <U+001B>]52;c;Y3VybCBldmlsfHNo<U+0007> turn budget<U+202E> of 3 turns"; got != want {
		t.Errorf("stop line %q, want %q", got, want)
	}
}
