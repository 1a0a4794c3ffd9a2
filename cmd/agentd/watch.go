package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/agentd/agentd/cmd/internal/cli"
	"github.com/agentd/agentd/watch"
)

const watchUsage = `usage: agentd watch [--once] [--workspace DIR] [--session S] [--remote auto|unix:PATH]
  a live panel of the workspace folder's session in this terminal: the goal (status, budgets
  used and left, check, the plan's progress, what a waiting goal waits for), the todo list,
  the goal queue and the last changes, redrawn when agentd tells a change. It connects to the
  shared daemon (started when none runs, as agentd mcp does) and dials it again when it goes.
  Keys: p pauses the goal, r resumes it (the person's commands: refused when run from an
  agent's shell, docs/runtime.md §7), ? help, q quits.
  Needs a terminal on stdout; --once prints the panel once, as read now, and exits (for a
  pipe or a script). The workspace folder used is named on stderr.
`

// onceWidth is the width of `agentd watch --once`: a snapshot is not
// drawn on a terminal whose width is known.
const onceWidth = 100

// watchCmd is `agentd watch` (docs/commands.md, "agentd watch"): the
// terminal panel of package watch on the folder's session, through the
// shared daemon.
type watchCmd struct {
	t    target
	once bool
}

func (*watchCmd) Name() string          { return "watch" }
func (*watchCmd) Usage([]string) string { return watchUsage }
func (*watchCmd) ShortHelp() string {
	return `  agentd watch [--once]                 a live terminal panel: the goal, budgets, todo list,
                                        queue and last changes; p pause, r resume, q quit
`
}

func (w *watchCmd) SetFlags(fs *flag.FlagSet) {
	cli.WorkspaceVar(fs, &w.t.workspace)
	cli.SessionVar(fs, &w.t.session)
	cli.RemoteVar(fs, &w.t.remote)
	w.t.etcd.SetFlags(fs)
	fs.BoolVar(&w.once, "once", false, "watch: print the panel once and exit")
}

// printsForPerson: the panel escapes the store's text itself (its view
// draws with escape sequences of its own); stderr goes through
// visibleWriter.
func (*watchCmd) printsForPerson() bool { return false }

func (w *watchCmd) Run(ctx context.Context, e *env, pos []string) int {
	if len(pos) > 0 {
		fmt.Fprint(e.stderr, watchUsage)
		return 2
	}
	out, onTerminal := e.stdout.(*os.File)
	onTerminal = onTerminal && isTerminal(out)
	if !onTerminal && !w.once {
		fmt.Fprint(e.stderr, "agentd watch: stdout is not a terminal; run it in a terminal, or use agentd watch --once for one snapshot (agentd state --json for a script)\n")
		return 2
	}
	path, explicit, err := cli.RemoteSocket(w.t.remote)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentd watch: %v\n", err)
		return 2
	}
	folder, err := workspaceFolder(e, w.t)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentd watch: %v\n", err)
		return 1
	}
	noteFolder(e.stderr, folder)
	opts := watch.Options{Folder: folder, Session: w.t.session, In: e.stdin, Out: e.stdout,
		Dial: func(ctx context.Context) (io.ReadWriteCloser, error) {
			conn, _, err := dialShared(ctx, e, w.t, path, explicit)
			if err != nil {
				return nil, err
			}
			return conn, nil
		}}
	if w.once {
		err = watch.Once(ctx, opts, onceWidth)
	} else {
		err = watch.Run(ctx, opts)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "agentd watch: %v\n", err)
		return 1
	}
	return 0
}
