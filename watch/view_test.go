package watch

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/agentd/agentd/commands/protocol"
)

var update = flag.Bool("update", false, "rewrite the golden views in testdata")

// at is the tests' wall-clock time: 2026-12-02 12:00:00 UTC.
var at = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

// session is a busy session: an active goal with budgets, a check that
// failed, a task file and its plan's progress; four todo items, two queued
// goals and three changes.
func session() Snapshot {
	g := &protocol.GoalSnapshot{
		Objective: "Make the parser handle comments", CompletionCriterion: "go test ./parser passes",
		Status: "active", TurnsUsed: 3, TokensUsed: 12345, WallClockMs: 245_000,
		Budget: protocol.GoalBudget{TurnBudget: ptr[int64](20), RemainingTurns: ptr[int64](17),
			TokenBudget: ptr[int64](50000), RemainingTokens: ptr[int64](37655), WallClockBudgetMs: ptr[int64](3_600_000)},
		TaskFile:     &protocol.TaskFileInfo{Path: "TASKS.md", Exists: true},
		Check:        &protocol.Check{Command: "go test ./parser", Approved: ptr(true), LastRun: &protocol.CheckRun{ExitCode: 1, At: at.Add(-time.Minute)}},
		RequireTodos: true,
		Progress:     &protocol.Progress{Todos: &protocol.TodoProgress{Done: 1, Total: 4}, Checkboxes: &protocol.Checkboxes{Checked: 3, Total: 7}},
	}
	return Snapshot{
		State: protocol.State{Session: "default", Goal: g,
			Todos: protocol.TodosState{Items: []protocol.TodoItem{
				{Title: "read the grammar", Status: protocol.TodoDone},
				{Title: "parse line comments", Status: protocol.TodoInProgress},
				{Title: "parse block comments", Status: protocol.TodoPending},
				{Title: "add tests for nested comments", Status: protocol.TodoPending},
			}},
			Queue: protocol.QueueState{AutoAdvance: true, Items: []protocol.QueuedGoal{
				{Objective: "Document the parser", Check: "make docs"},
				{Objective: "Release 1.2"},
			}},
		},
		History: []protocol.HistoryEvent{
			{Seq: 3, At: at.Add(-10 * time.Second), Actor: "model", Kind: "todo.write"},
			{Seq: 2, At: at.Add(-time.Minute), Actor: "user", Kind: "goal.budget", Reason: "budget changed by the user"},
			{Seq: 1, At: at.Add(-5 * time.Minute), Actor: "user", Kind: "goal.create"},
		},
		At: at,
	}
}

// model is a connected panel of snap at the tests' time, size w×h, plain,
// with keys.
func model(snap *Snapshot, w, h int) Model {
	m := NewModel("/home/ada/parser", func(protocol.CommandID, any) error { return nil }, true)
	m.width, m.height, m.snap, m.link, m.now, m.loc = w, h, snap, live, at, time.UTC
	return m
}

// golden compares got with testdata/NAME.txt (-update rewrites it), and
// checks that the view fits w×h.
func golden(t *testing.T, name, got string, w, h int) {
	t.Helper()
	lines := strings.Split(got, "\n")
	if h > 0 && len(lines) > h {
		t.Errorf("%d lines, the terminal has %d", len(lines), h)
	}
	for i, l := range lines {
		if ansi.StringWidth(l) > w {
			t.Errorf("line %d is %d columns wide, the terminal %d: %q", i+1, ansi.StringWidth(l), w, l)
		}
	}
	path := filepath.Join("testdata", name+".txt")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./watch -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("view %s differs from %s:\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}

// TestRender renders the panel at fixed sizes and compares it with the
// golden views: a busy session on a wide terminal, the same on a narrow and
// short one (the goal in two lines, the lists cut), no goal, a waiting
// goal, subagents' lists nested under their items, a lost daemon, and the
// help.
func TestRender(t *testing.T) {
	busy := session()
	waiting := session()
	waiting.State.Goal.Status = "waiting"
	waiting.State.Goal.Wait = &protocol.GoalWait{Since: at.Add(-30 * time.Minute), By: "model", Note: "CI is running", Until: ptr(at.Add(2 * time.Hour)),
		Paths: []string{"ci/result.json"}, CheckPasses: true, WallClock: "stops"}
	subagents := session()
	subagents.State.Todos.SubagentLists = []protocol.SubagentList{
		{Agent: "task-1", ParentItem: "parse line comments", Items: []protocol.TodoItem{{Title: "find the lexer", Status: protocol.TodoDone}, {Title: "add the token", Status: protocol.TodoInProgress}}},
		{Agent: "task-2", Items: []protocol.TodoItem{{Title: "read the spec", Status: protocol.TodoPending}}},
	}
	noGoal := session()
	noGoal.State.Goal, noGoal.State.Queue.Items = nil, nil
	for _, tc := range []struct {
		name string
		snap *Snapshot
		w, h int
		edit func(*Model)
	}{
		{"busy-100x30", &busy, 100, 30, nil},
		{"busy-40x14", &busy, 40, 14, nil},
		{"busy-once", &busy, 100, 0, func(m *Model) { m.send = nil }},
		{"nogoal-60x20", &noGoal, 60, 20, nil},
		{"waiting-100x30", &waiting, 100, 30, nil},
		{"subagents-100x40", &subagents, 100, 40, nil},
		{"lost-80x24", &busy, 80, 24, func(m *Model) {
			m.link, m.linkErr, m.retry = lost, errors.New("the daemon closed the connection"), at.Add(4*time.Second)
		}},
		{"connecting-80x24", nil, 80, 24, func(m *Model) { m.link = connecting }},
		{"help-80x24", &busy, 80, 24, func(m *Model) { m.help = true }},
		{"refused-80x24", &busy, 80, 24, func(m *Model) {
			m.note = "agentd.goal.pause was refused: it came from Claude Code's shell (CLAUDECODE=1 in pid 42), and a command run there acts as the model, which may not pause or cancel the goal; " +
				"only the person at this machine may: ask them to run it in their own terminal or editor, not through Claude Code's shell"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := model(tc.snap, tc.w, tc.h)
			if tc.edit != nil {
				tc.edit(&m)
			}
			golden(t, tc.name, m.Render(), tc.w, tc.h)
		})
	}
}

// TestRenderStyled: the styled view is the plain one with escape
// sequences added.
func TestRenderStyled(t *testing.T) {
	snap := session()
	plain := model(&snap, 100, 30)
	styled := plain
	styled.plain = false
	got := styled.Render()
	if got == plain.Render() {
		t.Fatal("the styled view has no styles")
	}
	if ansi.Strip(got) != plain.Render() {
		t.Errorf("the styled view, unstyled, differs from the plain one:\n%s\n---\n%s", ansi.Strip(got), plain.Render())
	}
}

// TestRenderEscapesTheStore: an escape sequence in an objective, a todo
// title or a history reason (text a teammate or the model wrote) reaches
// the terminal as <U+001B>, never as an escape.
func TestRenderEscapesTheStore(t *testing.T) {
	snap := session()
	snap.State.Goal.Objective = "evil \x1b]52;c;cHduZWQ=\x07 objective"
	snap.State.Todos.Items[0].Title = "\x1b[2Jclear"
	snap.History[0].Reason = "bidi \u202e reversed"
	m := model(&snap, 100, 30)
	m.plain = false
	got := m.Render()
	for _, bad := range []string{"\x1b]52", "\x1b[2J", "\u202e", "\x07"} {
		if strings.Contains(got, bad) {
			t.Errorf("the view holds %q from the store", bad)
		}
	}
	for _, want := range []string{"evil <U+001B>]52;c;cHduZWQ=<U+0007> objective", "<U+001B>[2Jclear", "bidi <U+202E> reversed"} {
		if !strings.Contains(ansi.Strip(got), want) {
			t.Errorf("the view lacks %q:\n%s", want, ansi.Strip(got))
		}
	}
}

// TestLiveWallClock: an active goal's time counts on from the snapshot
// with the clock's ticks, against its budget; a paused goal's and a
// waiting goal's whose wait stops the clock do not.
func TestLiveWallClock(t *testing.T) {
	for _, tc := range []struct {
		status protocol.GoalStatus
		wait   *protocol.GoalWait
		want   string
	}{
		{"active", nil, "Time       5m05s/1h00m (54m55s left)"},
		{"paused", nil, "Time       4m05s/1h00m (55m55s left)"},
		{"waiting", &protocol.GoalWait{WallClock: "stops"}, "Time       4m05s/1h00m (55m55s left), stopped while it waits"},
		{"waiting", &protocol.GoalWait{WallClock: "counts"}, "Time       5m05s/1h00m (54m55s left), counting while it waits"},
	} {
		snap := session()
		snap.State.Goal.Status, snap.State.Goal.Wait = tc.status, tc.wait
		var tm tea.Model = model(&snap, 100, 30)
		tm, cmd := tm.Update(tickMsg(at.Add(time.Minute)))
		if cmd == nil {
			t.Errorf("%s: a tick does not ask for the next", tc.status)
		}
		if got := tm.(Model).Render(); !strings.Contains(got, tc.want) {
			t.Errorf("%s (wait %+v): no %q in\n%s", tc.status, tc.wait, tc.want, got)
		}
	}
}
