// Package reminder computes what agentd injects into an agent's loop: the
// stale todo reminder, the per-turn goal reminder, the budget-stop and
// goal-cancelled notices, and the goal continuation prompts
// (docs/runtime.md §1.1, §2.4, §2.5, §2.7), and the order in which the
// injections of one step come (StepInjections).
//
// It is pure: it reads todo and goal values and returns text. It imports
// todo and goal only; never go.lsp.dev, bbolt, fsnotify or workspace.
package reminder
