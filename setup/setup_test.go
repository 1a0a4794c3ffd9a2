package setup

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// apply plans and applies, failing the test on an error.
func apply(t *testing.T, opts Options) Change {
	t.Helper()
	c, err := Plan(opts)
	if err != nil {
		t.Fatalf("Plan(%+v): %v", opts, err)
	}
	if err := c.Apply(); err != nil {
		t.Fatalf("Apply %s: %v", c.Path, err)
	}
	return c
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFreshFileEachAgent: into a project with no config, each agent gets its
// documented file and entry; again is a no-op; removing deletes the file and
// the agent's folder that setup created.
func TestFreshFileEachAgent(t *testing.T) {
	for agent, want := range map[string]struct{ rel, text string }{
		"claude": {".mcp.json", `"mcpServers": {` + "\n" + `    "agentd": {` + "\n" + `      "type": "stdio",` + "\n" + `      "command": "agentd",`},
		"gemini": {".gemini/settings.json", `"agentd": {` + "\n" + `      "command": "agentd",`},
		"cursor": {".cursor/mcp.json", `"agentd": {` + "\n" + `      "command": "agentd",`},
		"codex":  {".codex/config.toml", "[mcp_servers.agentd]\ncommand = \"agentd\"\nargs = [\"mcp\"]\nenv_vars = [\"XDG_RUNTIME_DIR\", \"XDG_STATE_HOME\"]\n"},
	} {
		t.Run(agent, func(t *testing.T) {
			ws := t.TempDir()
			opts := Options{Agent: agent, Workspace: ws, Command: "agentd"}
			c := apply(t, opts)
			path := filepath.Join(ws, want.rel)
			if c.Action != Added || c.Path != path {
				t.Fatalf("first setup: %s %s, want added %s", c.Action, c.Path, path)
			}
			text := read(t, path)
			if !strings.Contains(text, want.text) {
				t.Errorf("%s:\n%s\nwant it to contain\n%s", path, text, want.text)
			}
			if agent != "codex" && !json.Valid([]byte(text)) {
				t.Errorf("%s is not JSON:\n%s", path, text)
			}
			if c := apply(t, opts); c.Action != Already || read(t, path) != text {
				t.Errorf("second setup: %s, file changed: %v", c.Action, read(t, path) != text)
			}
			opts.Remove = true
			if c := apply(t, opts); c.Action != Removed {
				t.Errorf("remove: %s", c.Action)
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("%s still there after remove (%v)", path, err)
			}
			if dir := filepath.Dir(path); dir != ws {
				if _, err := os.Stat(dir); !os.IsNotExist(err) {
					t.Errorf("%s still there after remove", dir)
				}
			}
			if c := apply(t, opts); c.Action != Absent {
				t.Errorf("second remove: %s, want absent", c.Action)
			}
		})
	}
}

// TestMergeJSONKeepsOtherKeys: other keys and other servers stay, in their
// order; removing gives back the same file.
func TestMergeJSONKeepsOtherKeys(t *testing.T) {
	ws := t.TempDir()
	path := filepath.Join(ws, ".mcp.json")
	orig := "{\n  \"zeta\": 1,\n  \"mcpServers\": {\n    \"other\": {\n      \"command\": \"x\",\n      \"env\": {\n        \"B\": \"2\",\n        \"A\": \"1\"\n      }\n    }\n  },\n  \"alpha\": [\n    true,\n    null\n  ]\n}\n"
	if err := os.WriteFile(path, []byte(orig), 0o640); err != nil {
		t.Fatal(err)
	}
	opts := Options{Agent: "claude", Workspace: ws, Command: "agentd"}
	apply(t, opts)
	got := read(t, path)
	var doc struct {
		Zeta       int
		Alpha      []any
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(got), &doc); err != nil || doc.Zeta != 1 || len(doc.Alpha) != 2 || doc.MCPServers["other"]["command"] != "x" || doc.MCPServers["agentd"]["command"] != "agentd" {
		t.Fatalf("merged file lost something (%v):\n%s", err, got)
	}
	if i, j, k := strings.Index(got, "zeta"), strings.Index(got, "mcpServers"), strings.Index(got, "alpha"); !(i < j && j < k) || strings.Index(got, `"B"`) > strings.Index(got, `"A"`) {
		t.Errorf("key order not kept:\n%s", got)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the file's 0640 kept", fi.Mode().Perm())
	}
	opts.Remove = true
	apply(t, opts)
	if got := read(t, path); got != orig {
		t.Errorf("after remove:\n%s\nwant the original:\n%s", got, orig)
	}
}

// TestMergeTOMLKeepsText: a Codex config keeps its comments and tables; one
// table is appended and removing it gives back the same text.
func TestMergeTOMLKeepsText(t *testing.T) {
	home := t.TempDir()
	codexHome := filepath.Join(home, "codex-home")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(codexHome, "config.toml")
	orig := "# my settings\nmodel = \"o3\" # inline comment\n\n[mcp_servers.other]\ncommand = \"x\"\n\n[profiles.fast]\nmodel = \"mini\"\n"
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := Options{Agent: "codex", User: true, Home: home, CodexHome: codexHome, Command: "/opt/agentd \"x\""}
	c := apply(t, opts)
	if c.Path != path {
		t.Fatalf("path %s, want $CODEX_HOME/config.toml %s", c.Path, path)
	}
	got := read(t, path)
	if !strings.HasPrefix(got, orig) || !strings.HasSuffix(got, "\n[mcp_servers.agentd]\ncommand = \"/opt/agentd \\\"x\\\"\"\nargs = [\"mcp\"]\nenv_vars = [\"XDG_RUNTIME_DIR\", \"XDG_STATE_HOME\"]\n") {
		t.Fatalf("merged TOML:\n%s", got)
	}
	if c := apply(t, opts); c.Action != Already {
		t.Errorf("second setup: %s", c.Action)
	}
	opts.Remove = true
	apply(t, opts)
	if got := read(t, path); got != orig {
		t.Errorf("after remove:\n%q\nwant the original:\n%q", got, orig)
	}

	// A table in the middle comes out without touching what follows.
	mid := "[mcp_servers.agentd]\ncommand = \"agentd\"\nargs = [\"mcp\"]\n\n[profiles.fast]\nmodel = \"mini\"\n"
	if err := os.WriteFile(path, []byte(mid), 0o600); err != nil {
		t.Fatal(err)
	}
	opts.Command = "agentd"
	apply(t, opts)
	if got := read(t, path); got != "\n[profiles.fast]\nmodel = \"mini\"\n" {
		t.Errorf("after removing a table in the middle: %q", got)
	}
}

// TestCodexEnvVars: Codex passes its MCP servers only HOME, PATH, SHELL,
// TERM, TMPDIR and LANG, so setup's Codex entry passes on XDG_RUNTIME_DIR
// and XDG_STATE_HOME (docs/hooks.md, "What each agent passes"); an entry
// setup wrote before without them is its own and gets them, with the
// file's other text as it was.
func TestCodexEnvVars(t *testing.T) {
	ws := t.TempDir()
	path := filepath.Join(ws, ".codex", "config.toml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	before := "model = \"o3\"\n\n[mcp_servers.agentd]\ncommand = \"agentd\"\nargs = [\"mcp\"]\n\n[profiles.fast]\nmodel = \"mini\"\n"
	if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := Options{Agent: "codex", Workspace: ws, Command: "agentd"}
	if c := apply(t, opts); c.Action != Updated {
		t.Fatalf("setup over the entry without env_vars: %s, want updated", c.Action)
	}
	want := "model = \"o3\"\n\n[mcp_servers.agentd]\ncommand = \"agentd\"\nargs = [\"mcp\"]\nenv_vars = [\"XDG_RUNTIME_DIR\", \"XDG_STATE_HOME\"]\n\n[profiles.fast]\nmodel = \"mini\"\n"
	if got := read(t, path); got != want {
		t.Errorf("after setup:\n%s\nwant\n%s", got, want)
	}
	if c := apply(t, opts); c.Action != Already {
		t.Errorf("second setup: %s, want already", c.Action)
	}
}

// TestRefusals: a file that does not parse, an mcpServers that is not an
// object, and an agentd entry setup did not write are refused by Plan, so
// nothing is written; the error names the file.
func TestRefusals(t *testing.T) {
	for _, tc := range []struct {
		agent, rel, content, want string
		remove                    bool
	}{
		{"claude", ".mcp.json", "{\"mcpServers\": {", "is not a JSON object", false},
		{"gemini", ".gemini/settings.json", "[1, 2]", "is not a JSON object", false},
		{"cursor", ".cursor/mcp.json", `{"mcpServers": []}`, `"mcpServers" is not an object`, false},
		{"claude", ".mcp.json", `{"mcpServers": {"agentd": {"command": "agentd", "args": ["mcp", "--session", "x"]}}}`, "did not write", false},
		{"claude", ".mcp.json", `{"mcpServers": {"agentd": {"command": "other"}}}`, "did not write", true},
		{"codex", ".codex/config.toml", "model = \n", "is not valid TOML", false},
		{"codex", ".codex/config.toml", "[mcp_servers.agentd]\ncommand = \"agentd\"\nargs = [\"mcp\"]\nenv = { A = \"1\" }\n", "did not write", true},
		{"codex", ".codex/config.toml", "mcp_servers = { agentd = { command = \"agentd\", args = [\"mcp\"] } }\n", "another form", true},
		{"codex", ".codex/config.toml", "mcp_servers = 3\n", "cannot add", false},
	} {
		ws := t.TempDir()
		path := filepath.Join(ws, tc.rel)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Plan(Options{Agent: tc.agent, Workspace: ws, Command: "agentd", Remove: tc.remove})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s %q (remove %v): %v, want an error naming %s and saying %q", tc.agent, tc.content, tc.remove, err, path, tc.want)
		}
	}
	if _, err := Plan(Options{Agent: "vim", Workspace: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "claude, gemini, codex, cursor") {
		t.Errorf("unknown agent: %v", err)
	}
}

// TestUserScopePaths: --user writes the files in the home folder.
func TestUserScopePaths(t *testing.T) {
	home := t.TempDir()
	for agent, rel := range map[string]string{"claude": ".claude.json", "gemini": ".gemini/settings.json", "codex": ".codex/config.toml", "cursor": ".cursor/mcp.json"} {
		c, err := Plan(Options{Agent: agent, User: true, Home: home, Command: "/usr/local/bin/agentd"})
		if err != nil || c.Path != filepath.Join(home, rel) || !strings.Contains(string(c.After), "/usr/local/bin/agentd") {
			t.Errorf("%s --user: %s, %v", agent, c.Path, err)
		}
	}
}

// TestCommentsNotLost: a JSON file with comments (Gemini CLI accepts them)
// is read, comments left out, but never written: Refusal and Apply say it
// has comments and what to do, the file stays as it was, and After shows
// the entries to copy by hand; strings that look like comments are text.
func TestCommentsNotLost(t *testing.T) {
	for _, tc := range []struct{ agent, rel string }{
		{"gemini", ".gemini/settings.json"},
		{"claude", ".claude/settings.json"},
		{"cursor", ".cursor/mcp.json"},
	} {
		ws := t.TempDir()
		path := filepath.Join(ws, tc.rel)
		os.MkdirAll(filepath.Dir(path), 0o755)
		orig := "// my settings\n{\n  \"theme\": \"GitHub\", /* for now */\n  \"url\": \"http://x//y/*z*/\", \"q\": \"a\\\"//b\"\n}\n"
		if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
			t.Fatal(err)
		}
		cs, err := PlanAll(Options{Agent: tc.agent, Workspace: ws, Command: "agentd"})
		if err != nil {
			t.Fatalf("%s: PlanAll: %v", tc.agent, err)
		}
		var c Change
		for _, ch := range cs {
			if ch.Path == path {
				c = ch
			}
		}
		if !c.Comments || c.Refusal() == nil || !strings.Contains(c.Refusal().Error(), "has comments") || !strings.Contains(c.Refusal().Error(), "--print") || !strings.Contains(c.Refusal().Error(), path) {
			t.Errorf("%s: change of %s: comments %v, refusal %v", tc.agent, path, c.Comments, c.Refusal())
		}
		if err := c.Apply(); err == nil || read(t, path) != orig {
			t.Errorf("%s: Apply: %v, file now:\n%s", tc.agent, err, read(t, path))
		}
		var doc map[string]any
		if err := json.Unmarshal(c.After, &doc); err != nil || doc["theme"] != "GitHub" || doc["url"] != "http://x//y/*z*/" || doc["q"] != `a"//b` {
			t.Errorf("%s: After (%v):\n%s", tc.agent, err, c.After)
		}
	}

	// Already set up: nothing to write, so nothing refused.
	ws := t.TempDir()
	opts := Options{Agent: "cursor", Workspace: ws, Command: "agentd"}
	apply(t, opts)
	path := filepath.Join(ws, ".cursor", "mcp.json")
	os.WriteFile(path, []byte("// mine\n"+read(t, path)), 0o644)
	if c, err := Plan(opts); err != nil || c.Action != Already || c.Refusal() != nil {
		t.Errorf("set up file with comments: %v %s %v", err, c.Action, c.Refusal())
	}
}
