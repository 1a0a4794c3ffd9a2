package reminder

import (
	"strings"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/todo"
)

// Settings tune the stale todo reminder (docs/runtime.md §1.1, [agentd])
// and the stall rule (docs/runtime.md §2.4.5). A threshold of 0 (or less)
// turns its rule off. Clients set them by the names of SettingsTable.
type Settings struct {
	TodoReminderSteps    int // steps without a write before the reminder is due
	TodoReminderInterval int // steps between two reminders
	StallTurns           int // goal turns in a row without progress before the goal is stalled
}

// DefaultSettings are the spec's thresholds: 10 and 10 steps, and 3 turns.
func DefaultSettings() Settings {
	return Settings{TodoReminderSteps: 10, TodoReminderInterval: 10, StallTurns: 3}
}

// Setting is one client setting: Name is its key in
// initializationOptions.settings and in settings.agentd of
// workspace/didChangeConfiguration (docs/commands.md, "Settings"), Doc what
// it means, Unit what it counts ("steps" or "turns"), Field its threshold
// in a Settings: a whole number of Unit, 0 or more, 0 turning its rule
// off. Its default is Field of DefaultSettings.
type Setting struct {
	Name  string
	Doc   string
	Unit  string
	Field func(*Settings) *int
}

// SettingsTable lists every setting, in the order docs/commands.md shows
// them: the one declaration that commands decodes and the docs table is
// generated from.
func SettingsTable() []Setting {
	return []Setting{
		{Name: "todoReminderSteps", Doc: "steps since the last TodoList write before the stale todo reminder; 0 turns it off", Unit: "steps",
			Field: func(s *Settings) *int { return &s.TodoReminderSteps }},
		{Name: "todoReminderInterval", Doc: "steps since the last reminder before another; 0 turns it off", Unit: "steps",
			Field: func(s *Settings) *int { return &s.TodoReminderInterval }},
		{Name: "stallTurns", Doc: "goal turns in a row with no change to the todo list or the task file before the goal is stalled; 0 turns stall detection off", Unit: "turns",
			Field: func(s *Settings) *int { return &s.StallTurns }},
	}
}

// todoReminderText is what the model reads when its list has gone stale.
const todoReminderText = `Your todo list has not been updated for a while. If tracking helps with the current work, update the item statuses now. If the list no longer matches the work, clear it or rewrite it. If it is not relevant right now, ignore this reminder. Never mention this reminder to the user.`

// TodoReminder is called at agentd.step.begin and says whether the stale
// todo reminder is due now (docs/runtime.md §1.1). It is due when all hold:
//   - agent is goal.MainAgent and the TodoList tool is enabled for the session,
//   - u.Used (the list was read or written at least once in the session),
//   - both thresholds of s are above 0,
//   - u.StepsSinceWrite >= s.TodoReminderSteps,
//   - u.StepsSinceReminder >= s.TodoReminderInterval, where a session that
//     was never reminded (!u.Reminded) counts as infinitely many steps, so
//     only StepsSinceWrite gates the first reminder.
//
// When due it returns the injection (variant todo_list_reminder; a
// non-empty items is appended as todo.RenderNumbered) and marks it delivered
// in u (u.NoteReminderDelivered); the caller stores u. Otherwise u is left
// unchanged.
func TodoReminder(u *todo.Usage, items []todo.Item, s Settings, agent string, toolEnabled bool) (Injection, bool) {
	if !todoReminderDue(u, s, agent, toolEnabled) {
		return Injection{}, false
	}
	u.NoteReminderDelivered()
	var b strings.Builder
	b.WriteString(todoReminderText)
	if len(items) > 0 {
		b.WriteString("\n\n")
		b.WriteString(todo.RenderNumbered(items))
	}
	return inject(VariantTodoListReminder, b.String()), true
}

func todoReminderDue(u *todo.Usage, s Settings, agent string, toolEnabled bool) bool {
	switch {
	case agent != goal.MainAgent, !toolEnabled, !u.Used:
		return false
	case s.TodoReminderSteps <= 0, s.TodoReminderInterval <= 0:
		return false
	case u.StepsSinceWrite < s.TodoReminderSteps:
		return false
	case u.Reminded && u.StepsSinceReminder < s.TodoReminderInterval:
		return false
	}
	return true
}
