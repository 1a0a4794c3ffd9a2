package tests

// `agentd history` (docs/commands.md, agentd.history): a session's history
// in the shell, newest first, a page at a time.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestHistoryCommand: four changes (the user's goal, its budget, the
// model's list, a pause with a reason) print newest first, one line each;
// --limit gives a page and names the command of the next; --json pages
// with --before reach every event once, in order; bad lines are refused.
func TestHistoryCommand(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if out, _, _ := e.cli("history", "--workspace", e.ws); out != "No history.\n" {
		t.Errorf("history of a new folder: %q", out)
	}
	for _, args := range [][]string{
		{"goal", "create", "Ship the parser"},
		{"goal", "budget", "3", "turns"},
		{"tool", "TodoList", `{"todos":[{"title":"write the lexer","status":"pending"}]}`},
		{"goal", "pause", "--reason", "lunch"},
	} {
		if out, errOut, code := e.cli(append(args, "--workspace", e.ws)...); code != 0 {
			t.Fatalf("agentd %v: %s%s", args, out, errOut)
		}
	}
	line := regexp.MustCompile(`^ *(\d+)  \d{4}-\d\d-\d\d \d\d:\d\d:\d\d  (\S+) +(.+)$`)
	out, errOut, code := e.cli("history", "--workspace", e.ws)
	var got []string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("history line %q: not seq, time, actor, kind", l)
		}
		got = append(got, m[1]+" "+m[2]+" "+m[3])
	}
	want := []string{"4 user goal.pause: lunch", "3 model todo.write", "2 user goal.budget: budget changed by the user", "1 user goal.create"}
	if code != 0 || strings.Join(got, "|") != strings.Join(want, "|") || !strings.Contains(errOut, "agentd: workspace "+e.ws) {
		t.Errorf("agentd history: exit %d\n%s\nwant %q; stderr %q", code, out, want, errOut)
	}

	out, _, _ = e.cli("history", "--limit", "2", "--workspace", e.ws)
	if lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); len(lines) != 3 || lines[2] != "Older events: agentd history --before 3 --limit 2" {
		t.Errorf("agentd history --limit 2:\n%s\nwant two events and the next page's command", out)
	}

	var seqs []string
	before := ""
	for page := 0; page < 10; page++ {
		args := []string{"history", "--json", "--limit", "1", "--workspace", e.ws}
		if before != "" {
			args = append(args, "--before", before)
		}
		out, errOut, code := e.cli(args...)
		var h struct {
			Events []struct {
				Seq  uint64 `json:"seq"`
				Kind string `json:"kind"`
			} `json:"events"`
			More bool `json:"more"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &h) != nil || len(h.Events) != 1 {
			t.Fatalf("agentd %v: exit %d %s %s", args, code, out, errOut)
		}
		seqs = append(seqs, fmt.Sprint(h.Events[0].Seq))
		if !h.More {
			break
		}
		before = seqs[len(seqs)-1]
	}
	if strings.Join(seqs, " ") != "4 3 2 1" {
		t.Errorf("pages of one event: seqs %v, want 4 3 2 1", seqs)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"history", "--limit", "-1"}, "agentd history: --limit must be 0 or more, got -1"},
		{[]string{"history", "--before", "x"}, "agentd: --before \"x\" is not a whole number, 0 or more (see agentd --help)\n"},
		{[]string{"history", "extra"}, "usage: agentd history"},
		{[]string{"state", "--limit", "2"}, "--limit is a flag of: history; agentd state does not take it"},
	} {
		if _, errOut, code := e.cli(append(tc.args, "--workspace", e.ws)...); code != 2 || !strings.Contains(errOut, tc.want) ||
			tc.args[1] == "--before" && errOut != tc.want { // the one line, no usage after it
			t.Errorf("agentd %v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}
