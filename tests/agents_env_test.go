package tests

// One daemon per user whatever an agent strips from the environment
// (docs/shared-daemon.md, "Where the socket lives, and who may use it";
// docs/hooks.md, "What each agent passes"): Codex starts its MCP servers
// with only HOME, PATH, SHELL, TERM, TMPDIR and LANG. Needs no agent
// installed.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// loginBins builds agentd and agentd-hook, side by side, with the login
// manager's folder of runtime dirs (/run/user in a release) at base, since
// no test may make /run/user/<uid>; it returns their folder.
func loginBins(t *testing.T, base string) string {
	dir := t.TempDir()
	flag := "-ldflags=-X github.com/agentd/agentd/lsp/daemon/client.runtimeBase=" + base
	for _, b := range []struct{ name, pkg, cgo string }{{"agentd", "../cmd/agentd", "1"}, {"agentd-hook", "../cmd/agentd-hook", "0"}} {
		build := exec.Command("go", "build", flag, "-o", filepath.Join(dir, b.name), b.pkg)
		build.Env = append(os.Environ(), "CGO_ENABLED="+b.cgo)
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	return dir
}

// TestCodexEnvironmentReachesTheUsersDaemon: the user's daemon serves an
// editor in a login session (XDG_RUNTIME_DIR is the login manager's
// <base>/<uid>, XDG_STATE_HOME set); `agentd mcp` and `agentd-hook codex`
// run with exactly the environment Codex gives them, no XDG variable at
// all. Both reach that daemon: the model's list and the hook's turn reach
// the editor, one daemon serves, and none was started in TMPDIR.
func TestCodexEnvironmentReachesTheUsersDaemon(t *testing.T) {
	t.Parallel()
	base := filepath.Join(t.TempDir(), "user")
	runtime := filepath.Join(base, strconv.Itoa(os.Getuid()))
	if err := os.MkdirAll(runtime, 0o700); err != nil {
		t.Fatal(err)
	}
	bins := loginBins(t, base)
	e := newEnv(t)
	e.runDir, e.bin = runtime, filepath.Join(bins, "agentd")
	_, lc := e.forwarder()
	lc.Initialize(nil, e.ws)
	pid := e.oneDaemon()
	for _, args := range [][]string{{"goal", "create", "Ship the parser"}, {"goal", "budget", "3", "turns"}} {
		if out, errOut, code := e.cli(append(args, "--workspace", e.ws)...); code != 0 {
			t.Fatalf("agentd %v: %s%s", args, out, errOut)
		}
	}
	home, tmp := filepath.Join(t.TempDir(), "home"), t.TempDir()
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	codex := []string{"HOME=" + home, "PATH=" + bins + ":/usr/bin:/bin", "SHELL=/bin/sh", "TERM=dumb", "TMPDIR=" + tmp, "LANG=C.UTF-8"}

	mcpCmd := exec.Command(e.bin, "mcp")
	mcpCmd.Dir, mcpCmd.Env = e.ws, codex
	e.mcpOn(mcpCmd, "").good("TodoList", map[string]any{"todos": []item{{"read the code", "in_progress"}}})
	if n := lc.awaitTodo(e.ws, "read the code"); n.Actor != "model" {
		t.Errorf("the editor's todoChanged after agentd mcp: %+v", n)
	}

	hook := exec.Command(filepath.Join(bins, "agentd-hook"), "codex")
	hook.Dir, hook.Env = e.ws, codex
	hook.Stdin = strings.NewReader(fmt.Sprintf(`{"session_id":"s1","turn_id":"1","transcript_path":"","cwd":%q,"hook_event_name":"UserPromptSubmit","model":"m","permission_mode":"default","prompt":"Work on the goal."}`, e.ws))
	out, err := hook.CombinedOutput()
	if err != nil || !strings.Contains(string(out), markGoal) {
		t.Errorf("agentd-hook codex: %v %s, want the goal reminder", err, out)
	}
	lc.Await("agentd/goalChanged", func(p json.RawMessage) bool {
		var n struct {
			Goal *goalCounts `json:"goal"`
		}
		return json.Unmarshal(p, &n) == nil && n.Goal != nil && n.Goal.TurnsUsed == 1
	})
	if got := e.oneDaemon(); got != pid {
		t.Errorf("daemon pid %d after the agent's processes, want the user's %d", got, pid)
	}
	if _, err := os.Stat(filepath.Join(tmp, fmt.Sprintf("agentd-%d", os.Getuid()))); err == nil {
		t.Errorf("the agent's processes made a socket folder in TMPDIR: a daemon of their own")
	}
}
