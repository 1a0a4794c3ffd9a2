package reminder

import (
	"github.com/agentd/agentd/commands/protocol"
	"strings"
)

// Injection is text agentd adds to the model's context before a step, as
// the wire carries it (protocol.Injection).
type Injection = protocol.Injection

// Injection variants (docs/protocol.md §3, docs/runtime.md §1.1, §2.3, §2.4, §2.4.4, §2.7).
const (
	VariantTodoListReminder = "todo_list_reminder" // stale todo reminder (§1.1)
	VariantGoal             = "goal"               // per-turn goal reminder (§2.7)
	VariantGoalCancelled    = "goal_cancelled"     // the user cancelled the goal (§2.3)
	VariantGoalBudgetStop   = "goal_budget_stop"   // grace step after a mid-turn budget stop (§2.4)
	VariantGoalWrapUp       = "goal_wrap_up"       // a budget is 80 % used (§2.4.4)
)

// Wrapping tags of every injection, each on its own line.
const (
	openTag  = "<system-reminder>"
	closeTag = "</system-reminder>"
)

// inject wraps body into an injection of the given variant.
func inject(variant, body string) Injection {
	return Injection{Variant: variant, Text: openTag + "\n" + body + "\n" + closeTag}
}

// escaper HTML-escapes &, < and > in one pass, so an "&" produced by
// escaping is never escaped again.
var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// escape makes user text safe to place between our tags: no text inside can
// open or close a tag (docs/runtime.md §2.7).
func escape(s string) string { return escaper.Replace(s) }
