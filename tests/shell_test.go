package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The shell commands as people type them (docs/protocol.md
// §1.2.1, §1.2.2).

// TestShellBudgetsAsPeopleWriteThem: agentd goal budget takes what people
// write and what agentd goal status prints, and says clearly what it
// cannot read.
func TestShellBudgetsAsPeopleWriteThem(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, errOut, code := e.cli("goal", "create", "budgets", "--workspace", e.ws); code != 0 {
		t.Fatalf("goal create: %d %s", code, errOut)
	}
	budget := func() goalSnap {
		t.Helper()
		out, errOut, code := e.cli("goal", "status", "--json", "--workspace", e.ws)
		var g goalSnap
		if code != 0 || json.Unmarshal([]byte(out), &g) != nil {
			t.Fatalf("goal status --json: %d %q %q", code, out, errOut)
		}
		return g
	}
	ptr := func(p *int64) int64 {
		if p == nil {
			return -1
		}
		return *p
	}
	tests := []struct {
		words []string // as the shell splits them
		field string   // turns, tokens or wallClock
		want  int64
	}{
		{[]string{"1", "hour"}, "wallClock", 3_600_000},
		{[]string{"90", "minutes"}, "wallClock", 5_400_000},
		{[]string{"30m"}, "wallClock", 1_800_000},
		{[]string{"2h"}, "wallClock", 7_200_000},
		{[]string{"1h30m"}, "wallClock", 5_400_000},
		{[]string{"1.5h"}, "wallClock", 5_400_000},
		{[]string{"1 hour 30 minutes"}, "wallClock", 5_400_000},
		{[]string{"20", "turn(s)"}, "turns", 20},
		{[]string{"20", "turns"}, "turns", 20},
		{[]string{"1", "turn"}, "turns", 1},
		{[]string{"50k", "tokens"}, "tokens", 50_000},
		{[]string{"1.2M", "tokens"}, "tokens", 1_200_000},
		{[]string{"1", "day"}, "wallClock", 86_400_000},
		{[]string{"1d"}, "wallClock", 86_400_000},
		{[]string{"24", "hours"}, "wallClock", 86_400_000},
	}
	for _, tt := range tests {
		args := append(append([]string{"goal", "budget"}, tt.words...), "--workspace", e.ws)
		if _, errOut, code := e.cli(args...); code != 0 {
			t.Errorf("goal budget %q: exit %d, %s", tt.words, code, errOut)
			continue
		}
		g := budget()
		got := map[string]int64{"turns": ptr(g.Budget.TurnBudget), "tokens": ptr(g.Budget.TokenBudget), "wallClock": ptr(g.Budget.WallClockBudgetMs)}[tt.field]
		if got != tt.want {
			t.Errorf("goal budget %q: %s budget %d, want %d", tt.words, tt.field, got, tt.want)
		}
	}
	// What status prints reads back as the same budget.
	out, _, _ := e.cli("goal", "status", "--workspace", e.ws)
	used := regexp.MustCompile(`Used: 0/(\S+ turns?) · 0/(\S+ tokens?) · \d+s/(\S+)`).FindStringSubmatch(out)
	if used == nil {
		t.Fatalf("goal status = %q, want a Used line with the three limits", out)
	}
	before := budget().Budget
	for _, printed := range used[1:] {
		if _, errOut, code := e.cli("goal", "budget", printed, "--workspace", e.ws); code != 0 {
			t.Errorf("goal budget %q (as status prints it): exit %d, %s", printed, code, errOut)
		}
	}
	if after := budget().Budget; ptr(after.TurnBudget) != ptr(before.TurnBudget) || ptr(after.TokenBudget) != ptr(before.TokenBudget) || ptr(after.WallClockBudgetMs) != ptr(before.WallClockBudgetMs) {
		t.Errorf("budgets changed when set to what status printed (%q): %+v, then %+v", used[1:], before, after)
	}
	// Removing a limit, and refusals that say what is wrong.
	if _, errOut, code := e.cli("goal", "budget", "off", "time", "--workspace", e.ws); code != 0 || budget().Budget.WallClockBudgetMs != nil {
		t.Errorf("goal budget off time: exit %d %s, budget %+v", code, errOut, budget().Budget)
	}
	for _, words := range [][]string{{"20"}, {"50k"}, {"1,5", "h"}, {"25", "hours"}, {"0", "turns"}, {"1h", "20", "turns"}} {
		args := append(append([]string{"goal", "budget"}, words...), "--workspace", e.ws)
		if _, errOut, code := e.cli(args...); code != 2 || !strings.Contains(errOut, strings.Join(words, " ")) {
			t.Errorf("goal budget %q: exit %d, stderr %q; want exit 2 quoting the budget", words, code, errOut)
		}
	}
	// Out of range names the range; a bare off or none says how to remove.
	for _, tt := range []struct {
		words []string
		want  string
	}{
		{[]string{"25", "hours"}, "from 1 second to 24 hours"},
		{[]string{"2", "days"}, "from 1 second to 24 hours"},
		{[]string{"0", "turns"}, "a whole number from 1 to"},
		{[]string{"0", "turns"}, `remove a limit with "off turns"`},
		{[]string{"2000000000000000", "tokens"}, "a whole number from 1 to"},
		{[]string{"none"}, `"none turns", "none tokens" or "none time"`},
		{[]string{"off"}, `"off turns", "off tokens" or "off time"`},
	} {
		args := append(append([]string{"goal", "budget"}, tt.words...), "--workspace", e.ws)
		if _, errOut, code := e.cli(args...); code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("goal budget %q: exit %d, stderr %q; want exit 2 saying %q", tt.words, code, errOut, tt.want)
		}
	}
}

// TestShellTaskFileFromSubfolder: a relative --task-file is the shell's
// path, relative to the current folder, not to the workspace folder; one
// that leaves the workspace is refused naming it (docs/protocol.md
// §1.2.2).
func TestShellTaskFileFromSubfolder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	docs := filepath.Join(e.ws, "docs")
	if err := os.MkdirAll(filepath.Join(e.ws, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(docs, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(docs, "NOTES.md"), []byte("- [ ] one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := e.cliIn(docs, "goal", "create", "work through the notes", "--task-file", "./NOTES.md")
	if code != 0 || !strings.Contains(out, "Task file: docs/NOTES.md (present)") {
		t.Fatalf("goal create --task-file ./NOTES.md in docs/: exit %d %q %q, want the task file docs/NOTES.md", code, out, errOut)
	}
	if want := "agentd: workspace " + e.ws + "\n"; errOut != want {
		t.Errorf("goal create stderr = %q, want %q", errOut, want)
	}
	_, errOut, code = e.cliIn(docs, "goal", "create", "outside", "--replace", "--task-file", "../../elsewhere.md")
	if code != 1 || !strings.Contains(errOut, "elsewhere.md") || !strings.Contains(errOut, "not inside the workspace folder") {
		t.Errorf("goal create --task-file ../../elsewhere.md: exit %d %q, want 1 naming the path as outside", code, errOut)
	}
	if out, _, _ := e.cliIn(docs, "goal", "status"); !strings.Contains(out, "work through the notes") {
		t.Errorf("the refused create changed the goal: %q", out)
	}
	// Run outside the workspace, a relative path is the workspace's.
	out, errOut, code = e.cliIn(t.TempDir(), "goal", "create", "from elsewhere", "--replace", "--task-file", "docs/NOTES.md", "--workspace", e.ws)
	if code != 0 || !strings.Contains(out, "Task file: docs/NOTES.md (present)") {
		t.Errorf("goal create --task-file docs/NOTES.md --workspace from another folder: exit %d %q %q", code, out, errOut)
	}
}

// TestShellExitCodeFailures: with --exit-code on the line every failure
// exits 4, never a code of a state (0, 1, 2, 3, 6); without it usage
// errors exit 2 and failures 1 (docs/protocol.md §1.2.2).
func TestShellExitCodeFailures(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	missing := filepath.Join(e.ws, "missing")
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"goal", "stauts", "--exit-code"}, 4},
		{[]string{"goal", "status", "--exit-cod"}, 4},
		{[]string{"goal", "status", "now", "--exit-code"}, 4},
		{[]string{"goal", "--exit-code"}, 4},
		{[]string{"goal", "status", "--exit-code", "--bogus"}, 4},
		{[]string{"goal", "status", "--exit-code", "--workspace", missing}, 4},
		{[]string{"goal", "pause", "--exit-code"}, 4}, // refused: no goal
		{[]string{"goal", "budget", "2", "fortnights", "--exit-code"}, 4},
		{[]string{"goal", "status", "--exit-code"}, 1}, // no goal: a state, not a failure
		{[]string{"goal", "stauts"}, 2},
		{[]string{"goal", "status", "--bogus"}, 2},
		{[]string{"goal", "status", "--workspace", missing}, 1},
		{[]string{"goal", "pause"}, 1},
		{[]string{"goal", "status", "--exit-code=false", "--bogus"}, 2},
	} {
		args := tt.args
		if !slices.Contains(args, "--workspace") {
			args = append(args, "--workspace", e.ws)
		}
		if _, errOut, code := e.cli(args...); code != tt.code {
			t.Errorf("agentd %q: exit %d (%q), want %d", tt.args, code, errOut, tt.code)
		}
	}
}

// TestShellSubcommandHelp: agentd SUB --help, agentd help SUB and agentd
// goal help print that subcommand's usage on stdout and exit 0;
// agentd --version is agentd version.
func TestShellSubcommandHelp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tt := range []struct {
		args []string
		want string // how the usage starts
	}{
		{[]string{"goal", "--help"}, "usage:\n  agentd goal create OBJECTIVE"},
		{[]string{"goal", "create", "--help"}, "usage:\n  agentd goal create OBJECTIVE"},
		{[]string{"goal", "help"}, "usage:\n  agentd goal create OBJECTIVE"},
		{[]string{"goal", "status", "-h"}, "usage:\n  agentd goal create OBJECTIVE"},
		{[]string{"goal", "queue", "--help"}, "usage:\n  agentd goal queue add OBJECTIVE"},
		{[]string{"goal", "queue", "add", "--help"}, "usage:\n  agentd goal queue add OBJECTIVE"},
		{[]string{"help", "goal", "queue"}, "usage:\n  agentd goal queue add OBJECTIVE"},
		{[]string{"tool", "--help"}, "usage: agentd tool NAME [JSON]"},
		{[]string{"help", "tool"}, "usage: agentd tool NAME [JSON]"},
		{[]string{"state", "--help"}, "usage: agentd state [--json]"},
		{[]string{"mcp", "--help"}, "usage: agentd mcp "},
		{[]string{"setup", "--help"}, "usage: agentd setup claude|gemini|codex|copilot|qwen|opencode|cursor"},
		{[]string{"hook", "--help"}, "usage: agentd hook claude|gemini|codex|copilot|qwen"},
		{[]string{"simulate", "--help"}, "usage: agentd simulate [--script NAME|FILE]"},
		{[]string{"--help"}, "agentd keeps AI agents' todo lists"},
		{[]string{"help"}, "agentd keeps AI agents' todo lists"},
	} {
		out, errOut, code := e.cli(tt.args...)
		if code != 0 || !strings.HasPrefix(out, tt.want) {
			t.Errorf("agentd %q: exit %d, stdout %q (stderr %q); want exit 0 and a usage starting %q", tt.args, code, out, errOut, tt.want)
		}
	}
	version, _, code := e.cli("version")
	if dashed, errOut, dcode := e.cli("--version"); code != 0 || dcode != 0 || !strings.HasPrefix(version, "agentd ") || dashed != version {
		t.Errorf("agentd --version = %d %q (%q), agentd version = %d %q; want the same version", dcode, dashed, errOut, code, version)
	}
}

// TestShellTextStartingWithDash: an objective that starts with - but holds
// a space is text; an unknown flag is refused suggesting -- (what -- does
// is cmd/agentd's TestParseInterspersed: the harness puts --state-dir
// last, where -- would make it text).
func TestShellTextStartingWithDash(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	out, errOut, code := e.cli("goal", "create", "-v flag support", "--workspace", e.ws)
	if code != 0 || !strings.Contains(out, "Goal (active): -v flag support") {
		t.Fatalf("goal create \"-v flag support\": exit %d %q %q", code, out, errOut)
	}
	_, errOut, code = e.cli("goal", "create", "-v", "--replace", "--workspace", e.ws)
	if code != 2 || !strings.Contains(errOut, "unknown flag -v") || !strings.Contains(errOut, "put it after --") {
		t.Errorf("goal create -v: exit %d %q, want 2 naming the flag and suggesting --", code, errOut)
	}
}

// TestShellShowsControlCharacters: what the shell commands print for a
// person shows a control character a terminal would act on as <U+XXXX>
// (docs/security.md): an objective may hold a CR (docs/runtime.md §2.1.1),
// which printed raw would redraw the line; a CRLF line end stays as it is,
// and --json keeps the text exact.
func TestShellShowsControlCharacters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws := []string{"--workspace", e.ws}
	if _, errOut, code := e.cli(append([]string{"goal", "create", "ship it\rall done\r\nthen docs"}, ws...)...); code != 0 {
		t.Fatalf("goal create: %d %s", code, errOut)
	}
	out, errOut, code := e.cli(append([]string{"goal", "status"}, ws...)...)
	if code != 0 || !strings.Contains(out, "ship it<U+000D>all done\r\n") || strings.Contains(out, "it\rall") {
		t.Fatalf("goal status: %d %q %q; want the lone CR shown as <U+000D>, the CRLF kept", code, out, errOut)
	}
	out, _, _ = e.cli(append([]string{"goal", "status", "--json"}, ws...)...)
	if !strings.Contains(out, `ship it\rall done\r\nthen docs`) {
		t.Fatalf("goal status --json: %q; want the objective exact", out)
	}
}
