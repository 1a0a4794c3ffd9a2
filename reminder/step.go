package reminder

import (
	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/todo"
)

// StepInjections is what agentd.step.begin injects before a model call, in
// this order (docs/protocol.md §3; docs/runtime.md §1.1, §2.3, §2.7):
//  1. goal_cancelled, when step.CancelNoticeDue (GoalCancelled);
//  2. goal, when step.GoalReminderDue and step.Goal is set (GoalReminder of
//     the goal's model view);
//  3. goal_wrap_up, when step.WrapUpDue and step.Goal is set (WrapUp of the
//     goal's model view; docs/runtime.md §2.4.4);
//  4. todo_list_reminder, when the stale todo reminder is due for agent
//     under s (TodoReminder with the TodoList tool enabled; it marks the
//     delivery in u, which the caller stores with the step).
//
// step is the answer of goal.State.BeginStep for the same step; items is
// the session's todo list. The result is never nil: no injection is an
// empty slice.
func StepInjections(step goal.StepBegin, u *todo.Usage, items []todo.Item, s Settings, agent string) []Injection {
	out := []Injection{}
	if step.CancelNoticeDue {
		out = append(out, GoalCancelled())
	}
	if step.GoalReminderDue && step.Goal != nil {
		if inj, ok := GoalReminder(step.Goal.ModelView()); ok {
			out = append(out, inj)
		}
	}
	if step.WrapUpDue && step.Goal != nil {
		out = append(out, WrapUp(step.Goal.ModelView()))
	}
	if inj, ok := TodoReminder(u, items, s, agent, true); ok {
		out = append(out, inj)
	}
	return out
}
