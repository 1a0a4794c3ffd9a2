//go:build linux || darwin || windows

package caller

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// helperEnv makes the test binary a helper that prints Self and its pid
// (TestHelperSelf).
const helperEnv = "AGENTD_CALLER_HELPER"

// TestHelperSelf is not a test: run by the tests below as a child process,
// it prints what Self says of it; with AGENTD_CALLER_RELAY=1 it runs itself
// again, without CLAUDECODE in the environment, and passes on what that
// child prints (what `env -u CLAUDECODE` does, on every system).
func TestHelperSelf(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("a helper process of the other tests")
	}
	if os.Getenv("AGENTD_CALLER_RELAY") == "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperSelf$")
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "CLAUDECODE=") && !strings.HasPrefix(kv, "AGENTD_CALLER_RELAY=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Stdout = os.Stdout
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		return
	}
	json.NewEncoder(os.Stdout).Encode(map[string]any{"agent": Self(), "pid": os.Getpid()})
}

// selfOf runs the helper through argv (the helper is "$HELPER") with env
// and returns what Self said and the helper's pid.
func selfOf(t *testing.T, env []string, argv ...string) (Agent, int) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append([]string{helperEnv + "=1", "HELPER=" + os.Args[0], "PATH=" + os.Getenv("PATH")}, env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v", argv, err)
	}
	line := out[strings.IndexByte(string(out), '{'):]
	var r struct {
		Agent Agent
		Pid   int
	}
	if err := json.Unmarshal(line[:strings.IndexByte(string(line), '\n')], &r); err != nil {
		t.Fatalf("%v: %s: %v", argv, out, err)
	}
	return r.Agent, r.Pid
}

func TestOfMarkerInSelf(t *testing.T) {
	for _, m := range []string{"CLAUDECODE=1", "GEMINI_CLI=1", "CODEX_THREAD_ID=019a", "COPILOT_CLI=1", "CURSOR_EXTENSION_HOST_ROLE=agent-exec", "QWEN_CODE=1", "OPENCODE=1"} {
		got, pid := selfOf(t, []string{m}, os.Args[0], "-test.run=^TestHelperSelf$")
		if !got.IsAgent() || got.Marker != m || got.Pid != pid {
			t.Errorf("Self with %s = %+v (pid %d), want the agent of %s in the process itself", m, got, pid, m)
		}
	}
}

// TestOfMarkerInParent: the model's command removes the marker from its
// own environment (`env -u`), but the agent's shell above it still has it.
func TestOfMarkerInParent(t *testing.T) {
	got, pid := selfOf(t, []string{"CLAUDECODE=1", "AGENTD_CALLER_RELAY=1"}, os.Args[0], "-test.run=^TestHelperSelf$")
	if got.Name != "Claude Code" || got.Marker != "CLAUDECODE=1" || got.Pid == pid || got.Pid == 0 {
		t.Errorf("Self under a parent with CLAUDECODE=1, without it itself = %+v (helper pid %d), want Claude Code found in the parent", got, pid)
	}
}

// TestOfAgentProgram: no marker anywhere (the model's `exec env -u ...`
// replaced the shell that had it), but an ancestor runs the agent's program.
func TestOfAgentProgram(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs /bin/sh")
	}
	claude := filepath.Join(t.TempDir(), "claude")
	if err := os.Symlink("/bin/sh", claude); err != nil {
		t.Fatal(err)
	}
	got, _ := selfOf(t, nil, claude, "-c", `"$HELPER" -test.run='^TestHelperSelf$'; true`)
	if got.Name != "Claude Code" || got.Marker != "the program claude" {
		t.Errorf("Self under a program named claude = %+v, want Claude Code", got)
	}
}

func TestOfPerson(t *testing.T) {
	if a := Self(); a.IsAgent() {
		t.Skipf("the tests run in %v: no process of them is a person's", a)
	}
	for _, env := range [][]string{nil, {"CLAUDECODE="}, {"CURSOR_EXTENSION_HOST_ROLE=user"}} {
		got, _ := selfOf(t, append(env, "AGENTD_CALLER_RELAY=1"), os.Args[0], "-test.run=^TestHelperSelf$")
		if got.IsAgent() || got.String() != "a person" {
			t.Errorf("Self with %v = %+v, want a person", env, got)
		}
	}
}

// TestOfEndedProcess: a process that is gone is not taken for a person.
func TestOfEndedProcess(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if got := Of(cmd.Process.Pid); !got.IsAgent() || !strings.Contains(got.Marker, "ended") {
		t.Errorf("Of(an ended process) = %+v, want an unknown program", got)
	}
}

func TestProgram(t *testing.T) {
	for argv, want := range map[string]string{
		"/home/u/.local/bin/claude\x00-p\x00hi":                         "Claude Code",
		"node\x00/usr/lib/node_modules/.bin/gemini\x00-p":               "Gemini CLI",
		"/usr/bin/node\x00/x/@openai/codex/bin/codex.js\x00exec":        "Codex",
		"/x/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex": "Codex",
		"bash\x00-c\x00claude":                                          "",
		"node\x00server.js":                                             "",
	} {
		p, _ := program(strings.Split(argv, "\x00"))
		if p.Agent != want {
			t.Errorf("program(%q) = %q, want %q", argv, p.Agent, want)
		}
	}
}

// TestMarkersDocumented: docs/runtime.md lists every marker and program.
func TestMarkersDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/runtime.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "Who is calling: a person or an agent's shell\n")
	for _, m := range Markers {
		if !strings.Contains(section, "`"+m.Variable) {
			t.Errorf("docs/runtime.md, \"Who is calling: a person or an agent's shell\", does not list the marker %s (%s)", m.Variable, m.Agent)
		}
	}
	for _, p := range Programs {
		if !strings.Contains(section, "`"+p.Name+"`") {
			t.Errorf("docs/runtime.md, \"Who is calling: a person or an agent's shell\", does not list the program %s", p.Name)
		}
	}
}

func TestShownMarker(t *testing.T) {
	if got := shown("CLAUDECODE=1\x1b[2J" + strings.Repeat("x", 200)); len(got) > 90 || strings.ContainsRune(got, 0x1b) {
		t.Errorf("shown = %q, want at most 80 bytes and no control characters", got)
	}
}
