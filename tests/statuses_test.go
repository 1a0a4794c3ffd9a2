package tests

import (
	"testing"

	"github.com/agentd/agentd/commands"
	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/reminder"
)

// TestEveryGoalStatus runs every declared goal status (goal.Statuses)
// through every Go place that switches on a status: the change kind of a
// move to it, the per-turn goal reminder, the exit code of `agentd goal
// status --exit-code` and the progress line. A status added to
// goal.Statuses fails here until each place handles it and this test says
// what each place does with it.
func TestEveryGoalStatus(t *testing.T) {
	// What the per-turn goal reminder does for each status (docs/runtime.md
	// §2.7): true when it injects.
	reminds := map[goal.Status]bool{goal.Active: true, goal.Paused: true, goal.Blocked: true, goal.Complete: false}
	kinds := map[goal.ChangeKind]goal.Status{}
	codes := map[int]goal.Status{}
	for _, st := range goal.Statuses() {
		t.Run(string(st), func(t *testing.T) {
			kind, ok := st.ChangeKind()
			if !ok || kind == "" {
				t.Errorf("no change kind for a move to %q", st)
			} else if other, dup := kinds[kind]; dup {
				t.Errorf("change kind %q for both %q and %q", kind, other, st)
			}
			kinds[kind] = st

			snap := &goal.Snapshot{Objective: "ship it", Status: st, TurnsUsed: 1}
			code, err := commands.StatusExitCode(snap)
			switch other, dup := codes[code]; {
			case err != nil:
				t.Errorf("exit code: %v", err)
			case dup:
				t.Errorf("exit code %d for both %q and %q", code, other, st)
			case code == commands.ExitNoGoal || code == commands.ExitUnknownStatus || code == 4:
				t.Errorf("exit code %d for %q is taken by no goal, an unknown status or a failure", code, st)
			}
			codes[code] = st

			want, decided := reminds[st]
			if !decided {
				t.Errorf("this test does not say whether the goal reminder injects for %q: decide it in reminder.GoalReminder and here", st)
			}
			if _, got := reminder.GoalReminder(*snap); got != want {
				t.Errorf("goal reminder for %q: injects = %v, want %v", st, got, want)
			}

			if p := commands.FormatProgress(snap); p != "1 turn · 0 tokens · 0s" {
				t.Errorf("progress for %q = %q", st, p)
			}
		})
	}
	if code, err := commands.StatusExitCode(&goal.Snapshot{Status: "archived"}); err == nil || code != commands.ExitUnknownStatus {
		t.Errorf("an unknown status exits %d (%v), want %d with an error", code, err, commands.ExitUnknownStatus)
	}
	if code, err := commands.StatusExitCode(nil); err != nil || code != commands.ExitNoGoal {
		t.Errorf("no goal exits %d (%v), want %d", code, err, commands.ExitNoGoal)
	}
	if _, ok := goal.Status("archived").ChangeKind(); ok {
		t.Errorf("an unknown status has a change kind")
	}
}
