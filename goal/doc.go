// Package goal owns a session's goal: its state machine, budgets, turn
// accounting, the four goal tools and their error codes (docs/runtime.md §2, §3).
//
// Everything lives in State, a JSON value the workspace package stores per
// session. Host lifecycle calls drive accounting: BeginTurn, BeginStep,
// EndStep, EndTurn, AbandonTurn (docs/runtime.md §2.4–§2.6). User controls are
// Create, Pause, Resume, Cancel and SetBudget, and for the queue of upcoming
// goals Enqueue, Dequeue, MoveQueued and SetAutoAdvance (docs/runtime.md
// §2.9; they return a QueueChange); refusals are *Error with a stable code. A
// completion advances to the first queued goal in the same call. Models use NewCall, which decodes a tool's typed input once,
// then CallTool; refusals are ToolResult values with IsError. Every
// mutating method returns the visible changes ([]Change) for
// the history and the agentd/goalChanged notification.
//
// Turn ids and steps: lifecycle calls are idempotent per turnId. Steps of a
// turn alternate begin/end; a BeginStep while a step is open, or an EndStep
// with no open step, is a retry that changes nothing and returns the answer
// of the call it repeats. A retried EndTurn returns the first answer.
//
// It is pure: no I/O and no clock; time comes in as a parameter, an Instant
// that carries a wall-clock and a monotonic reading (docs/runtime.md
// §2.4.1). It may
// import jsonin (the one strict decoder of inputs, for the tool inputs),
// github.com/google/uuid and the standard library, and nothing else: no
// other agentd package, no go.lsp.dev, bbolt or fsnotify (docs/architecture.md).
package goal
