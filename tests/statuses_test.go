package tests

import (
	"slices"
	"testing"

	"github.com/agentd/agentd/commands"
	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/reminder"
)

// TestEveryGoalStatus runs every declared goal status (goal.Statuses)
// through every Go place that switches on a status: the change kind of a
// move to it, the per-turn goal reminder, the exit code of `agentd goal
// status --exit-code`, the progress line and the actions that accept it
// (goal.PauseFrom and the others). A status added to
// goal.Statuses fails here until each place handles it and this test says
// what each place does with it.
func TestEveryGoalStatus(t *testing.T) {
	t.Parallel()
	// What the per-turn goal reminder does for each status (docs/runtime.md
	// §2.7): true when it injects.
	reminds := map[goal.Status]bool{goal.Active: true, goal.Paused: true, goal.Blocked: true, goal.Complete: false, goal.Waiting: true}
	// Which actions accept each status (goal/snapshot.go): pause, resume,
	// budget change, set by the model with UpdateGoal.
	accepts := map[goal.Status][4]bool{
		goal.Active:   {true, false, true, true},
		goal.Paused:   {false, true, true, false},
		goal.Blocked:  {false, true, true, true},
		goal.Complete: {false, false, false, true},
		goal.Waiting:  {true, true, true, true},
	}
	actions := []struct {
		name string
		set  []goal.Status
	}{{"goal.PauseFrom", goal.PauseFrom()}, {"goal.ResumeFrom", goal.ResumeFrom()}, {"goal.BudgetFrom", goal.BudgetFrom()}, {"goal.ModelStatuses", goal.ModelStatuses()}}
	kinds := map[goal.ChangeKind]goal.Status{}
	codes := map[int]goal.Status{}
	for _, st := range goal.Statuses() {
		t.Run(string(st), func(t *testing.T) {
			kind, ok := st.ChangeKind()
			if !ok || kind == "" {
				t.Errorf("no change kind for a move to %q: add a ChangeKind constant (goal/state.go) and return it from goal.Status.ChangeKind (goal/snapshot.go)", st)
			} else if other, dup := kinds[kind]; dup {
				t.Errorf("change kind %q for both %q and %q: give %q its own in goal.Status.ChangeKind (goal/snapshot.go)", kind, other, st, st)
			}
			kinds[kind] = st

			snap := &goal.Snapshot{Objective: "ship it", Status: st, TurnsUsed: 1}
			shown := &protocol.GoalSnapshot{Objective: "ship it", Status: protocol.GoalStatus(st), TurnsUsed: 1}
			code, err := commands.StatusExitCode(shown)
			switch other, dup := codes[code]; {
			case err != nil:
				t.Errorf("exit code for %q: %v: give it a code in commands.StatusExitCode (commands/goal.go)", st, err)
			case dup:
				t.Errorf("exit code %d for both %q and %q: give %q its own in commands.StatusExitCode (commands/goal.go)", code, other, st, st)
			case code == commands.ExitNoGoal || code == commands.ExitUnknownStatus || code == 4:
				t.Errorf("exit code %d for %q is taken by no goal, an unknown status or a failure: choose another in commands.StatusExitCode (commands/goal.go)", code, st)
			}
			codes[code] = st

			want, decided := reminds[st]
			if !decided {
				t.Errorf("this test does not say whether the goal reminder injects for %q: decide it in reminder.GoalReminder (reminder/goal.go) and in this test's reminds", st)
			}
			if _, got := reminder.GoalReminder(*snap); got != want {
				t.Errorf("goal reminder for %q: injects = %v, want %v: change reminder.GoalReminder (reminder/goal.go) or this test's reminds", st, got, want)
			}

			wantAccepts, decided := accepts[st]
			if !decided {
				t.Errorf("this test does not say which actions accept %q: decide it in goal.PauseFrom, goal.ResumeFrom, goal.BudgetFrom and goal.ModelStatuses (goal/snapshot.go) and in this test's accepts", st)
			}
			for i, a := range actions {
				if got := slices.Contains(a.set, st); got != wantAccepts[i] {
					t.Errorf("%s holds %q: %v, want %v: change %s (goal/snapshot.go) or this test's accepts", a.name, st, got, wantAccepts[i], a.name)
				}
			}

			if p := commands.FormatProgress(shown); p != "1 turn · 0 tokens · 0s" {
				t.Errorf("progress for %q = %q: see commands.FormatProgress (commands/notify.go)", st, p)
			}
		})
	}
	if code, err := commands.StatusExitCode(&protocol.GoalSnapshot{Status: "archived"}); err == nil || code != commands.ExitUnknownStatus {
		t.Errorf("an unknown status exits %d (%v), want %d with an error", code, err, commands.ExitUnknownStatus)
	}
	if code, err := commands.StatusExitCode(nil); err != nil || code != commands.ExitNoGoal {
		t.Errorf("no goal exits %d (%v), want %d", code, err, commands.ExitNoGoal)
	}
	if _, ok := goal.Status("archived").ChangeKind(); ok {
		t.Errorf("an unknown status has a change kind")
	}
}
