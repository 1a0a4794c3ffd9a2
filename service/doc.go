// Package service is agentd's runtime: the one workspace registry of a
// process and what runs on it besides the commands. It owns the clocks of
// the goal runtime (goal.Instant), the wall-clock budget timers
// (docs/runtime.md §2.4), the restart rule run at every open of a folder by
// a serving process (docs/runtime.md §2.3; docs/runtime.md
// §2.3.2), the recording of task file changes the workspace watcher reports
// (docs/runtime.md §4), the turns a connection abandons, and the
// subscriptions to committed changes. Its functions run one rule of todo,
// goal or reminder on one session in one transaction, so that a command
// handler only decodes, resolves the workspace, calls one function and
// encodes.
//
// It imports todo, goal, reminder and workspace, and, for a check's
// process group, caller (a process's environment) and golang.org/x/sys
// (Windows' job objects, macOS's sysctl); never commands (which
// calls it), lsp, go.lsp.dev, bbolt or fsnotify (docs/architecture.md).
package service
