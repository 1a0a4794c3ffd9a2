package setup

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCopilotFiles: `setup copilot` writes .github/mcp.json with the
// entry Copilot CLI needs (type local, every tool) and its own hooks file
// .github/hooks/agentd.json with the version and one entry per event;
// removing takes out both files and the hooks folder, never .github.
func TestCopilotFiles(t *testing.T) {
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".github", "workflows"), 0o755)
	opts := Options{Agent: "copilot", Workspace: ws, Command: "agentd", HookCommand: "agentd-hook"}
	applyAll(t, opts)
	if got := read(t, filepath.Join(ws, ".github", "mcp.json")); !strings.Contains(got, `"type": "local",`) || !strings.Contains(got, `"tools": [`) {
		t.Errorf(".github/mcp.json:\n%s", got)
	}
	hooks := filepath.Join(ws, ".github", "hooks", "agentd.json")
	text := read(t, hooks)
	if !strings.HasPrefix(text, "{\n  \"version\": 1,\n  \"hooks\": {") || !strings.Contains(text, `"bash": "agentd-hook copilot"`) || !strings.Contains(text, `"timeoutSec": 10`) {
		t.Errorf("%s:\n%s", hooks, text)
	}
	if got := hookCommands(t, hooks); len(got) != 6 || len(got["agentStop"]) != 1 {
		t.Errorf("hooks: %q, want one entry for each of the 6 events", got)
	}
	opts.Remove = true
	applyAll(t, opts)
	for _, gone := range []string{".github/mcp.json", ".github/hooks"} {
		if _, err := os.Stat(filepath.Join(ws, gone)); !os.IsNotExist(err) {
			t.Errorf("%s after remove: %v", gone, err)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, ".github", "workflows")); err != nil {
		t.Errorf(".github/workflows after remove: %v", err)
	}
}

// TestQwenGoalToolsOff: `setup qwen` adds Qwen Code's own goal tools to
// tools.disabled beside the user's entries and other tools keys, again
// changes nothing, and remove takes out those three names only.
func TestQwenGoalToolsOff(t *testing.T) {
	ws := t.TempDir()
	path := filepath.Join(ws, ".qwen", "settings.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	before := `{"tools": {"disabled": ["web_fetch", "get_goal"], "approvalMode": "yolo"}}`
	os.WriteFile(path, []byte(before), 0o644)
	opts := Options{Agent: "qwen", Workspace: ws, Command: "agentd"}
	applyAll(t, opts)
	if got, text := qwenTools(t, path); strings.Join(got.Disabled, ",") != "web_fetch,get_goal,update_goal,propose_goal" || got.ApprovalMode != "yolo" {
		t.Errorf("%s after setup:\n%s", path, text)
	}
	for _, c := range applyAll(t, opts) {
		if c.Action != Already {
			t.Errorf("second setup: %s", c.Action)
		}
	}
	opts.Remove = true
	applyAll(t, opts)
	if got, text := qwenTools(t, path); strings.Join(got.Disabled, ",") != "web_fetch" || got.ApprovalMode != "yolo" || strings.Contains(text, "agentd") {
		t.Errorf("%s after remove:\n%s", path, text)
	}
}

type qwenToolsKey struct {
	Disabled     []string `json:"disabled"`
	ApprovalMode string   `json:"approvalMode"`
}

// qwenTools is the tools key of the Qwen Code settings file at path, and
// the file's text.
func qwenTools(t *testing.T, path string) (qwenToolsKey, string) {
	text := read(t, path)
	var f struct {
		Tools qwenToolsKey `json:"tools"`
	}
	if err := json.Unmarshal([]byte(text), &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f.Tools, text
}
