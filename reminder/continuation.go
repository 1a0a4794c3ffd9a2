package reminder

import (
	"fmt"
	"strings"

	"github.com/agentd/agentd/goal"
)

// stepLimitNote opens the step-limit variant.
const stepLimitNote = "Your last turn hit the step limit before it finished. Keep each slice of work small enough to finish well within one turn."

// Continuation is the prompt that starts the next goal turn (docs/runtime.md
// §2.5), as agentd.turn.end answers it (docs/protocol.md §3): the host sends
// Prompt as the next user message, then begins a turn with origin
// "continuation". Variant is one of goal's continuation variants, the only
// declaration of them.
type Continuation struct {
	Variant goal.Continuation `json:"variant"`
	Prompt  string            `json:"prompt"`
}

// Continue is the continuation of variant v for the goal s; the caller
// decides whether one is due (goal.TurnEnd.Continuation).
// goal.ContinuationStepLimit opens with the step-limit note. Errors: v is
// goal.NoContinuation or a variant this function does not know, which is a
// bug of the caller or of a newly added variant.
//
// The prompt carries the escaped, tagged objective and criterion, a
// one-line progress and budget summary, and the goal rules shared with the
// per-turn goal reminder. It is not wrapped in <system-reminder>: the host
// sends it as the user message of the next turn, so it is the whole
// message, and its first lines say that it is an automatic continuation
// rather than the user's words.
func Continue(s goal.Snapshot, v goal.Continuation) (Continuation, error) {
	var b strings.Builder
	switch v {
	case goal.ContinuationNormal:
	case goal.ContinuationStepLimit:
		b.WriteString(stepLimitNote)
		b.WriteString("\n")
	default:
		return Continuation{}, fmt.Errorf("no continuation prompt for variant %q", v)
	}
	b.WriteString("Continue working toward the active goal. This is an automatic continuation, not a message from the user. ")
	b.WriteString(userDataNote)
	b.WriteString("\n")
	writeWoke(&b, s)
	writeObjective(&b, s)
	fmt.Fprintf(&b, "Progress: %s; %s.\n", progress(s), budgetSummary(s))
	writeOpenItems(&b, s)
	b.WriteString("\n")
	b.WriteString(goalRules)
	return Continuation{Variant: v, Prompt: b.String()}, nil
}

// writeOpenItems names the todo list's open items, one line each, escaped
// as the objective is (they are the model's or the user's text), and says
// when the goal requires them (docs/runtime.md §2.12); nothing when the
// snapshot has no list or every item is done.
func writeOpenItems(b *strings.Builder, s goal.Snapshot) {
	if s.Progress == nil || s.Progress.Todos == nil || s.Progress.Todos.Done == s.Progress.Todos.Total {
		return
	}
	t := s.Progress.Todos
	open := t.Total - t.Done
	lead := "Open todo items (%d of %d done):\n"
	if s.RequireTodos {
		lead = "Open todo items (%d of %d done); the goal requires them, so UpdateGoal \"complete\" is refused until each is done:\n"
	}
	fmt.Fprintf(b, lead, t.Done, t.Total)
	for _, title := range t.Open {
		fmt.Fprintf(b, "- %s\n", escape(strings.Join(strings.Fields(title), " ")))
	}
	if more := open - len(t.Open); more > 0 {
		fmt.Fprintf(b, "- and %d more (read the list with TodoList)\n", more)
	}
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
