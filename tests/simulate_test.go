package tests

import (
	"strings"
	"testing"
)

// TestSimulateScripts runs the README's example host on its built-in
// scripts: one goal completes, one runs out of its turn budget.
func TestSimulateScripts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	out, errOut, code := e.cli("simulate")
	if code != 0 {
		t.Fatalf("agentd simulate: %d\n%s", code, errOut)
	}
	for _, want := range []string{"inject goal", "continuation goal_continuation", "goal: complete · 2/3 turns", "[done] Document --verbose in the README"} {
		if !strings.Contains(out, want) {
			t.Errorf("agentd simulate output lacks %q:\n%s", want, out)
		}
	}
	out, errOut, code = e.cli("simulate", "--script", "turn-budget", "--verbose")
	if code != 0 {
		t.Fatalf("agentd simulate --script turn-budget: %d\n%s", code, errOut)
	}
	for _, want := range []string{"goal: blocked · 2/2 turns", "Turn 3 (origin user, goal-driven: false)", "<untrusted_objective>"} {
		if !strings.Contains(out, want) {
			t.Errorf("turn-budget output lacks %q:\n%s", want, out)
		}
	}
	if _, errOut, code := e.cli("simulate", "--script", "no-such-script"); code != 2 || !strings.Contains(errOut, "complete, turn-budget") {
		t.Errorf("unknown script: code %d, %q", code, errOut)
	}
}
