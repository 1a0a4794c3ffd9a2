package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSetupCommand: `agentd setup` from a subfolder writes the repository
// root's file; --print shows it without writing; an unparsable file is
// refused untouched with exit 1; --user writes the home folder's file with
// this agentd's full path; --remove takes the entry out again.
func TestSetupCommand(t *testing.T) {
	e := newEnv(t)
	repo := filepath.Join(e.ws, "repo")
	sub := filepath.Join(repo, "cmd")
	for _, d := range []string{filepath.Join(repo, ".git"), sub} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(repo, ".gemini", "settings.json")
	out, stderr, code := e.cliIn(sub, "setup", "gemini", "--print")
	if code != 0 || !strings.Contains(out, path) || !strings.Contains(out, `"command": "agentd"`) {
		t.Fatalf("setup --print: %s %s (exit %d)", out, stderr, code)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("--print wrote %s", path)
	}
	if out, stderr, code = e.cliIn(sub, "setup", "gemini"); code != 0 || !strings.Contains(out, "added") {
		t.Fatalf("setup gemini: %s %s (exit %d)", out, stderr, code)
	}
	written, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(written), `"args": [`) {
		t.Fatalf("%s: %s %v", path, written, err)
	}
	if out, _, code = e.cliIn(sub, "setup", "gemini"); code != 0 || !strings.Contains(out, "already") {
		t.Errorf("second setup: %s (exit %d)", out, code)
	}

	broken := filepath.Join(repo, ".mcp.json")
	if err := os.WriteFile(broken, []byte("{ not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code = e.cliIn(sub, "setup", "claude"); code != 1 || !strings.Contains(stderr, broken) || !strings.Contains(stderr, "changed nothing") {
		t.Errorf("setup claude on an unparsable file: exit %d, %s", code, stderr)
	}
	if b, _ := os.ReadFile(broken); string(b) != "{ not json" {
		t.Errorf("the unparsable file was changed: %q", b)
	}

	home := filepath.Join(e.ws, "home")
	os.MkdirAll(home, 0o700)
	cmd := e.command("setup", "claude", "--user")
	cmd.Env = append(cmd.Env, "HOME="+home)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("setup claude --user: %v %s", err, b)
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".claude.json")); !strings.Contains(string(b), `"command": "`+agentdBin+`"`) {
		t.Errorf("~/.claude.json = %s, want the full path %s", b, agentdBin)
	}

	if out, stderr, code = e.cliIn(sub, "setup", "gemini", "--remove"); code != 0 || !strings.Contains(out, "removed") {
		t.Fatalf("setup --remove: %s %s (exit %d)", out, stderr, code)
	}
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Errorf("%s still there after --remove", filepath.Dir(path))
	}
	if _, stderr, code = e.cli("setup", "vim"); code != 2 || !strings.Contains(stderr, "claude, gemini, codex, cursor") {
		t.Errorf("setup vim: exit %d, %s", code, stderr)
	}
}
