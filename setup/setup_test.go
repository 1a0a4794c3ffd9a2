package setup

import (
	"encoding/json"
	"fmt"
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

// TestMergeTOMLKeepsText: a Codex config keeps its comments and tables; the
// MCP table and Codex's goals off ([features]) are appended and removing
// them gives back the same text.
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
	if !strings.HasPrefix(got, orig) || !strings.HasSuffix(got, "\n[mcp_servers.agentd]\ncommand = \"/opt/agentd \\\"x\\\"\"\nargs = [\"mcp\"]\nenv_vars = [\"XDG_RUNTIME_DIR\", \"XDG_STATE_HOME\"]\n\n[features]\n"+codexGoalsLine) {
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
	want := "model = \"o3\"\n\n[mcp_servers.agentd]\ncommand = \"agentd\"\nargs = [\"mcp\"]\nenv_vars = [\"XDG_RUNTIME_DIR\", \"XDG_STATE_HOME\"]\n\n[profiles.fast]\nmodel = \"mini\"\n\n[features]\n" + codexGoalsLine
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
	if _, err := Plan(Options{Agent: "vim", Workspace: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "claude, gemini, codex, copilot, qwen, opencode, cursor") {
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

// isLink says whether path is a symbolic link.
func isLink(t *testing.T, path string) bool {
	t.Helper()
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}

// link makes path a symbolic link to to, creating path's folder.
func link(t *testing.T, to, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(to, path); err != nil {
		t.Fatal(err)
	}
}

// TestProjectLinkOutsideRefused: a project config file that is a symbolic
// link to a file outside the project, or lies in a linked folder that
// resolves outside it (every file setup writes, each agent), is refused by
// PlanAll for setup and for remove, with an error naming the link and where
// it points; the outside file (tokens in it) is neither read into a change
// nor written, and the link stays. A link inside the project that points out
// through another link is refused too.
func TestProjectLinkOutsideRefused(t *testing.T) {
	const secret = `{"oauth": {"access_token": "SECRET-TOKEN"}}` + "\n"
	for _, tc := range []struct {
		agent, rel string
		folder     bool // the agent's folder is the link, not the file
	}{
		{"claude", ".mcp.json", false},
		{"claude", ".claude/settings.json", false},
		{"claude", ".claude/settings.json", true},
		{"gemini", ".gemini/settings.json", false},
		{"gemini", ".gemini/settings.json", true},
		{"codex", ".codex/config.toml", false},
		{"codex", ".codex/hooks.json", false},
		{"codex", ".codex/config.toml", true},
		{"copilot", ".github/mcp.json", false},
		{"copilot", ".github/hooks/agentd.json", false},
		{"copilot", ".github/hooks/agentd.json", true},
		{"qwen", ".qwen/settings.json", false},
		{"qwen", ".qwen/settings.json", true},
		{"cursor", ".cursor/mcp.json", false},
		{"cursor", ".cursor/mcp.json", true},
	} {
		for _, remove := range []bool{false, true} {
			ws, outside := t.TempDir(), t.TempDir()
			name := fmt.Sprintf("%s %s (folder link %v, remove %v)", tc.agent, tc.rel, tc.folder, remove)
			path, at, to := filepath.Join(ws, tc.rel), filepath.Join(ws, tc.rel), filepath.Join(outside, "secrets.json")
			if tc.folder {
				at, to = filepath.Dir(path), outside
			}
			content := secret
			if strings.HasSuffix(tc.rel, ".toml") {
				content = "token = \"SECRET-TOKEN\"\n"
			}
			if err := os.WriteFile(filepath.Join(outside, map[bool]string{false: "secrets.json", true: filepath.Base(tc.rel)}[tc.folder]), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			link(t, to, at)
			cs, err := PlanAll(Options{Agent: tc.agent, Workspace: ws, Command: "agentd", Remove: remove})
			if err == nil || !strings.Contains(err.Error(), at) || !strings.Contains(err.Error(), "symbolic link to "+to) || !strings.Contains(err.Error(), "outside the project") || !strings.Contains(err.Error(), "changed nothing") {
				t.Errorf("%s: PlanAll: %v, want a refusal naming %s and %s", name, err, at, to)
			}
			for _, c := range cs {
				if strings.Contains(string(c.Before)+string(c.After), "SECRET") {
					t.Errorf("%s: a change holds the outside file's content: %s", name, c.After)
				}
			}
			if !isLink(t, at) {
				t.Errorf("%s: %s is no longer a link", name, at)
			}
			filepath.WalkDir(outside, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && read(t, p) != content {
					t.Errorf("%s: %s changed: %s", name, p, read(t, p))
				}
				return nil
			})
		}
	}

	// A link inside the project to a link that points out.
	ws, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(outside, "secrets.json"), []byte(secret), 0o600)
	link(t, filepath.Join(outside, "secrets.json"), filepath.Join(ws, "shared", "mcp.json"))
	link(t, "../shared/mcp.json", filepath.Join(ws, ".cursor", "mcp.json"))
	if _, err := PlanAll(Options{Agent: "cursor", Workspace: ws, Command: "agentd"}); err == nil || !strings.Contains(err.Error(), "outside the project") {
		t.Errorf("a chain of links out of the project: %v, want a refusal", err)
	}
}

// TestProjectHardLinkRefused: a project config file that is a hard link
// (a second name of a file outside the project, tokens in it) is refused
// for setup and for remove: no change holds its content and neither name
// changes.
func TestProjectHardLinkRefused(t *testing.T) {
	const secret = `{"oauth": {"access_token": "SECRET-TOKEN"}}` + "\n"
	for _, remove := range []bool{false, true} {
		ws, outside := t.TempDir(), t.TempDir()
		home := filepath.Join(outside, ".claude.json")
		if err := os.WriteFile(home, []byte(secret), 0o600); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(ws, ".mcp.json")
		if err := os.Link(home, path); err != nil {
			t.Skipf("no hard links here: %v", err)
		}
		cs, err := PlanAll(Options{Agent: "claude", Workspace: ws, Command: "agentd", Remove: remove})
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "hard links") || !strings.Contains(err.Error(), "changed nothing") {
			t.Errorf("remove %v: PlanAll: %v, want a refusal naming %s and its hard links", remove, err, path)
		}
		for _, c := range cs {
			if strings.Contains(string(c.Before)+string(c.After), "SECRET") {
				t.Errorf("remove %v: a change holds the other name's content: %s", remove, c.After)
			}
		}
		if read(t, home) != secret || read(t, path) != secret {
			t.Errorf("remove %v: a name changed", remove)
		}
	}
}

// TestProjectLinkInsideFollowed: a project file that links to a file inside
// the project is written through the link (the link stays, the file it
// names gets the entry, its other keys kept), and removing leaves {} there
// rather than deleting the file the link names.
func TestProjectLinkInsideFollowed(t *testing.T) {
	ws := t.TempDir()
	shared := filepath.Join(ws, "config", "cursor-mcp.json")
	os.MkdirAll(filepath.Dir(shared), 0o755)
	os.WriteFile(shared, []byte(`{"theme": "dark"}`), 0o644)
	path := filepath.Join(ws, ".cursor", "mcp.json")
	link(t, "../config/cursor-mcp.json", path)
	opts := Options{Agent: "cursor", Workspace: ws, Command: "agentd"}
	cs := applyAll(t, opts)
	if len(cs) != 1 || cs[0].Target != shared || !cs[0].Linked || cs[0].Action != Added {
		t.Fatalf("changes: %+v, want one added through the link to %s", cs, shared)
	}
	if !isLink(t, path) || !strings.Contains(read(t, shared), `"agentd"`) || !strings.Contains(read(t, shared), `"theme": "dark"`) {
		t.Errorf("after setup: link %v, %s:\n%s", isLink(t, path), shared, read(t, shared))
	}
	opts.Remove = true
	applyAll(t, opts)
	if !isLink(t, path) || strings.TrimSpace(read(t, shared)) != `{
  "theme": "dark"
}` {
		t.Errorf("after remove: link %v, %s:\n%s", isLink(t, path), shared, read(t, shared))
	}
	os.WriteFile(shared, []byte(`{"mcpServers": {}}`), 0o644)
	applyAll(t, Options{Agent: "cursor", Workspace: ws, Command: "agentd"})
	applyAll(t, opts)
	if !isLink(t, path) || read(t, shared) != "{}\n" {
		t.Errorf("after removing the last entry: link %v, %s: %q, want {}", isLink(t, path), shared, read(t, shared))
	}
}

// TestUserLinkUpdatedThrough: a dotfiles manager's links in the home folder
// (~/.claude.json a link to a file, ~/.claude a link to a folder) are
// updated through: the links stay, the files they name change, other keys
// are kept, each write goes through a temporary file beside the target;
// remove takes out agentd's entries and leaves the links and the files.
func TestUserLinkUpdatedThrough(t *testing.T) {
	home, dotfiles := t.TempDir(), t.TempDir()
	mcpFile, hooksDir := filepath.Join(dotfiles, "claude.json"), filepath.Join(dotfiles, "claude")
	os.MkdirAll(hooksDir, 0o755)
	os.WriteFile(mcpFile, []byte(`{"theme": "dark", "projects": {"/p": {"allowedTools": []}}}`), 0o600)
	os.WriteFile(filepath.Join(hooksDir, "settings.json"), []byte(`{"model": "opus"}`), 0o640)
	link(t, mcpFile, filepath.Join(home, ".claude.json"))
	link(t, hooksDir, filepath.Join(home, ".claude"))
	opts := Options{Agent: "claude", User: true, Home: home, Command: "/opt/agentd"}
	cs := applyAll(t, opts)
	if len(cs) != 2 || cs[0].Target != mcpFile || cs[1].Target != filepath.Join(hooksDir, "settings.json") {
		t.Fatalf("changes: %+v", cs)
	}
	for _, l := range []string{".claude.json", ".claude"} {
		if !isLink(t, filepath.Join(home, l)) {
			t.Errorf("~/%s is no longer a link", l)
		}
	}
	if got := read(t, mcpFile); !strings.Contains(got, `"/opt/agentd"`) || !strings.Contains(got, `"theme": "dark"`) || !strings.Contains(got, `"allowedTools"`) {
		t.Errorf("%s:\n%s", mcpFile, got)
	}
	hooks := filepath.Join(hooksDir, "settings.json")
	if got := read(t, hooks); !strings.Contains(got, "/opt/agentd hook claude") || !strings.Contains(got, `"model": "opus"`) {
		t.Errorf("%s:\n%s", hooks, got)
	}
	if fi, _ := os.Stat(hooks); fi.Mode().Perm() != 0o640 {
		t.Errorf("%s has mode %v, want its own 0640 kept", hooks, fi.Mode().Perm())
	}
	if entries, _ := os.ReadDir(home); len(entries) != 2 {
		t.Errorf("home holds %d entries, want the two links only (no temporary file)", len(entries))
	}
	opts.Remove = true
	applyAll(t, opts)
	if !isLink(t, filepath.Join(home, ".claude.json")) || !isLink(t, filepath.Join(home, ".claude")) {
		t.Errorf("a link went with --remove")
	}
	if got := read(t, mcpFile); strings.Contains(got, "agentd") || !strings.Contains(got, `"theme": "dark"`) {
		t.Errorf("%s after remove:\n%s", mcpFile, got)
	}
	if got := read(t, hooks); strings.Contains(got, "agentd") || !strings.Contains(got, `"model": "opus"`) {
		t.Errorf("%s after remove:\n%s", hooks, got)
	}

	// A linked agent folder whose file is agentd's alone: the file is
	// deleted, the folder and its link stay.
	gemini := filepath.Join(dotfiles, ".gemini")
	os.MkdirAll(gemini, 0o755)
	link(t, gemini, filepath.Join(home, ".gemini"))
	gopts := Options{Agent: "gemini", User: true, Home: home, Command: "/opt/agentd"}
	applyAll(t, gopts)
	gopts.Remove = true
	applyAll(t, gopts)
	if !isLink(t, filepath.Join(home, ".gemini")) {
		t.Errorf("~/.gemini is no longer a link after remove")
	}
	if _, err := os.Stat(gemini); err != nil {
		t.Errorf("the folder ~/.gemini names is gone: %v", err)
	}
}

// TestBrokenLinkRefused: a config file that is a link to nothing, in the
// home folder or a project, is an error that names the link and where it
// points; nothing is created.
func TestBrokenLinkRefused(t *testing.T) {
	home := t.TempDir()
	missing := filepath.Join(home, "dotfiles", "claude.json")
	link(t, missing, filepath.Join(home, ".claude.json"))
	_, err := PlanAll(Options{Agent: "claude", User: true, Home: home, Command: "agentd"})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(home, ".claude.json")+" is a symbolic link to "+missing+", which does not exist") {
		t.Errorf("~/.claude.json linked to nothing: %v", err)
	}
	ws := t.TempDir()
	link(t, "nowhere.json", filepath.Join(ws, ".mcp.json"))
	for _, remove := range []bool{false, true} {
		if _, err := PlanAll(Options{Agent: "claude", Workspace: ws, Command: "agentd", Remove: remove}); err == nil || !strings.Contains(err.Error(), "which does not exist") {
			t.Errorf("project .mcp.json linked to nothing (remove %v): %v", remove, err)
		}
	}
	if _, err := os.Lstat(missing); !os.IsNotExist(err) {
		t.Errorf("%s was created", missing)
	}
	if _, err := os.Lstat(filepath.Join(ws, "nowhere.json")); !os.IsNotExist(err) {
		t.Errorf("nowhere.json was created")
	}
}
