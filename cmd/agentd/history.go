package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/agentd/agentd/commands/protocol"
)

const historyUsage = `usage: agentd history [--limit N] [--before SEQ] [--json] [--workspace DIR] [--session S]
  prints the session's history (agentd.history, docs/commands.md), newest first: each change
  of the todo list and the goal with its seq, time, actor and kind. --limit N events (default
  50); --before SEQ only events older than SEQ: when more are left the last line says the
  command that prints the next page. The workspace folder used is named on stderr.
`

// history is `agentd history`: agentd.history from a shell.
type history struct {
	shell
	limit  int
	before uint64
}

func (*history) Name() string          { return "history" }
func (*history) Usage([]string) string { return historyUsage }
func (*history) ShortHelp() string {
	return `  agentd history [--limit N] [--before SEQ] [--json]
                                        print the session's history, newest first
`
}

func (h *history) SetFlags(fs *flag.FlagSet) {
	h.shell.SetFlags(fs)
	fs.IntVar(&h.limit, "limit", 0, "history: how many events (default 50)")
	fs.Uint64Var(&h.before, "before", 0, "history: only events older than this seq")
}

func (h *history) Run(ctx context.Context, e *env, pos []string) int {
	stdout, stderr := e.stdout, e.stderr
	if len(pos) != 0 {
		fmt.Fprint(stderr, historyUsage)
		return 2
	}
	if h.limit < 0 {
		fmt.Fprintf(stderr, "agentd history: --limit must be 0 or more, got %d\n", h.limit)
		return 2
	}
	args := &protocol.HistoryArgs{Limit: h.limit, Before: h.before}
	res, ok := oneShotHere(ctx, e, h.target, "history", protocol.CmdHistory, args, nil)
	if !ok {
		return 1
	}
	hr := res.(protocol.HistoryResult)
	if h.jsonOut {
		printJSON(stdout, hr)
		return 0
	}
	fmt.Fprint(stdout, formatHistory(hr, h.limit))
	return 0
}

// formatHistory is the human view of `agentd history`: one line per event
// (seq, local time, actor, kind, and the reason when the change gave one),
// then the command line of the next page when older events are left.
func formatHistory(h protocol.HistoryResult, limit int) string {
	if len(h.Events) == 0 {
		return "No history.\n"
	}
	var b strings.Builder
	for _, ev := range h.Events {
		fmt.Fprintf(&b, "%6d  %s  %-8s %s", ev.Seq, ev.At.Local().Format("2006-01-02 15:04:05"), ev.Actor, ev.Kind)
		if ev.Reason != "" {
			fmt.Fprintf(&b, ": %s", ev.Reason)
		}
		b.WriteString("\n")
	}
	if h.More {
		next := fmt.Sprintf("agentd history --before %d", h.Events[len(h.Events)-1].Seq)
		if limit > 0 {
			next += fmt.Sprintf(" --limit %d", limit)
		}
		fmt.Fprintf(&b, "Older events: %s\n", next)
	}
	return b.String()
}
