package main

import (
	"context"
	"fmt"
	"github.com/agentd/agentd/commands/protocol"
	"io"
	"log/slog"
	"strings"

	"github.com/agentd/agentd/commands"
)

const historyUsage = `usage: agentd history [--limit N] [--before SEQ] [--json] [--workspace DIR] [--session S]
  prints the session's history (agentd.history, docs/commands.md), newest first: each change
  of the todo list and the goal with its seq, time, actor and kind. --limit N events (default
  50); --before SEQ only events older than SEQ: when more are left the last line says the
  command that prints the next page. The workspace folder used is named on stderr.
`

// runHistory runs `agentd history`: agentd.history from a shell.
func runHistory(ctx context.Context, o options, stateDir string, log *slog.Logger, pos []string, stdout, stderr io.Writer) int {
	if len(pos) != 0 {
		fmt.Fprint(stderr, historyUsage)
		return 2
	}
	if o.limit < 0 {
		fmt.Fprintf(stderr, "agentd history: --limit must be 0 or more, got %d\n", o.limit)
		return 2
	}
	args := &protocol.HistoryArgs{Limit: o.limit, Before: o.before}
	res, ok := oneShotHere(ctx, o, stateDir, log, stderr, "history", protocol.CmdHistory, args, nil)
	if !ok {
		return 1
	}
	h := res.(commands.HistoryResult)
	if o.jsonOut {
		printJSON(stdout, h)
		return 0
	}
	fmt.Fprint(stdout, formatHistory(h, o))
	return 0
}

// formatHistory is the human view of `agentd history`: one line per event
// (seq, local time, actor, kind, and the reason when the change gave one),
// then the command line of the next page when older events are left.
func formatHistory(h commands.HistoryResult, o options) string {
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
		if o.limit > 0 {
			next += fmt.Sprintf(" --limit %d", o.limit)
		}
		fmt.Fprintf(&b, "Older events: %s\n", next)
	}
	return b.String()
}
