// Package watch is `agentd watch` (docs/commands.md, "agentd watch"): a
// live terminal panel of one workspace folder's session for people who run
// their agent in a terminal: the goal (status, budgets used and left, the
// check, the plan's progress, what a waiting goal waits for), the todo
// list, the goal queue and the last changes.
//
// It is a client beside lsp, as mcpserver and hook are: it opens a
// client.Session on the shared daemon (Options.Dial), reads agentd.state
// and agentd.history, and reads them again when the daemon tells a change
// of the session (agentd/todoChanged, agentd/goalChanged,
// agentd/queueChanged, agentd/taskFileChanged): no polling. A lost daemon
// is shown and dialled again. The keys p and r send agentd.goal.pause and
// agentd.goal.resume, the person's commands: the daemon decides who calls
// from the process at the other end of the socket (docs/runtime.md §7), so
// a panel run from an agent's shell is refused as the model is.
//
// The model and its view (model.go, view.go) are plain values that tests
// render at a fixed size; the connection (link.go) feeds them messages.
// Fit (fit.go) cuts a line to a terminal's width in cells, for `agentd
// run`'s status line (cmd/agentd), so that the terminal library stays here.
// Built on Bubble Tea and Lip Gloss, which no other package imports. It
// imports commands/protocol, goal (its formatting of counts and
// VisibleText) and lsp/daemon/client; never lsp, commands or workspace.
package watch
