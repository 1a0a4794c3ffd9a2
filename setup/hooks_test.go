package setup

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// applyAll plans all files and applies them, failing the test on an error.
func applyAll(t *testing.T, opts Options) []Change {
	t.Helper()
	cs, err := PlanAll(opts)
	if err != nil {
		t.Fatalf("PlanAll(%+v): %v", opts, err)
	}
	for _, c := range cs {
		if err := c.Apply(); err != nil {
			t.Fatalf("Apply %s: %v", c.Path, err)
		}
	}
	return cs
}

// hookCommands lists, per event, the commands of the hooks in a file.
func hookCommands(t *testing.T, path string) map[string][]string {
	t.Helper()
	var f struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
				Timeout int    `json:"timeout"`
			} `json:"hooks"`
			// Copilot CLI's entries have no group around them.
			Type string `json:"type"`
			Bash string `json:"bash"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(read(t, path)), &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := map[string][]string{}
	for ev, groups := range f.Hooks {
		for _, g := range groups {
			if g.Bash != "" {
				out[ev] = append(out[ev], "|"+g.Type+"|"+g.Bash)
			}
			for _, h := range g.Hooks {
				out[ev] = append(out[ev], g.Matcher+"|"+h.Type+"|"+h.Command)
			}
		}
	}
	return out
}

// TestHooksFreshEachAgent: claude, gemini, codex, copilot and qwen get agentd hook on
// every event it handles, in the agent's hooks file; cursor gets none;
// again is a no-op; remove takes every file out again.
func TestHooksFreshEachAgent(t *testing.T) {
	for agent, rel := range map[string]string{"claude": ".claude/settings.json", "gemini": ".gemini/settings.json", "codex": ".codex/hooks.json",
		"copilot": ".github/hooks/agentd.json", "qwen": ".qwen/settings.json"} {
		t.Run(agent, func(t *testing.T) {
			ws := t.TempDir()
			opts := Options{Agent: agent, Workspace: ws, Command: "agentd"}
			cs := applyAll(t, opts)
			path := filepath.Join(ws, rel)
			got := hookCommands(t, path)
			for _, ev := range hookEvents[agent] {
				want := ev.matcher + "|command|agentd hook " + agent
				if len(got[ev.name]) != 1 || got[ev.name][0] != want {
					t.Errorf("%s hooks.%s = %q, want [%q]", path, ev.name, got[ev.name], want)
				}
			}
			if len(got) != len(hookEvents[agent]) {
				t.Errorf("%s has hooks for %d events, want %d", path, len(got), len(hookEvents[agent]))
			}
			wantFiles := 2
			if agent == "gemini" || agent == "qwen" {
				wantFiles = 1 // the MCP server and the hooks share settings.json
				if !strings.Contains(read(t, path), `"mcpServers"`) {
					t.Errorf("%s lost the MCP server:\n%s", path, read(t, path))
				}
			}
			if len(cs) != wantFiles {
				t.Errorf("%d changes, want %d", len(cs), wantFiles)
			}
			before := read(t, path)
			for _, c := range applyAll(t, opts) {
				if c.Action != Already {
					t.Errorf("second setup of %s: %s", c.Path, c.Action)
				}
			}
			if read(t, path) != before {
				t.Errorf("second setup changed %s", path)
			}
			opts.Remove = true
			for _, c := range applyAll(t, opts) {
				if c.Action != Removed {
					t.Errorf("remove %s: %s", c.Path, c.Action)
				}
			}
			if entries, _ := os.ReadDir(ws); len(entries) != 0 {
				t.Errorf("after remove the project still has %v", entries)
			}
			for _, c := range applyAll(t, opts) {
				if c.Action != Absent {
					t.Errorf("second remove of %s: %s", c.Path, c.Action)
				}
			}
		})
	}
	cs := applyAll(t, Options{Agent: "cursor", Workspace: t.TempDir(), Command: "agentd"})
	if len(cs) != 1 {
		t.Errorf("cursor: %d changes, want the MCP file only", len(cs))
	}
}

// TestHooksMergeKeepsOthers: other settings and other tools' hook groups
// stay as they were; remove takes out only agentd's.
func TestHooksMergeKeepsOthers(t *testing.T) {
	ws := t.TempDir()
	path := filepath.Join(ws, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	orig := `{"permissions":{"allow":["Bash(go test:*)"]},"hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify-send done"}]}]},"model":"opus"}`
	if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := Options{Agent: "claude", Workspace: ws, Command: "/opt/agent d/agentd"}
	applyAll(t, opts)
	got := hookCommands(t, path)
	if want := []string{"|command|notify-send done", "|command|'/opt/agent d/agentd' hook claude"}; strings.Join(got["Stop"], ",") != strings.Join(want, ",") {
		t.Errorf("hooks.Stop = %q, want %q", got["Stop"], want)
	}
	text := read(t, path)
	if !strings.Contains(text, `"Bash(go test:*)"`) || strings.Index(text, `"permissions"`) > strings.Index(text, `"model"`) {
		t.Errorf("other keys changed or reordered:\n%s", text)
	}
	opts.Remove = true
	applyAll(t, opts)
	var a, b any
	json.Unmarshal([]byte(orig), &a)
	json.Unmarshal([]byte(read(t, path)), &b)
	if ga, _ := json.Marshal(a); string(ga) != mustMarshal(b) {
		t.Errorf("after remove:\n%s\nwant the original\n%s", read(t, path), orig)
	}
}

func mustMarshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestHooksRefusals: an unparsable hooks file, or an agentd hook group that
// setup did not write, refuses the whole setup: no file is written.
func TestHooksRefusals(t *testing.T) {
	for name, content := range map[string]string{
		"unparsable":       "{ not json",
		"hooks not object": `{"hooks": []}`,
		"event not array":  `{"hooks": {"Stop": {}}}`,
		"edited group":     `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "agentd hook claude", "timeout": 99}]}]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			ws := t.TempDir()
			path := filepath.Join(ws, ".claude", "settings.json")
			os.MkdirAll(filepath.Dir(path), 0o755)
			os.WriteFile(path, []byte(content), 0o644)
			_, err := PlanAll(Options{Agent: "claude", Workspace: ws, Command: "agentd"})
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "changed nothing") {
				t.Errorf("PlanAll: %v, want a refusal naming %s", err, path)
			}
			if read(t, path) != content {
				t.Errorf("%s was changed", path)
			}
			if _, err := os.Stat(filepath.Join(ws, ".mcp.json")); !os.IsNotExist(err) {
				t.Errorf(".mcp.json was written although the hooks file was refused")
			}
		})
	}
}

// TestMovedBinaryEachAgent: an MCP entry and hooks that setup wrote for an
// agentd at another path (the binary moved, or another build runs setup)
// are setup's own: setting up again updates them to the new path in place
// (other keys stay), again is a no-op, and --remove from the new binary
// takes them out. An entry of another shape is still refused.
func TestMovedBinaryEachAgent(t *testing.T) {
	const old, moved = "/old dir/it's/agentd", "/usr/local/bin/agentd"
	for _, agent := range Agents {
		t.Run(agent, func(t *testing.T) {
			home := t.TempDir()
			opts := Options{Agent: agent, User: true, Home: home, Command: old}
			first := applyAll(t, opts)
			opts.Command = moved
			var paths []string
			for _, c := range applyAll(t, opts) {
				paths = append(paths, c.Path)
				if c.Action != Updated {
					t.Errorf("setup from the moved binary, %s: %s, want updated", c.Path, c.Action)
				}
				text := read(t, c.Path)
				if strings.Contains(text, "old dir") || !strings.Contains(text, moved) {
					t.Errorf("%s after the update:\n%s", c.Path, text)
				}
			}
			if len(paths) != len(first) {
				t.Fatalf("%d files updated, %d written first", len(paths), len(first))
			}
			if agent != "cursor" && agent != "opencode" {
				if got := hookCommands(t, paths[len(paths)-1]); len(got) != len(hookEvents[agent]) || len(got[hookEvents[agent][0].name]) != 1 {
					t.Errorf("hooks after the update: %q, want one group per event", got)
				}
			}
			for _, c := range applyAll(t, opts) {
				if c.Action != Already {
					t.Errorf("second setup of %s: %s", c.Path, c.Action)
				}
			}
			opts.Command = old
			applyAll(t, opts)
			opts.Command, opts.Remove = moved, true
			for _, c := range applyAll(t, opts) {
				if c.Action != Removed {
					t.Errorf("remove from the moved binary, %s: %s", c.Path, c.Action)
				}
			}
			left := home
			if agent == "opencode" { // ~/.config is not opencode's
				left = filepath.Join(home, ".config")
			}
			if entries, _ := os.ReadDir(left); len(entries) != 0 {
				t.Errorf("after remove %s still has %v", left, entries)
			}
		})
	}
}

// TestMovedBinaryOtherShapeRefused: an entry or hook group naming another
// program, or agentd with other arguments, is not setup's, whatever the path.
func TestMovedBinaryOtherShapeRefused(t *testing.T) {
	for name, tc := range map[string]struct{ agent, rel, content string }{
		"claude other program": {"claude", ".claude.json", `{"mcpServers": {"agentd": {"type": "stdio", "command": "/opt/agentd-fork", "args": ["mcp"]}}}`},
		"gemini other args":    {"gemini", ".gemini/settings.json", `{"mcpServers": {"agentd": {"command": "/opt/agentd", "args": ["mcp", "--session", "x"]}}}`},
		"cursor extra key":     {"cursor", ".cursor/mcp.json", `{"mcpServers": {"agentd": {"command": "/opt/agentd", "args": ["mcp"], "env": {"A": "1"}}}}`},
		"codex other program":  {"codex", ".codex/config.toml", "[mcp_servers.agentd]\ncommand = \"/opt/not-agentd\"\nargs = [\"mcp\"]\n"},
		"claude hook timeout":  {"claude", ".claude/settings.json", `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/opt/agentd hook claude", "timeout": 99}]}]}}`},
		"gemini hook program":  {"gemini", ".gemini/settings.json", `{"hooks": {"AfterAgent": [{"hooks": [{"type": "command", "command": "/opt/my-agentd hook gemini", "timeout": 10000}]}]}}`},
		"codex hook extra arg": {"codex", ".codex/hooks.json", `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/opt/agentd -v hook codex", "timeout": 10}]}]}}`},
	} {
		for _, remove := range []bool{false, true} {
			home := t.TempDir()
			path := filepath.Join(home, tc.rel)
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := PlanAll(Options{Agent: tc.agent, User: true, Home: home, Command: "/usr/local/bin/agentd", Remove: remove})
			if err == nil || !strings.Contains(err.Error(), "did not write") || !strings.Contains(err.Error(), path) {
				t.Errorf("%s (remove %v): %v, want a refusal naming %s", name, remove, err, path)
			}
		}
	}
}

// TestUserCommandTemporaryBuild: an agentd under the temp folder or Go's
// build cache (go run) gets plain agentd; one elsewhere its own path.
func TestUserCommandTemporaryBuild(t *testing.T) {
	base := t.TempDir()
	tmp, cache, goTmp := filepath.Join(base, "tmp"), filepath.Join(base, "cache"), filepath.Join(base, "gotmp")
	t.Setenv("TMPDIR", tmp)
	t.Setenv("GOCACHE", cache)
	t.Setenv("GOTMPDIR", goTmp)
	for exe, want := range map[string]string{
		filepath.Join(tmp, "go-build1/b001/exe/agentd"): "agentd",
		filepath.Join(cache, "ab/cdef-d/agentd"):        "agentd",
		filepath.Join(goTmp, "go-build2/exe/agentd"):    "agentd",
		filepath.Join(base, "bin/agentd"):               filepath.Join(base, "bin/agentd"),
		tmp + "x/agentd":                                tmp + "x/agentd",
	} {
		got, temporary := UserCommand(exe)
		if got != want || temporary != (want == "agentd") {
			t.Errorf("UserCommand(%s) = %q, %v, want %q", exe, got, temporary, want)
		}
	}
}

// TestHookCommandFor: agentd-hook is named only when it sits beside the
// running agentd as an executable file, the way the entries name agentd.
func TestHookCommandFor(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "agentd")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := HookCommandFor(exe, exe); got != "" {
		t.Errorf("no agentd-hook beside agentd: %q, want \"\"", got)
	}
	lean := filepath.Join(dir, HookProgram)
	if err := os.WriteFile(lean, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := HookCommandFor(exe, exe); got != "" {
		t.Errorf("agentd-hook not executable: %q, want \"\"", got)
	}
	if err := os.Chmod(lean, 0o755); err != nil {
		t.Fatal(err)
	}
	for command, want := range map[string]string{exe: lean, "agentd": HookProgram, "/usr/local/bin/agentd": "/usr/local/bin/agentd-hook"} {
		if got := HookCommandFor(exe, command); got != want {
			t.Errorf("HookCommandFor(%s, %s) = %q, want %q", exe, command, got, want)
		}
	}
}

// TestHooksLeanProgram: with agentd-hook, every event runs `agentd-hook
// AGENT`; again is a no-op; either form is setup's own, so setup from an
// agentd with or without agentd-hook beside it updates the other form in
// place, and remove takes out either; an edited agentd-hook group is
// refused as not setup's.
func TestHooksLeanProgram(t *testing.T) {
	for agent, rel := range map[string]string{"claude": ".claude/settings.json", "gemini": ".gemini/settings.json", "codex": ".codex/hooks.json"} {
		t.Run(agent, func(t *testing.T) {
			ws := t.TempDir()
			path := filepath.Join(ws, rel)
			lean := Options{Agent: agent, Workspace: ws, Command: "agentd", HookCommand: "/opt/agent d/agentd-hook"}
			plain := Options{Agent: agent, Workspace: ws, Command: "agentd"}
			check := func(when, want string) {
				t.Helper()
				got := hookCommands(t, path)
				for _, ev := range hookEvents[agent] {
					if w := ev.matcher + "|command|" + want; len(got[ev.name]) != 1 || got[ev.name][0] != w {
						t.Errorf("%s: hooks.%s = %q, want [%q]", when, ev.name, got[ev.name], w)
					}
				}
			}
			applyAll(t, lean)
			check("setup with agentd-hook", "'/opt/agent d/agentd-hook' "+agent)
			for _, c := range applyAll(t, lean) {
				if c.Action != Already {
					t.Errorf("second setup of %s: %s", c.Path, c.Action)
				}
			}
			for _, step := range []struct {
				opts Options
				want string
			}{{plain, "agentd hook " + agent}, {lean, "'/opt/agent d/agentd-hook' " + agent}} {
				var hooks Action
				for _, c := range applyAll(t, step.opts) {
					if c.Path == path {
						hooks = c.Action
					}
				}
				if hooks != Updated {
					t.Errorf("setup to %q: the hooks file is %s, want updated", step.want, hooks)
				}
				check("setup to "+step.want, step.want)
			}
			plain.Remove = true
			applyAll(t, plain)
			if entries, _ := os.ReadDir(ws); len(entries) != 0 {
				t.Errorf("remove without agentd-hook left %v", entries)
			}
			edited := `{"hooks": {"` + hookEvents[agent][0].name + `": [{"hooks": [{"type": "command", "command": "agentd-hook ` + agent + `", "timeout": 99}]}]}}`
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := PlanAll(lean); err == nil || !strings.Contains(err.Error(), "did not write") {
				t.Errorf("an edited agentd-hook group: %v, want a refusal", err)
			}
		})
	}
}

// TestRetiredHookEventTakenOut: a Gemini CLI settings file an older setup
// wrote, with agentd's AfterModel hook (run once per streamed chunk, issue
// 26) beside a hook of another tool on the same event: setup updates the
// file, taking agentd's AfterModel group out and leaving the other; a
// second run changes nothing; --remove takes out an AfterModel group left
// over too (and with it the file, which held only agentd's entries).
func TestRetiredHookEventTakenOut(t *testing.T) {
	ws := t.TempDir()
	opts := Options{Agent: "gemini", Workspace: ws, Command: "agentd", HookCommand: "agentd-hook"}
	applyAll(t, opts)
	path := filepath.Join(ws, ".gemini", "settings.json")
	var settings map[string]any
	if err := json.Unmarshal([]byte(read(t, path)), &settings); err != nil {
		t.Fatal(err)
	}
	older := hookGroup("gemini", "agentd-hook gemini", hookEvent{"AfterModel", ""})
	other := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "my-logger"}}}
	settings["hooks"].(map[string]any)["AfterModel"] = []any{other, older}
	if err := os.WriteFile(path, []byte(mustMarshal(settings)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range applyAll(t, opts) {
		if c.Action != Updated {
			t.Errorf("setup over an older setup's file: %s, want updated", c.Action)
		}
	}
	if got := hookCommands(t, path)["AfterModel"]; len(got) != 1 || got[0] != "|command|my-logger" {
		t.Errorf("hooks.AfterModel after setup: %q, want only the other tool's", got)
	}
	for _, c := range applyAll(t, opts) {
		if c.Action != Already {
			t.Errorf("second setup: %s, want already", c.Action)
		}
	}
	settings["hooks"].(map[string]any)["AfterModel"] = []any{older}
	if err := os.WriteFile(path, []byte(mustMarshal(settings)), 0o644); err != nil {
		t.Fatal(err)
	}
	opts.Remove = true
	applyAll(t, opts)
	if text, err := os.ReadFile(path); !os.IsNotExist(err) {
		t.Errorf("after --remove: %v\n%s", err, text)
	}
}
