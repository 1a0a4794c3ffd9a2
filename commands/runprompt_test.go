package commands

import (
	"reflect"
	"testing"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/reminder"
)

// TestContinuationPromptFromTheWire: the prompt `agentd run` builds from
// the goal a client holds is the one the hooks give for the same goal
// (reminder.Continue on the domain snapshot), every field filled.
func TestContinuationPromptFromTheWire(t *testing.T) {
	s := &goal.Snapshot{}
	(&filler{}).fill(reflect.ValueOf(s).Elem())
	s.Status = goal.Active
	want, err := reminder.Continue(s.ModelView(), goal.ContinuationNormal)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ContinuationPrompt(wireGoal(s))
	if err != nil || got != want.Prompt {
		t.Errorf("ContinuationPrompt = %q, %v\nwant %q", got, err, want.Prompt)
	}
	if _, err := ContinuationPrompt(nil); err == nil {
		t.Error("ContinuationPrompt(nil) gave no error")
	}
}
