package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/agentd/agentd/commands/protocol"
)

const undoUsage = `usage: agentd undo [--scope todo|goal] [--json] [--workspace DIR] [--session S]
  reverts the newest change of the todo list or of the goal (--scope; without it, the newest
  change of either) as the user, and prints what it reverted and the state after it. The
  reverted change stays in the history; undoing an undo redoes the change (docs/runtime.md §6).
  The workspace folder used is named on stderr.
`

// undo is `agentd undo`: agentd.undo from a shell.
type undo struct {
	shell
	scope string
}

func (*undo) Name() string          { return "undo" }
func (*undo) Usage([]string) string { return undoUsage }
func (*undo) ShortHelp() string {
	return `  agentd undo [--scope todo|goal] [--json]
                                        revert the newest change of the todo list or the goal
`
}

func (u *undo) SetFlags(fs *flag.FlagSet) {
	u.shell.SetFlags(fs)
	fs.StringVar(&u.scope, "scope", "", "undo: todo or goal")
}

func (u *undo) Run(ctx context.Context, e *env, pos []string) int {
	stdout, stderr := e.stdout, e.stderr
	if len(pos) != 0 {
		fmt.Fprint(stderr, undoUsage)
		return 2
	}
	args := &protocol.UndoArgs{Scope: protocol.UndoScope(u.scope)}
	res, ok := oneShotHere(ctx, e, u.target, "undo", protocol.CmdUndo, args, nil)
	if !ok {
		return 1
	}
	ur := res.(protocol.UndoResult)
	if u.jsonOut {
		printJSON(stdout, ur)
		return 0
	}
	fmt.Fprint(stdout, formatUndo(ur))
	return 0
}

// formatUndo is what `agentd undo` says: the change it reverted and its
// scope as it is now.
func formatUndo(ur protocol.UndoResult) string {
	u := ur.Undone
	var b strings.Builder
	fmt.Fprintf(&b, "Undid %s (seq %d, by %s at %s).\n", u.Kind, u.Seq, u.Actor, u.At.Local().Format("2006-01-02 15:04:05"))
	if u.Kind.IsTodo() {
		if len(ur.Todos.Items) == 0 {
			b.WriteString("Todo list is empty.\n")
		} else {
			b.WriteString("Todo list:\n")
			for _, it := range ur.Todos.Items {
				fmt.Fprintf(&b, "  [%s] %s\n", it.Status, it.Title)
			}
		}
		return b.String()
	}
	b.WriteString(formatGoal(ur.State))
	return b.String()
}
