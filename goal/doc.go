// Package goal owns a session's goal: its state machine, budgets, turn
// accounting on an injected clock, the four goal tools and their error codes
// (RUNTIME.md §2, §3).
//
// It is pure: no I/O and no real clock (time comes in as a parameter or
// through Clock). It may import github.com/google/uuid and the standard
// library, and nothing else: no other agentd package, no go.lsp.dev, bbolt
// or fsnotify (ARCHITECTURE.md).
package goal
