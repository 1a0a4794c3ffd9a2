package reminder

import (
	"strings"
	"testing"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/todo"
	"github.com/google/go-cmp/cmp"
)

// runSteps plays script, one character per step of the main agent or agent:
// '.' does nothing with the list, 'r' reads it, 'w' writes it, 'o' does
// nothing and the list is written after it ended, outside any step. Each
// step begins with TodoReminder and ends with EndStep, as the commands
// package drives them. It returns the indices of the steps that got the
// reminder.
func runSteps(t testing.TB, script string, s Settings, agent string, enabled bool) []int {
	t.Helper()
	var u todo.Usage
	var got []int
	for i, c := range script {
		if _, ok := TodoReminder(&u, nil, s, agent, enabled); ok {
			got = append(got, i)
		}
		switch c {
		case 'r':
			u.NoteRead()
		case 'w':
			u.NoteWrite(true)
		case '.', 'o':
		default:
			t.Fatalf("bad script character %q", c)
		}
		u.EndStep()
		if c == 'o' {
			u.NoteWrite(false)
		}
	}
	return got
}

func dots(n int) string { return strings.Repeat(".", n) }

// tens are the thresholds the rule tests use, given explicitly so that a
// change of DefaultSettings breaks only TestDefaultSettings.
var tens = Settings{TodoReminderSteps: 10, TodoReminderInterval: 10}

// TestDefaultSettings pins the spec's thresholds and the stallTurns default, the defaults the generated
// settings tables of docs/runtime.md §1.1 and docs/commands.md show.
func TestDefaultSettings(t *testing.T) {
	if got, want := DefaultSettings(), (Settings{TodoReminderSteps: 10, TodoReminderInterval: 10, StallTurns: 3}); got != want {
		t.Errorf("DefaultSettings() = %+v, want %+v", got, want)
	}
}

func TestTodoReminderCounting(t *testing.T) {
	tests := []struct {
		name    string
		script  string
		s       Settings
		agent   string
		enabled bool
		want    []int // steps that begin with the reminder
	}{
		// Step 0 writes; steps 1..9 end: 9 steps since the write at the
		// beginning of step 10.
		{"9 steps after a write: none", "w" + dots(10), tens, "main", true, nil},
		{"10 steps after a write: reminder", "w" + dots(11), tens, "main", true, []int{11}},
		{"9 steps after a reminder: none", "w" + dots(20), tens, "main", true, []int{11}},
		{"10 steps after a reminder: again", "w" + dots(21), tens, "main", true, []int{11, 21}},
		{"a read does not reset stepsSinceWrite", "w" + dots(5) + "r" + dots(5), tens, "main", true, []int{11}},
		{"the step that writes resets", "w" + dots(5) + "w" + dots(10), tens, "main", true, nil},
		{"the step that writes resets, then 10 steps", "w" + dots(5) + "w" + dots(11), tens, "main", true, []int{17}},
		{"a write right after the reminder restarts the wait", "w" + dots(10) + "w" + dots(11), tens, "main", true, []int{11, 22}},
		{"read only: steps count from the session start", "r" + dots(10), tens, "main", true, []int{10}},
		// Written after step 0 ended: steps 1..10 end after the write, so
		// step 11 begins with the reminder (the write is not step 1's).
		{"a write outside any step: 9 steps after it, none", "o" + dots(10), tens, "main", true, nil},
		{"a write outside any step: 10 steps after it, reminder", "o" + dots(11), tens, "main", true, []int{11}},
		{"custom thresholds", "w" + dots(14), Settings{TodoReminderSteps: 3, TodoReminderInterval: 5}, "main", true, []int{4, 9, 14}},
		{"interval below steps: the write still gates", "w" + dots(12), Settings{TodoReminderSteps: 10, TodoReminderInterval: 1}, "main", true, []int{11, 12}},
		{"steps threshold 0 disables", "w" + dots(30), Settings{TodoReminderSteps: 0, TodoReminderInterval: 10}, "main", true, nil},
		{"interval threshold 0 disables", "w" + dots(30), Settings{TodoReminderSteps: 10, TodoReminderInterval: 0}, "main", true, nil},
		{"subagent gets none", "w" + dots(30), tens, "explore", true, nil},
		{"tool disabled: none", "w" + dots(30), tens, "main", false, nil},
		{"never-used list gets none", dots(30), tens, "main", true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runSteps(t, tt.script, tt.s, tt.agent, tt.enabled)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("reminder steps (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUsageSteps(t *testing.T) {
	tests := []struct {
		name string
		do   func(u *todo.Usage)
		want todo.Usage
	}{
		{"read marks used only", func(u *todo.Usage) { u.NoteRead() },
			todo.Usage{Used: true}},
		{"write resets at once", func(u *todo.Usage) { u.StepsSinceWrite = 7; u.NoteWrite(true) },
			todo.Usage{Used: true, WroteThisStep: true}},
		{"a write outside a step belongs to no step", func(u *todo.Usage) { u.StepsSinceWrite = 7; u.NoteWrite(false); u.EndStep() },
			todo.Usage{Used: true, StepsSinceWrite: 1, StepsSinceReminder: 1}},
		{"end of the writing step keeps 0", func(u *todo.Usage) { u.NoteWrite(true); u.EndStep() },
			todo.Usage{Used: true, StepsSinceReminder: 1}},
		{"end of another step counts", func(u *todo.Usage) { u.NoteWrite(true); u.EndStep(); u.NoteRead(); u.EndStep() },
			todo.Usage{Used: true, StepsSinceWrite: 1, StepsSinceReminder: 2}},
		{"delivery resets stepsSinceReminder only", func(u *todo.Usage) {
			*u = todo.Usage{Used: true, StepsSinceWrite: 12, StepsSinceReminder: 12}
			u.NoteReminderDelivered()
		}, todo.Usage{Used: true, StepsSinceWrite: 12, Reminded: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var u todo.Usage
			tt.do(&u)
			if diff := cmp.Diff(tt.want, u); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTodoReminderDue(t *testing.T) {
	tests := []struct {
		name  string
		u     todo.Usage
		want  bool
		wantU todo.Usage
	}{
		{"never reminded: stepsSinceReminder counts as infinite",
			todo.Usage{Used: true, StepsSinceWrite: 10, StepsSinceReminder: 0},
			true, todo.Usage{Used: true, StepsSinceWrite: 10, Reminded: true}},
		{"reminded 9 steps ago",
			todo.Usage{Used: true, StepsSinceWrite: 30, StepsSinceReminder: 9, Reminded: true},
			false, todo.Usage{Used: true, StepsSinceWrite: 30, StepsSinceReminder: 9, Reminded: true}},
		{"reminded 10 steps ago",
			todo.Usage{Used: true, StepsSinceWrite: 30, StepsSinceReminder: 10, Reminded: true},
			true, todo.Usage{Used: true, StepsSinceWrite: 30, Reminded: true}},
		{"written 9 steps ago",
			todo.Usage{Used: true, StepsSinceWrite: 9, StepsSinceReminder: 50, Reminded: true},
			false, todo.Usage{Used: true, StepsSinceWrite: 9, StepsSinceReminder: 50, Reminded: true}},
		{"not used",
			todo.Usage{StepsSinceWrite: 50, StepsSinceReminder: 50},
			false, todo.Usage{StepsSinceWrite: 50, StepsSinceReminder: 50}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := tt.u
			_, got := TodoReminder(&u, nil, tens, goal.MainAgent, true)
			if got != tt.want {
				t.Errorf("due = %v, want %v", got, tt.want)
			}
			if diff := cmp.Diff(tt.wantU, u); diff != "" {
				t.Errorf("usage after (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTodoReminderText(t *testing.T) {
	due := todo.Usage{Used: true, StepsSinceWrite: 10}
	items := []todo.Item{{Title: "Read the spec", Status: todo.Done}, {Title: "Write the parser", Status: todo.InProgress}}
	tests := []struct {
		name  string
		items []todo.Item
		want  Injection
	}{
		{"with a list", items, Injection{Variant: "todo_list_reminder", Text: "<system-reminder>\n" + todoReminderText +
			"\n\nCurrent todo list:\n1. [done] Read the spec\n2. [in_progress] Write the parser\n</system-reminder>"}},
		{"empty list", []todo.Item{}, Injection{Variant: "todo_list_reminder", Text: "<system-reminder>\n" + todoReminderText + "\n</system-reminder>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := due
			got, ok := TodoReminder(&u, tt.items, tens, goal.MainAgent, true)
			if !ok {
				t.Fatal("reminder not due")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("injection (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTodoReminderRules pins the content §1.1 requires, so the text cannot
// silently lose a rule.
func TestTodoReminderRules(t *testing.T) {
	rules := []struct{ rule, phrase string }{
		{"not updated for a while", "has not been updated for a while"},
		{"update statuses if tracking helps", "if tracking helps with the current work, update the item statuses"},
		{"clear or rewrite if it no longer matches", "if the list no longer matches the work, clear it or rewrite it"},
		{"ignore if not relevant", "if it is not relevant right now, ignore this reminder"},
		{"never mention to the user", "never mention this reminder to the user"},
	}
	u := todo.Usage{Used: true, StepsSinceWrite: 10}
	inj, _ := TodoReminder(&u, nil, tens, goal.MainAgent, true)
	for _, r := range rules {
		t.Run(r.rule, func(t *testing.T) {
			if !strings.Contains(strings.ToLower(inj.Text), r.phrase) {
				t.Errorf("todo reminder lacks %q:\n%s", r.phrase, inj.Text)
			}
		})
	}
}

func todoUsageDue() todo.Usage { return todo.Usage{Used: true, StepsSinceWrite: 10} }
