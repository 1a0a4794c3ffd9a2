package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The shell commands as people type them (docs/behaviour.md "Budgets from
// a shell", "Shell commands").

// TestShellBudgetsAsPeopleWriteThem: agentd goal budget takes what people
// write and what agentd goal status prints, and says clearly what it
// cannot read.
func TestShellBudgetsAsPeopleWriteThem(t *testing.T) {
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
}

// TestShellStateCreatesNoFile: reading a folder that has no state
// (agentd state, agentd goal status) creates nothing on disk.
func TestShellStateCreatesNoFile(t *testing.T) {
	e := newEnv(t)
	out, errOut, code := e.cli("state", "--workspace", e.ws)
	if code != 0 || !strings.Contains(out, "Todo list is empty.") || !strings.Contains(out, "No goal.") {
		t.Fatalf("agentd state: %d %q %q", code, out, errOut)
	}
	out, _, code = e.cli("state", "--json", "--workspace", e.ws)
	var st state
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Revision != 0 || st.Session != "default" || st.Todos.Items == nil || string(st.Goal) != "null" || st.Workspace != fileURI(e.ws) {
		t.Fatalf("agentd state --json = %s", out)
	}
	if out, _, code := e.cli("goal", "status", "--exit-code", "--workspace", e.ws); code != 1 || out != "No goal.\n" {
		t.Fatalf("goal status: %d %q", code, out)
	}
	if _, err := os.Stat(e.stateDir); !os.IsNotExist(err) {
		entries, _ := filepath.Glob(filepath.Join(e.stateDir, "*", "*"))
		t.Fatalf("the state directory exists after reads only (%v): %v", err, entries)
	}
	// A write creates it, and the read then shows it.
	e.cli("tool", "TodoList", `{"todos":[{"title":"first","status":"pending"}]}`, "--workspace", e.ws)
	if out, _, _ := e.cli("state", "--workspace", e.ws); !strings.Contains(out, "[pending] first") {
		t.Fatalf("agentd state after a write = %q", out)
	}
}

// TestShellGoalStatusTaskFileNow: goal status reports the task file as it
// is on disk now, also when no daemon watched it change.
func TestShellGoalStatusTaskFileNow(t *testing.T) {
	e := newEnv(t)
	if _, errOut, code := e.cli("goal", "create", "work through the list", "--task-file", "TASKS.md", "--workspace", e.ws); code != 0 {
		t.Fatalf("goal create: %d %s", code, errOut)
	}
	if out, _, _ := e.cli("goal", "status", "--workspace", e.ws); !strings.Contains(out, "Task file: TASKS.md (missing)") {
		t.Fatalf("before the file exists: %q", out)
	}
	if err := os.WriteFile(filepath.Join(e.ws, "TASKS.md"), []byte("- [ ] one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, _, _ := e.cli("goal", "status", "--workspace", e.ws); !strings.Contains(out, "Task file: TASKS.md (present)") {
		t.Fatalf("after the file was written: %q", out)
	}
	out, _, _ := e.cli("goal", "status", "--json", "--workspace", e.ws)
	var g struct {
		TaskFile struct {
			Exists bool   `json:"exists"`
			Size   int64  `json:"size"`
			SHA256 string `json:"sha256"`
		} `json:"taskFile"`
	}
	if json.Unmarshal([]byte(out), &g) != nil || !g.TaskFile.Exists || g.TaskFile.Size != 10 || len(g.TaskFile.SHA256) != 64 {
		t.Fatalf("goal status --json = %s, want the file as it is now", out)
	}
	if err := os.Remove(filepath.Join(e.ws, "TASKS.md")); err != nil {
		t.Fatal(err)
	}
	if out, _, _ := e.cli("state", "--workspace", e.ws); !strings.Contains(out, "Task file: TASKS.md (missing)") {
		t.Fatalf("after the file was removed: %q", out)
	}
}

// TestShellGoalCancelSaysWhat: goal cancel names the goal it cancelled,
// its status and what it used; with no goal it says there is none.
func TestShellGoalCancelSaysWhat(t *testing.T) {
	e := newEnv(t)
	e.cli("goal", "create", "Make the parser handle comments", "--workspace", e.ws)
	e.cli("goal", "pause", "--reason", "lunch", "--workspace", e.ws)
	out, errOut, code := e.cli("goal", "cancel", "--workspace", e.ws)
	if code != 0 || !strings.Contains(out, "Cancelled the goal: Make the parser handle comments") || !strings.Contains(out, "It was paused; used 0 turns · 0 tokens") {
		t.Fatalf("goal cancel: %d %q %q", code, out, errOut)
	}
	out, _, code = e.cli("goal", "cancel", "--json", "--workspace", e.ws)
	if code != 1 {
		t.Fatalf("a second cancel: exit %d %q, want 1 (no goal)", code, out)
	}
	e.cli("goal", "create", "second", "--workspace", e.ws)
	out, _, _ = e.cli("goal", "cancel", "--json", "--workspace", e.ws)
	var g goalSnap
	if json.Unmarshal([]byte(out), &g) != nil || g.Objective != "second" || g.Status != "active" {
		t.Fatalf("goal cancel --json = %s, want the cancelled goal", out)
	}
}

// TestShellPlurals: counts of one read "1 turn", "1 token" in the shell's
// status, in tool outputs and in the completion stats.
func TestShellPlurals(t *testing.T) {
	e := newEnv(t)
	c := e.start().connect()
	c.initialize(nil, e.ws)
	c.mustExec("agentd.goal.create", map[string]any{"objective": "count to one"}, nil)
	h := &host{c: c}
	turn, driven := h.beginTurn("user")
	if !driven {
		t.Fatal("the turn is not goal-driven")
	}
	h.beginStep(turn)
	h.endStep(turn, 1, "stop")
	h.endTurn(turn, "completed")
	if got := c.tool("SetGoalBudget", map[string]any{"value": 5, "unit": "tokens"}); !strings.Contains(got.Output, "(1 token used so far)") {
		t.Errorf("SetGoalBudget output = %q, want it to say 1 token", got.Output)
	}
	if code := c.shutdown(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	out, _, _ := e.cli("goal", "budget", "1", "turn", "--workspace", e.ws)
	if !strings.Contains(out, "Used: 1/1 turn · 1/5 tokens · ") {
		t.Errorf("goal budget 1 turn prints %q", out)
	}
	e.cli("goal", "budget", "off", "turns", "--workspace", e.ws) // 1/1 turn blocked the goal
	e.cli("goal", "budget", "off", "tokens", "--workspace", e.ws)
	if _, errOut, code := e.cli("goal", "resume", "--workspace", e.ws); code != 0 {
		t.Fatalf("goal resume: %d %s", code, errOut)
	}
	if out, _, _ := e.cli("goal", "status", "--workspace", e.ws); !strings.Contains(out, "Used: 1 turn · 1 token · ") {
		t.Errorf("goal status = %q, want 1 turn · 1 token", out)
	}
	out, _, _ = e.cli("tool", "UpdateGoal", `{"status":"complete"}`, "--workspace", e.ws)
	if !regexp.MustCompile(`Worked 1 turn over \S+, using 1 token\.`).MatchString(out) {
		t.Errorf("UpdateGoal complete = %q, want Worked 1 turn …, using 1 token.", out)
	}
}
