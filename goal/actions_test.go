package goal

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// actionSets are the declared statuses of each status-changing action.
var actionSets = []struct {
	name string
	set  []Status
}{
	{"PauseFrom", PauseFrom()},
	{"ResumeFrom", ResumeFrom()},
	{"BudgetFrom", BudgetFrom()},
	{"ModelStatuses", ModelStatuses()},
}

// TestActionSetsDeclared: every status an action accepts is a declared
// status (Statuses), once.
func TestActionSetsDeclared(t *testing.T) {
	for _, a := range actionSets {
		if len(a.set) == 0 {
			t.Errorf("%s is empty", a.name)
		}
		seen := map[Status]bool{}
		for _, st := range a.set {
			if !slices.Contains(Statuses(), st) {
				t.Errorf("%s holds %q, which is not in Statuses (goal/snapshot.go)", a.name, st)
			}
			if seen[st] {
				t.Errorf("%s holds %q twice", a.name, st)
			}
			seen[st] = true
		}
	}
}

// TestUpdateGoalEnum: the status enum of UpdateGoal's schema is
// ModelStatuses, in its order.
func TestUpdateGoalEnum(t *testing.T) {
	var enum any
	for _, tool := range Tools() {
		if tool.Name == UpdateGoalTool {
			enum = tool.InputSchema["properties"].(map[string]any)["status"].(map[string]any)["enum"]
		}
	}
	var want []string
	for _, st := range ModelStatuses() {
		want = append(want, string(st))
	}
	if diff := cmp.Diff(want, enum); diff != "" {
		t.Errorf("UpdateGoal's status enum is not ModelStatuses (goal/snapshot.go) (-want +got):\n%s", diff)
	}
}

// TestActionsFollowTheirSets runs pause, resume, a budget change and each
// UpdateGoal status on a goal in every status: each action changes the goal
// exactly when its declared set holds the status, is a no-op where the
// rule says so, and is refused otherwise.
func TestActionsFollowTheirSets(t *testing.T) {
	inStatus := func(t *testing.T, st Status) *State {
		c := newClock()
		s := withGoal(t, c)
		s.Goal.Status = st
		return s
	}
	now := newClock().now()
	for _, st := range Statuses() {
		t.Run(string(st), func(t *testing.T) {
			changes, err := inStatus(t, st).Pause("", now)
			if want := slices.Contains(PauseFrom(), st); (len(changes) > 0) != want || (err == nil) != (want || st == Paused) {
				t.Errorf("Pause of a %s goal: %d changes, error %v; PauseFrom holds it: %v", st, len(changes), err, want)
			}

			changes, err = inStatus(t, st).Resume(now)
			if want := slices.Contains(ResumeFrom(), st); (len(changes) > 0) != want || (err == nil) != (want || st == Active) {
				t.Errorf("Resume of a %s goal: %d changes, error %v; ResumeFrom holds it: %v", st, len(changes), err, want)
			}

			changes, err = inStatus(t, st).SetBudget(BudgetUpdate{Turns: LimitUpdate{Set: true, Value: f64(50)}}, now)
			if want := slices.Contains(BudgetFrom(), st); (len(changes) > 0) != want || (err == nil) != want {
				t.Errorf("SetBudget of a %s goal: %d changes, error %v; BudgetFrom holds it: %v", st, len(changes), err, want)
			}

			res, _ := inStatus(t, Active).CallTool(ToolCall{Call: Call{Input: UpdateGoalInput{Status: string(st)}}}, now)
			if want := slices.Contains(ModelStatuses(), st); (res.ErrorCode != CodeStatusInvalid) != want {
				t.Errorf("UpdateGoal %s on an active goal: error code %q; ModelStatuses holds it: %v", st, res.ErrorCode, want)
			}
		})
	}
}
