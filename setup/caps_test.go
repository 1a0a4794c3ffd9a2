package setup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClaudeBlockCapRaised: setup claude raises Claude Code's
// CLAUDE_CODE_STOP_HOOK_BLOCK_CAP to 100 in the settings' env, beside the
// hooks, and says so; a second run changes nothing; a value the person
// set stays, at setup and at --remove; --remove takes out setup's own,
// and the env object with it when nothing else is in it; an env that is
// not an object is refused, the file unchanged (docs/hooks.md, "The
// agents' own limits").
func TestClaudeBlockCapRaised(t *testing.T) {
	ws := t.TempDir()
	opts := Options{Agent: "claude", Workspace: ws, Command: "agentd"}
	path := filepath.Join(ws, ".claude", "settings.json")
	cs := applyAll(t, opts)
	if got := envValue([]byte(read(t, path)), "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"); got != "100" {
		t.Fatalf("the cap after setup: %q, want 100\n%s", got, read(t, path))
	}
	if w := cs[1].What; !strings.Contains(w, "env CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=100") || !strings.Contains(w, "raised from 8") {
		t.Errorf("setup says %q, want it to name the raised cap", w)
	}
	if cs := applyAll(t, opts); cs[1].Action != Already {
		t.Errorf("a second setup: %s %q", cs[1].Action, cs[1].What)
	}
	remove := opts
	remove.Remove = true
	if cs := applyAll(t, remove); cs[1].Action != Removed || !strings.Contains(cs[1].What, "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP") {
		t.Errorf("remove: %s %q", cs[1].Action, cs[1].What)
	}
	if _, err := os.Stat(path); err == nil {
		t.Errorf("remove left %s:\n%s", path, read(t, path))
	}

	// The person's own value.
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	mine := `{"env": {"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "3", "FOO": "1"}}`
	if err := os.WriteFile(path, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	if cs := applyAll(t, opts); strings.Contains(cs[1].What, "CLAUDE_CODE") || envValue([]byte(read(t, path)), "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP") != "3" {
		t.Errorf("setup over the person's cap: %q\n%s", cs[1].What, read(t, path))
	}
	applyAll(t, remove)
	if got := read(t, path); envValue([]byte(got), "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP") != "3" || envValue([]byte(got), "FOO") != "1" {
		t.Errorf("remove took the person's env:\n%s", got)
	}

	bad := `{"env": ["CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=3"]}`
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := PlanAll(opts); err == nil || !strings.Contains(err.Error(), `"env" is not an object`) {
		t.Errorf("an env that is not an object: %v", err)
	}
	if got := read(t, path); got != bad {
		t.Errorf("the refused file changed:\n%s", got)
	}
}
