package commands

import (
	"encoding/json"
	"fmt"

	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/reminder"
)

// ContinuationPrompt is the continuation prompt for the goal g as a
// client holds it (agentd.state, agentd/goalChanged): the prompt the hooks
// give an agent to go on (reminder.Continue, docs/runtime.md §2.5), which
// `agentd run` sends as the first message of each agent process it starts
// (docs/commands.md, "Running a goal unattended"). The wire snapshot carries the domain
// snapshot's JSON field for field (TestWireMirrorsDomain), so it is read
// back through JSON. Error: no goal, or a snapshot that does not decode.
func ContinuationPrompt(g *protocol.GoalSnapshot) (string, error) {
	if g == nil {
		return "", fmt.Errorf("no goal to continue")
	}
	raw, err := json.Marshal(g)
	if err != nil {
		return "", err
	}
	var s goal.Snapshot
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("reading the goal: %w", err)
	}
	c, err := reminder.Continue(s.ModelView(), goal.ContinuationNormal)
	if err != nil {
		return "", err
	}
	return c.Prompt, nil
}
