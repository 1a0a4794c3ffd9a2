package reminder

import (
	"fmt"
	"strings"

	"github.com/agentd/agentd/goal"
)

// Continuation variants (RUNTIME.md §2.5).
const (
	VariantContinuation          = "goal_continuation"            // the last turn ended completed
	VariantContinuationStepLimit = "goal_continuation_step_limit" // the last turn ended at the step limit
)

// stepLimitNote opens the step-limit variant.
const stepLimitNote = "Your last turn hit the step limit before it finished. Keep each slice of work small enough to finish well within one turn."

// Continuation is the prompt that starts the next goal turn (RUNTIME.md
// §2.5); the caller decides whether one is due. afterStepLimit selects
// goal_continuation_step_limit, which opens with the step-limit note.
//
// The prompt carries the escaped, tagged objective and criterion, a
// one-line progress and budget summary, and the goal rules shared with the
// per-turn goal reminder. It is not wrapped in <system-reminder>: the host
// sends it as the user message of the next turn, so it is the whole
// message, and its first lines say that it is an automatic continuation
// rather than the user's words.
func Continuation(s goal.Snapshot, afterStepLimit bool) (variant, prompt string) {
	variant = VariantContinuation
	var b strings.Builder
	if afterStepLimit {
		variant = VariantContinuationStepLimit
		b.WriteString(stepLimitNote)
		b.WriteString("\n")
	}
	b.WriteString("Continue working toward the active goal. This is an automatic continuation, not a message from the user. ")
	b.WriteString(userDataNote)
	b.WriteString("\n")
	writeObjective(&b, s)
	fmt.Fprintf(&b, "Progress: %s; %s.\n", progress(s), budgetSummary(s))
	b.WriteString("\n")
	b.WriteString(goalRules)
	return variant, b.String()
}

// budgetSummary is "budgets: turns 3 of 10 used (7 left), ..." or
// "no budget set", for one line.
func budgetSummary(s goal.Snapshot) string {
	bs := budgets(s)
	if len(bs) == 0 {
		return "no budget set"
	}
	parts := make([]string, len(bs))
	for i, bu := range bs {
		parts[i] = fmt.Sprintf("%s %s of %s used (%s left)", bu.name, bu.used, bu.limit, bu.left)
	}
	return "budgets: " + strings.Join(parts, ", ")
}
