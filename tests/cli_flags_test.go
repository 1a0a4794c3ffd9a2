package tests

import (
	"os"
	"strings"
	"testing"
)

// TestCLIFlagOfAnotherCommand: a flag that means nothing to a subcommand is
// refused before it runs, naming the subcommands that take it: exit 2, or
// 4 with --exit-code on the line (docs/protocol.md §1.2.2); the
// goal is left as it was and a refused read creates no state.
func TestCLIFlagOfAnotherCommand(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	out, errOut, code := e.cli("state", "--criterion", "x", "--workspace", e.ws)
	if code != 2 || out != "" || !strings.Contains(errOut, "--criterion is a flag of: goal create, goal queue; agentd state does not take it") {
		t.Errorf("agentd state --criterion x: exit %d, stdout %q, stderr %q; want 2 naming goal create", code, out, errOut)
	}
	if _, err := os.Stat(e.stateDir); err == nil {
		t.Errorf("the refused agentd state created the state directory %s", e.stateDir)
	}

	if out, errOut, code := e.cli("goal", "create", "Ship it", "--workspace", e.ws); code != 0 {
		t.Fatalf("goal create: exit %d %q %q", code, out, errOut)
	}
	_, errOut, code = e.cli("goal", "pause", "--criterion", "x", "--workspace", e.ws)
	if code != 2 || !strings.Contains(errOut, "--criterion is a flag of: goal create, goal queue; agentd goal pause does not take it") {
		t.Errorf("agentd goal pause --criterion x: exit %d, stderr %q; want 2 naming goal create", code, errOut)
	}
	_, errOut, code = e.cli("goal", "create", "Other", "--replace", "--exit-code", "--workspace", e.ws)
	if code != 4 || !strings.Contains(errOut, "--exit-code is a flag of: goal status") {
		t.Errorf("agentd goal create --exit-code: exit %d, stderr %q; want 4 naming goal status", code, errOut)
	}
	out, errOut, code = e.cli("goal", "status", "--exit-code", "--workspace", e.ws)
	if code != 2 || !strings.Contains(out, "Goal (active): Ship it") {
		t.Errorf("goal status after the refusals: exit %d, %q %q; want the goal active as created", code, out, errOut)
	}
}
