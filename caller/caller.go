// Package caller tells whether a process runs inside a coding agent's own
// shell tool: Claude Code's Bash, Gemini CLI's shell, Codex's exec, and the
// others of Markers. Each of these agents sets a variable in the
// environment of the commands its model runs; a process is an agent's shell
// when it, or any process it descends from, carries one of them, or when it
// descends from one of the agents' own programs (Programs)
// (docs/runtime.md, "Who is calling: a person or an agent's shell").
// Looking at the ancestors is what an `env -u`, a shell's `unset` or an
// `exec` in the model's command does not defeat.
//
// It has one job, Of, and imports the standard library and
// golang.org/x/sys. The walk up the process tree (walk.go) reads /proc on
// Linux (caller_linux.go), sysctl on macOS (caller_darwin.go), and each
// process's parameters on Windows (caller_windows.go); elsewhere only the
// environment of this process is read (caller_other.go).
package caller

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Agent is who a process acts for. The zero Agent is a person: no process
// from it up to the first process carries a marker.
type Agent struct {
	// Name is the agent, as a person reads it: "Claude Code".
	Name string
	// Marker is what was found, "CLAUDECODE=1", or why the process could not
	// be looked at (then it is taken for an agent's shell: see Of).
	Marker string
	// Pid is the process that carries the marker; 0 when unknown.
	Pid int
}

// IsAgent reports whether a is an agent's shell rather than a person.
func (a Agent) IsAgent() bool { return a.Name != "" }

// String is "Claude Code's shell (CLAUDECODE=1 in pid 42)", or "a person".
func (a Agent) String() string {
	if !a.IsAgent() {
		return "a person"
	}
	if a.Pid > 0 {
		return fmt.Sprintf("%s's shell (%s in pid %d)", a.Name, a.Marker, a.Pid)
	}
	return fmt.Sprintf("%s's shell (%s)", a.Name, a.Marker)
}

// Marker is one variable an agent sets in the environment of the commands
// its model runs through its shell tool.
// docs/runtime.md, "Who is calling: a person or an agent's shell", says
// where each agent sets it.
type Marker struct {
	Variable string
	// Value is the value that marks the agent; "" means any value that is
	// not empty.
	Value string
	Agent string
}

// Markers are the markers agentd knows, as verified in each agent's build
// (docs/runtime.md, "Who is calling: a person or an agent's shell", lists
// them with their sources).
var Markers = []Marker{
	{"CLAUDECODE", "", "Claude Code"},
	{"GEMINI_CLI", "", "Gemini CLI"},
	{"QWEN_CODE", "", "Qwen Code"},
	{"CODEX_THREAD_ID", "", "Codex"},
	{"CODEX_TOOL_CALL_ID", "", "Codex"},
	{"CODEX_SANDBOX", "", "Codex"},
	{"CODEX_SANDBOX_NETWORK_DISABLED", "", "Codex"},
	{"COPILOT_CLI", "", "GitHub Copilot CLI"},
	{"COPILOT_AGENT", "", "VS Code's Copilot agent"},
	{"CURSOR_AGENT", "", "Cursor"},
	{"CURSOR_EXTENSION_HOST_ROLE", "agent-exec", "Cursor"},
	{"OPENCODE", "", "opencode"},
}

// match returns the agent whose marker is among env (KEY=VALUE entries),
// and the entry, or ok false.
func match(env []string) (m Marker, entry string, ok bool) {
	for _, kv := range env {
		k, v, found := strings.Cut(kv, "=")
		if !found || v == "" {
			continue
		}
		for _, m := range Markers {
			if k == m.Variable && (m.Value == "" || v == m.Value) {
				return m, shown(kv), true
			}
		}
	}
	return Marker{}, "", false
}

// Self tells who this process acts for: Of(os.Getpid()).
func Self() Agent { return Of(os.Getpid()) }

// Program is one agent's own program, known by the base name of the file
// it runs (argv[0], or the script a node, bun or deno runs), without an
// extension: an ancestor that runs it makes a process the agent's even when
// no marker is left in any environment (the model's `exec env -u ...`).
type Program struct {
	Name  string
	Agent string
}

// Programs are the agents' programs as their packages install them.
var Programs = []Program{
	{"claude", "Claude Code"},
	{"gemini", "Gemini CLI"},
	{"codex", "Codex"},
	{"copilot", "GitHub Copilot CLI"},
	{"cursor-agent", "Cursor"},
	{"qwen", "Qwen Code"},
	{"opencode", "opencode"},
}

// program returns the agent whose program argv runs, or ok false.
func program(argv []string) (p Program, ok bool) {
	name := func(i int) string {
		if i >= len(argv) {
			return ""
		}
		base := filepath.Base(argv[i])
		return strings.TrimSuffix(base, filepath.Ext(base))
	}
	run := name(0)
	if run == "node" || run == "bun" || run == "deno" {
		run = name(1)
	}
	for _, p := range Programs {
		if run == p.Name {
			return p, true
		}
	}
	return Program{}, false
}

// shown is a KEY=VALUE entry as a message may quote it: at most 80 bytes,
// control characters replaced, since the value is anyone's.
func shown(kv string) string {
	if len(kv) > 80 {
		kv = strings.ToValidUTF8(kv[:80], "") + "..."
	}
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return '?'
		}
		return r
	}, kv)
}
