package tests

// Real Gemini CLI with a streamed model (docs/hooks.md, issue 26): the
// hook work of an answer does not grow with its chunks. Skipped unless
// AGENTD_AGENTS is set (tests/agents/ci.sh).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hookCounter puts an agentd-hook ahead of the real one on the PATH it
// returns, which logs each event it gets, one JSON line, to the file it
// returns, then runs the real agentd-hook on it: every hook process the
// agent starts is a line.
func hookCounter(t *testing.T, a *agentEnv) (path, log string) {
	dir := filepath.Join(a.home, "counted-bin")
	log = filepath.Join(a.home, "hook-events.jsonl")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf("#!/bin/sh\nin=$(cat)\nprintf '%%s\\n' \"$in\" >> '%s'\nprintf '%%s' \"$in\" | exec '%s' \"$@\"\n", log, hookBin)
	if err := os.WriteFile(filepath.Join(dir, "agentd-hook"), []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return dir + string(os.PathListSeparator) + filepath.Dir(agentdBin) + string(os.PathListSeparator) + os.Getenv("PATH"), log
}

// hookRuns counts the hook processes the log of hookCounter holds, per
// event name.
func hookRuns(t *testing.T, log string) (map[string]int, int) {
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	runs, total := map[string]int{}, 0
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ev struct {
			Name string `json:"hook_event_name"`
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("hook input %q: %v", l, err)
		}
		runs[ev.Name]++
		total++
	}
	return runs, total
}

// TestRealGeminiCLIStreamedChunks: a 3-turn goal in Gemini CLI whose model
// streams each answer word by word (40 chunks and more, the usage growing
// chunk by chunk): the hooks run a bounded number of processes per model
// call whatever the chunks (no AfterModel, which Gemini CLI runs once per
// chunk: issue 26 measured 107 runs for one answer), and the goal still
// counts exactly 3 turns and each answer's final output tokens.
func TestRealGeminiCLIStreamedChunks(t *testing.T) {
	a := newAgentEnv(t)
	// Words that never repeat: Gemini CLI cuts a stream that repeats itself
	// (its loop detection).
	var words string
	for i := range 40 {
		words += fmt.Sprintf("w%d ", i)
	}
	script := []reply{
		{text: "Turn one: " + words + "done.", tokens: 11, streamed: true},
		{text: "Turn two: " + words + "done.", tokens: 13, streamed: true},
		{text: "Turn three: " + words + "done.", tokens: 17, streamed: true},
	}
	path, log := hookCounter(t, a)
	lc, gemini := geminiRun(t, a, script, "PATH="+path)
	userGoal(t, a)
	out, calls := gemini("Work on the goal.")
	if len(calls) != 3 || !strings.Contains(out, "Turn three:") {
		t.Fatalf("%d model calls, want 3; output %q", len(calls), out)
	}
	checkBudgetOutcome(t, a, lc, 11+13+17)
	runs, total := hookRuns(t, log)
	if runs["AfterModel"] != 0 || runs["BeforeModel"] != len(calls) {
		t.Errorf("hook processes per event %v: want no AfterModel and one BeforeModel per model call (%d)", runs, len(calls))
	}
	// Per call: its BeforeModel, and here its turn's BeforeAgent and
	// AfterAgent; and one SessionEnd.
	if limit := 3*len(calls) + 1; total > limit {
		t.Errorf("%d hook processes for %d model calls of %d chunks and more each (%v), want at most %d", total, len(calls), len(strings.Fields(words)), runs, limit)
	}
}
