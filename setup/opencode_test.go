package setup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func actions(cs []Change) string {
	var a []string
	for _, c := range cs {
		a = append(a, string(c.Action))
	}
	return strings.Join(a, " ")
}

// TestOpencodeMergeAndPlugin: agentd's entry goes under "mcp" of the
// project's opencode.json beside the person's keys and servers, in their
// order, and the plugin runs the hook command without a shell; again is a
// no-op; an agentd that moved updates both; removing takes out exactly
// what setup wrote.
func TestOpencodeMergeAndPlugin(t *testing.T) {
	ws := t.TempDir()
	config := filepath.Join(ws, "opencode.json")
	mine := `{"$schema": "https://opencode.ai/config.json", "model": "x/y", "mcp": {"other": {"type": "remote", "url": "https://example.invalid/mcp"}}}`
	if err := os.WriteFile(config, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := Options{Agent: "opencode", Workspace: ws, Command: "agentd", HookCommand: "agentd-hook"}
	if cs := applyAll(t, opts); actions(cs) != "added added" {
		t.Fatalf("first setup: %s", actions(cs))
	}
	text := read(t, config)
	want := `{
  "$schema": "https://opencode.ai/config.json",
  "model": "x/y",
  "mcp": {
    "other": {
      "type": "remote",
      "url": "https://example.invalid/mcp"
    },
    "agentd": {
      "type": "local",
      "command": [
        "agentd",
        "mcp"
      ]
    }
  }
}
`
	if text != want {
		t.Errorf("opencode.json:\n%s\nwant\n%s", text, want)
	}
	plugin := filepath.Join(ws, ".opencode", "plugins", "agentd.js")
	if p := read(t, plugin); !strings.HasPrefix(p, string(pluginFirstLine)) || !strings.Contains(p, `const COMMAND = ["agentd-hook","opencode"]`+"\n") || strings.Contains(p, string(pluginCommandMark)) {
		t.Errorf("plugin:\n%s", p)
	}
	if cs := applyAll(t, opts); actions(cs) != "already already" {
		t.Errorf("second setup: %s", actions(cs))
	}
	moved := Options{Agent: "opencode", Workspace: ws, Command: "/opt/agentd bin/agentd"}
	if cs := applyAll(t, moved); actions(cs) != "updated updated" {
		t.Errorf("setup of a moved agentd: %s", actions(cs))
	}
	if p := read(t, plugin); !strings.Contains(p, `const COMMAND = ["/opt/agentd bin/agentd","hook","opencode"]`) {
		t.Errorf("plugin after the move names no `agentd hook opencode`:\n%s", p)
	}
	moved.Remove = true
	if cs := applyAll(t, moved); actions(cs) != "removed removed" {
		t.Errorf("remove: %s", actions(cs))
	}
	if got := read(t, config); !strings.Contains(got, `"other"`) || strings.Contains(got, `"agentd"`) || !strings.Contains(got, `"model": "x/y"`) {
		t.Errorf("opencode.json after remove:\n%s", got)
	}
	if _, err := os.Stat(plugin); !os.IsNotExist(err) {
		t.Errorf("plugin still there after remove (%v)", err)
	}
	if cs := applyAll(t, moved); actions(cs) != "absent absent" {
		t.Errorf("second remove: %s", actions(cs))
	}
}

// TestOpencodeRefusals: a plugin file setup did not write, and an agentd
// entry it did not write, are refused, and neither file changes.
func TestOpencodeRefusals(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"someone's plugin": {".opencode/plugins/agentd.js": "export const Mine = async () => ({})\n"},
		"someone's entry":  {"opencode.json": `{"mcp": {"agentd": {"type": "remote", "url": "https://example.invalid"}}}`},
		"mcp not object":   {"opencode.json": `{"mcp": []}`},
	} {
		t.Run(name, func(t *testing.T) {
			ws := t.TempDir()
			for rel, text := range files {
				p := filepath.Join(ws, rel)
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, remove := range []bool{false, true} {
				_, err := PlanAll(Options{Agent: "opencode", Workspace: ws, Command: "agentd", Remove: remove})
				if err == nil || !strings.Contains(err.Error(), "changed nothing") {
					t.Errorf("remove %v: %v, want a refusal", remove, err)
				}
			}
			for rel, text := range files {
				if got := read(t, filepath.Join(ws, rel)); got != text {
					t.Errorf("%s changed:\n%s", rel, got)
				}
			}
		})
	}
}

// TestOpencodePluginLinkOutsideRefused: a project's plugins folder linked
// outside the project is refused before anything is written (docs/mcp.md,
// "Symbolic links").
func TestOpencodePluginLinkOutsideRefused(t *testing.T) {
	ws, outside := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".opencode"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, ".opencode", "plugins")); err != nil {
		t.Fatal(err)
	}
	if _, err := PlanAll(Options{Agent: "opencode", Workspace: ws, Command: "agentd"}); err == nil {
		t.Fatal("a plugins folder linked outside the project was accepted")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("setup wrote outside the project: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(ws, "opencode.json")); !os.IsNotExist(err) {
		t.Errorf("opencode.json was written although the plugin was refused (%v)", err)
	}
}

// TestOpencodeUserScope: --user writes opencode's files in the home
// folder's .config/opencode.
func TestOpencodeUserScope(t *testing.T) {
	home := t.TempDir()
	cs, err := PlanAll(Options{Agent: "opencode", User: true, Home: home, Command: "/usr/local/bin/agentd"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(home, ".config", "opencode", "opencode.json"), filepath.Join(home, ".config", "opencode", "plugins", "agentd.js")}
	if len(cs) != 2 || cs[0].Path != want[0] || cs[1].Path != want[1] {
		t.Errorf("user scope files: %+v, want %v", cs, want)
	}
}
