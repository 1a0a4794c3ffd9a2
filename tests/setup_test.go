package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSetupCommand: `agentd setup` from a subfolder writes the repository
// root's file; --print shows it without writing; an unparsable file is
// refused untouched with exit 1; --user from a temporary build (this test's
// agentd is in the temp folder, as go run's is) writes plain agentd and says
// why; --remove takes the entry out again.
func TestSetupCommand(t *testing.T) {
	t.Parallel()
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
	cmd.Env = append(cmd.Env, "HOME="+home, "TMPDIR="+filepath.Dir(filepath.Dir(agentdBin)))
	b, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(b), "temporary build") || !strings.Contains(string(b), "build or install agentd") {
		t.Fatalf("setup claude --user from a temporary build: %v %s", err, b)
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".claude.json")); !strings.Contains(string(b), `"command": "agentd"`) {
		t.Errorf("~/.claude.json = %s, want plain agentd", b)
	}

	if out, stderr, code = e.cliIn(sub, "setup", "gemini", "--remove"); code != 0 || !strings.Contains(out, "removed") {
		t.Fatalf("setup --remove: %s %s (exit %d)", out, stderr, code)
	}
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Errorf("%s still there after --remove", filepath.Dir(path))
	}
	if _, stderr, code = e.cli("setup", "vim"); code != 2 || !strings.Contains(stderr, "claude, gemini, codex, copilot, qwen, opencode, cursor") {
		t.Errorf("setup vim: exit %d, %s", code, stderr)
	}
}

// TestSetupUserMovedBinary: `agentd setup claude --user` from an agentd at
// another path than the one the entry names (the binary moved, or a second
// install) updates the entry and the hooks to its own path, and --remove
// from it takes them out; neither is refused as an entry setup did not write.
func TestSetupUserMovedBinary(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	home := filepath.Join(e.ws, "home")
	os.MkdirAll(home, 0o700)
	oldBin, newBin := filepath.Join(e.ws, "old", "agentd"), filepath.Join(e.ws, "new", "agentd")
	run := func(bin string, args ...string) string {
		t.Helper()
		e.install(agentdBin, bin)
		cmd := e.command(append([]string{"setup", "claude", "--user"}, args...)...)
		cmd.Env = append(cmd.Env, "HOME="+home, "TMPDIR="+filepath.Join(e.ws, "tmp")) // the copies last
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s setup claude --user %v: %v %s", bin, args, err, b)
		}
		return string(b)
	}
	mcpFile, hooksFile := filepath.Join(home, ".claude.json"), filepath.Join(home, ".claude", "settings.json")
	run(oldBin)
	if out := run(newBin); strings.Count(out, "updated") != 2 {
		t.Errorf("setup from the moved binary: %s, want both files updated", out)
	}
	for _, f := range []string{mcpFile, hooksFile} {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), oldBin) || !strings.Contains(string(b), newBin) {
			t.Errorf("%s = %s, want %s instead of %s", f, b, newBin, oldBin)
		}
	}
	run(oldBin)
	if out := run(newBin, "--remove"); strings.Count(out, "removed") != 2 {
		t.Errorf("--remove from the moved binary: %s", out)
	}
	for _, f := range []string{mcpFile, hooksFile} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s still there after --remove (%v)", f, err)
		}
	}
}

// TestSetupGeminiComments: a Gemini settings.json with comments (which
// Gemini CLI accepts) is not rewritten without them: setup exits 1 saying
// so and what to do, the file stays as it was, and --print shows agentd's
// entries to copy by hand.
func TestSetupGeminiComments(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	path := filepath.Join(e.ws, ".gemini", "settings.json")
	os.MkdirAll(filepath.Dir(path), 0o700)
	orig := "{\n  // the theme I like\n  \"theme\": \"GitHub\"\n}\n"
	if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := e.cli("setup", "gemini", "--workspace", e.ws); code != 1 || !strings.Contains(stderr, "has comments") || !strings.Contains(stderr, "--print") || strings.Contains(stderr, "invalid character") {
		t.Errorf("setup gemini on a file with comments: exit %d, %s", code, stderr)
	}
	if b, _ := os.ReadFile(path); string(b) != orig {
		t.Errorf("%s was changed:\n%s", path, b)
	}
	out, stderr, code := e.cli("setup", "gemini", "--workspace", e.ws, "--print")
	if code != 0 || !strings.Contains(out, "has comments") || !strings.Contains(out, `"mcpServers"`) || !strings.Contains(out, "agentd-hook gemini") || !strings.Contains(out, `"theme": "GitHub"`) {
		t.Errorf("setup gemini --print on a file with comments: exit %d, %s %s", code, out, stderr)
	}
}

// TestSetupHookProgram: `agentd setup claude --user` from an agentd with no
// agentd-hook beside it writes `agentd hook claude`; once agentd-hook sits
// beside it, setup updates the hooks to that agentd-hook in place, and
// --remove takes them out: both forms are setup's own.
func TestSetupHookProgram(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	home := filepath.Join(e.ws, "home")
	os.MkdirAll(home, 0o700)
	dir := filepath.Join(e.ws, "bin")
	bin, lean := filepath.Join(dir, "agentd"), filepath.Join(dir, "agentd-hook")
	setup := func(args ...string) string {
		t.Helper()
		cmd := e.command(append([]string{"setup", "claude", "--user"}, args...)...)
		cmd.Env = append(cmd.Env, "HOME="+home, "TMPDIR="+filepath.Join(e.ws, "tmp")) // the copies last
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("setup claude --user %v: %v %s", args, err, b)
		}
		return string(b)
	}
	hooksFile := filepath.Join(home, ".claude", "settings.json")
	hooks := func() string {
		b, _ := os.ReadFile(hooksFile)
		return string(b)
	}
	e.install(agentdBin, bin)
	setup()
	if h := hooks(); !strings.Contains(h, bin+"' hook claude") || strings.Contains(h, "agentd-hook") {
		t.Errorf("without agentd-hook beside agentd, %s =\n%s\nwant %s hook claude", hooksFile, h, bin)
	}
	e.install(hookBin, lean)
	e.install(agentdBin, bin)
	if out := setup(); !strings.Contains(out, hooksFile+": updated") {
		t.Errorf("setup once agentd-hook is beside agentd: %s, want the hooks updated", out)
	}
	if h := hooks(); !strings.Contains(h, lean+"' claude") || strings.Contains(h, " hook claude") {
		t.Errorf("with agentd-hook beside agentd, %s =\n%s\nwant %s claude on every event", hooksFile, h, lean)
	}
	if out := setup(); !strings.Contains(out, "already") {
		t.Errorf("second setup: %s", out)
	}
	if out := setup("--remove"); strings.Count(out, "removed") != 2 {
		t.Errorf("--remove: %s", out)
	}
	if _, err := os.Stat(hooksFile); !os.IsNotExist(err) {
		t.Errorf("%s still there after --remove (%v)", hooksFile, err)
	}
}

// TestSetupProjectLinkToSecrets is the attacker's case: a cloned project
// whose .gemini/settings.json is a symbolic link to a file of the user's
// outside the project (OAuth tokens in it). `agentd setup gemini`, with
// --print and with --remove too, exits 1 naming the link and where it
// points; nothing is printed of the file, nothing is written in the project
// (the link stays a link) and the file keeps its content.
func TestSetupProjectLinkToSecrets(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	repo, private := filepath.Join(e.ws, "repo"), filepath.Join(e.ws, "private")
	for _, d := range []string{filepath.Join(repo, ".git"), filepath.Join(repo, ".gemini"), private} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	secrets := filepath.Join(private, "oauth_creds.json")
	const content = `{"access_token": "ya29.SECRET-ACCESS", "refresh_token": "1//SECRET-REFRESH"}` + "\n"
	if err := os.WriteFile(secrets, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(repo, ".gemini", "settings.json")
	if err := os.Symlink(secrets, path); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{}, {"--print"}, {"--remove"}} {
		out, stderr, code := e.cliIn(repo, append([]string{"setup", "gemini"}, args...)...)
		if code != 1 || !strings.Contains(stderr, path+" is a symbolic link to "+secrets) || !strings.Contains(stderr, "outside the project") || !strings.Contains(stderr, "changed nothing") {
			t.Errorf("setup gemini %v: exit %d, stderr %q, want 1 naming the link and its target", args, code, stderr)
		}
		if strings.Contains(out+stderr, "SECRET") {
			t.Errorf("setup gemini %v showed the linked file's content: %s %s", args, out, stderr)
		}
		if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("after setup gemini %v, %s is no longer the link (%v)", args, path, err)
		}
		if b, _ := os.ReadFile(secrets); string(b) != content {
			t.Errorf("after setup gemini %v, %s = %s", args, secrets, b)
		}
	}
	filepath.WalkDir(repo, func(p string, d os.DirEntry, err error) error {
		if b, _ := os.ReadFile(p); err == nil && d.Type().IsRegular() && strings.Contains(string(b), "SECRET") {
			t.Errorf("%s holds the secret", p)
		}
		return nil
	})
}

// TestSetupUserDotfilesLink: ~/.claude.json is a dotfiles manager's link.
// `agentd setup claude --user` updates the file it names (agentd added,
// every other key kept) and says so; the link stays a link; --remove takes
// agentd out through the link again, which stays. A link to nothing is an
// error that names it, and creates nothing.
func TestSetupUserDotfilesLink(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	home, dotfiles := filepath.Join(e.ws, "home"), filepath.Join(e.ws, "dotfiles")
	for _, d := range []string{home, dotfiles} {
		os.MkdirAll(d, 0o700)
	}
	target, link := filepath.Join(dotfiles, "claude.json"), filepath.Join(home, ".claude.json")
	os.WriteFile(target, []byte(`{"numStartups": 12, "theme": "dark", "projects": {"/src/x": {"allowedTools": ["Bash"]}}}`), 0o600)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, int) {
		t.Helper()
		cmd := e.command(append([]string{"setup", "claude", "--user"}, args...)...)
		cmd.Env = append(cmd.Env, "HOME="+home)
		b, err := cmd.CombinedOutput()
		code := 0
		if err != nil {
			code = cmd.ProcessState.ExitCode()
		}
		return string(b), code
	}
	isLink := func() bool {
		fi, err := os.Lstat(link)
		return err == nil && fi.Mode()&os.ModeSymlink != 0
	}
	out, code := run()
	if code != 0 || !strings.Contains(out, link+" (through the link, "+target+"): added") {
		t.Fatalf("setup claude --user: exit %d\n%s", code, out)
	}
	var doc map[string]any
	b, _ := os.ReadFile(target)
	if err := json.Unmarshal(b, &doc); err != nil || !isLink() || doc["theme"] != "dark" || doc["numStartups"] != 12.0 || doc["projects"] == nil || doc["mcpServers"] == nil {
		t.Fatalf("after setup: link %v, %s = %s (%v)", isLink(), target, b, err)
	}
	if out, code = run("--remove"); code != 0 || !isLink() {
		t.Fatalf("setup --remove: exit %d, link %v\n%s", code, isLink(), out)
	}
	b, _ = os.ReadFile(target)
	if strings.Contains(string(b), "agentd") || !strings.Contains(string(b), `"numStartups": 12`) {
		t.Errorf("after --remove, %s = %s", target, b)
	}

	os.Remove(target)
	if out, code = run(); code != 1 || !strings.Contains(out, link+" is a symbolic link to "+target+", which does not exist") {
		t.Errorf("setup through a link to nothing: exit %d\n%s", code, out)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) || !isLink() {
		t.Errorf("a link to nothing: %s created (%v), link %v", target, err, isLink())
	}
}

// TestSetupCodexSaysTheTrustStep: Codex runs no hooks until the user
// trusts them, and `codex exec` says nothing about it (issue 26), so
// `agentd setup codex` names the one step, also when nothing changed (the
// hooks may still wait for it), and not with --remove.
func TestSetupCodexSaysTheTrustStep(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := os.MkdirAll(filepath.Join(e.ws, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	const step = `choose "Trust all and continue" at "Hooks need review"`
	for _, want := range []string{"added", "already"} {
		out, stderr, code := e.cliIn(e.ws, "setup", "codex")
		if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, step) || !strings.Contains(out, "Start `codex` in this folder") {
			t.Errorf("setup codex (%s): exit %d\n%s%s\nwant the trust step", want, code, out, stderr)
		}
	}
	if out, _, code := e.cliIn(e.ws, "setup", "codex", "--remove"); code != 0 || strings.Contains(out, step) {
		t.Errorf("setup codex --remove: exit %d\n%s", code, out)
	}
}
