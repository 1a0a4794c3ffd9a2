package setup

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCodexGoalsOff: setup turns Codex's own goals off under the file's
// [features] table (its other keys kept), leaves a goals key the user set
// as it is, and --remove takes out its line and the table it emptied.
func TestCodexGoalsOff(t *testing.T) {
	ws := t.TempDir()
	path := filepath.Join(ws, ".codex", "config.toml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts := Options{Agent: "codex", Workspace: ws, Command: "agentd"}
	orig := "[features]\nhooks = true\n"
	write(orig)
	apply(t, opts)
	if got := read(t, path); !strings.HasPrefix(got, "[features]\n"+codexGoalsLine+"hooks = true\n") {
		t.Errorf("setup into a file with [features]:\n%s", got)
	}
	remove := opts
	remove.Remove = true
	apply(t, remove)
	if got := read(t, path); got != orig {
		t.Errorf("after remove: %q, want the original %q", got, orig)
	}

	user := "[features]\ngoals = true\n"
	write(user)
	apply(t, opts)
	if got := read(t, path); !strings.HasPrefix(got, user) || strings.Count(got, "goals") != 1 {
		t.Errorf("the user's goals = true was changed:\n%s", got)
	}

	write("features = { hooks = true }\n")
	if _, err := Plan(opts); err == nil || !strings.Contains(err.Error(), "add it by hand") {
		t.Errorf("features as an inline table: %v, want a refusal saying to add the line by hand", err)
	}
}

// TestCodexHooksRetired: an older setup's StopFailure group (an event
// Codex 0.169 lacks) is taken out by setup, which says the file was
// updated; another tool's StopFailure group stays.
func TestCodexHooksRetired(t *testing.T) {
	ws := t.TempDir()
	opts := Options{Agent: "codex", Workspace: ws, Command: "agentd"}
	applyAll(t, opts)
	path := filepath.Join(ws, ".codex", "hooks.json")
	var doc map[string]map[string][]any
	if err := json.Unmarshal([]byte(read(t, path)), &doc); err != nil {
		t.Fatal(err)
	}
	old := hookGroup("codex", hookCommand(opts), hookEvent{"StopFailure", ""})
	other := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "notify-send failed"}}}
	doc["hooks"]["StopFailure"] = []any{old, other}
	b, _ := json.Marshal(doc)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cs := applyAll(t, opts)
	if cs[1].Action != Updated {
		t.Errorf("setup over an older setup's StopFailure group: %s, want updated", cs[1].Action)
	}
	got := hookCommands(t, path)
	if len(got["StopFailure"]) != 1 || !strings.Contains(got["StopFailure"][0], "notify-send") {
		t.Errorf("hooks.StopFailure after setup: %q, want only the other tool's group", got["StopFailure"])
	}
	for _, ev := range []string{"Interrupt", "SessionEnd"} {
		if len(got[ev]) != 1 {
			t.Errorf("hooks.%s = %q, want agentd's group", ev, got[ev])
		}
	}
}
