package reminder

import (
	"strings"
	"testing"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/todo"
	"github.com/google/go-cmp/cmp"
)

// TestStepInjections: the injections of agentd.step.begin and their order,
// with thresholds other than the defaults, so that the reminder follows the
// settings it is given.
func TestStepInjections(t *testing.T) {
	s := Settings{TodoReminderSteps: 3, TodoReminderInterval: 2}
	active := activeGoal()
	complete := with(activeGoal(), func(g *goal.Snapshot) { g.Status = goal.Complete })
	stale := todo.Usage{Used: true, StepsSinceWrite: 3}
	items := []todo.Item{{Title: "write the parser", Status: todo.InProgress}}
	tests := []struct {
		name      string
		step      goal.StepBegin
		usage     todo.Usage
		settings  Settings
		agent     string
		want      []string // variants, in order
		reminded  bool     // the todo reminder was marked delivered
		wantUsage todo.Usage
	}{
		{name: "all due: cancelled, goal, todo", step: goal.StepBegin{CancelNoticeDue: true, GoalReminderDue: true, Goal: &active}, usage: stale, settings: s, agent: "main",
			want: []string{VariantGoalCancelled, VariantGoal, VariantTodoListReminder}, reminded: true},
		{name: "all four due: cancelled, goal, wrap-up, todo", step: goal.StepBegin{CancelNoticeDue: true, GoalReminderDue: true, WrapUpDue: true, Goal: &active}, usage: stale, settings: s, agent: "main",
			want: []string{VariantGoalCancelled, VariantGoal, VariantGoalWrapUp, VariantTodoListReminder}, reminded: true},
		{name: "wrap-up at a later step", step: goal.StepBegin{WrapUpDue: true, Goal: &active}, usage: todo.Usage{}, settings: s, agent: "main",
			want: []string{VariantGoalWrapUp}},
		{name: "goal then todo", step: goal.StepBegin{GoalReminderDue: true, Goal: &active}, usage: stale, settings: s, agent: "main",
			want: []string{VariantGoal, VariantTodoListReminder}, reminded: true},
		{name: "cancelled then todo", step: goal.StepBegin{CancelNoticeDue: true}, usage: stale, settings: s, agent: "main",
			want: []string{VariantGoalCancelled, VariantTodoListReminder}, reminded: true},
		{name: "goal reminder not due", step: goal.StepBegin{Goal: &active}, usage: todo.Usage{}, settings: s, agent: "main",
			want: []string{}},
		{name: "goal reminder due without a goal", step: goal.StepBegin{GoalReminderDue: true}, usage: todo.Usage{}, settings: s, agent: "main",
			want: []string{}},
		{name: "a complete goal has no reminder", step: goal.StepBegin{GoalReminderDue: true, Goal: &complete}, usage: todo.Usage{}, settings: s, agent: "main",
			want: []string{}},
		{name: "below the settings' steps", step: goal.StepBegin{}, usage: todo.Usage{Used: true, StepsSinceWrite: 2}, settings: s, agent: "main",
			want: []string{}, wantUsage: todo.Usage{Used: true, StepsSinceWrite: 2}},
		{name: "within the settings' interval", step: goal.StepBegin{}, usage: todo.Usage{Used: true, StepsSinceWrite: 9, Reminded: true, StepsSinceReminder: 1}, settings: s, agent: "main",
			want: []string{}, wantUsage: todo.Usage{Used: true, StepsSinceWrite: 9, Reminded: true, StepsSinceReminder: 1}},
		{name: "after the settings' interval", step: goal.StepBegin{}, usage: todo.Usage{Used: true, StepsSinceWrite: 9, Reminded: true, StepsSinceReminder: 2}, settings: s, agent: "main",
			want: []string{VariantTodoListReminder}, reminded: true},
		{name: "reminder off", step: goal.StepBegin{}, usage: stale, settings: Settings{TodoReminderSteps: 0, TodoReminderInterval: 2}, agent: "main",
			want: []string{}, wantUsage: stale},
		{name: "a subagent gets no todo reminder", step: goal.StepBegin{CancelNoticeDue: true}, usage: stale, settings: s, agent: "sub",
			want: []string{VariantGoalCancelled}, wantUsage: stale},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := tc.usage
			got := StepInjections(tc.step, &u, items, tc.settings, tc.agent)
			if got == nil {
				t.Fatal("StepInjections = nil, want a slice (JSON [])")
			}
			variants := []string{}
			for _, inj := range got {
				variants = append(variants, inj.Variant)
			}
			if diff := cmp.Diff(tc.want, variants); diff != "" {
				t.Fatalf("variants (-want +got):\n%s", diff)
			}
			for _, inj := range got {
				var want Injection
				switch inj.Variant {
				case VariantGoalCancelled:
					want = GoalCancelled()
				case VariantGoal:
					want, _ = GoalReminder(tc.step.Goal.ModelView())
				case VariantGoalWrapUp:
					want = WrapUp(tc.step.Goal.ModelView())
				case VariantTodoListReminder:
					if !strings.Contains(inj.Text, todo.RenderNumbered(items)) {
						t.Errorf("todo reminder does not carry the list:\n%s", inj.Text)
					}
					continue
				}
				if inj != want {
					t.Errorf("%s injection = %q, want %q", inj.Variant, inj.Text, want.Text)
				}
			}
			wantUsage := tc.wantUsage
			if tc.reminded {
				wantUsage = tc.usage
				wantUsage.Reminded, wantUsage.StepsSinceReminder = true, 0
			}
			if u != wantUsage {
				t.Errorf("usage after = %+v, want %+v", u, wantUsage)
			}
		})
	}
}
