package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/agentd/agentd/commands"
)

const goalUsage = `usage:
  agentd goal create OBJECTIVE [--criterion TEXT] [--replace] [--task-file PATH]
  agentd goal pause [--reason TEXT]
  agentd goal resume
  agentd goal cancel
  agentd goal budget BUDGET          e.g. 20 turns, 50k tokens, 90 minutes, 1 hour, 2h, 1h30m
  agentd goal budget off UNIT        remove that limit: off turns, off tokens, off time
  agentd goal status [--json] [--exit-code]
`

// Exit codes of `agentd goal status --exit-code` (PROTOCOL.md §1).
var statusExitCodes = map[string]int{"complete": 0, "blocked": 3, "paused": 6, "active": 2, "": 1}

// runGoal runs `agentd goal ...`: the user's goal controls from a shell.
func runGoal(ctx context.Context, o options, stateDir string, log *slog.Logger, pos []string, stdout, stderr io.Writer) int {
	if len(pos) == 0 {
		fmt.Fprint(stderr, goalUsage)
		return 2
	}
	verb, rest := pos[0], pos[1:]
	var id string
	args := map[string]any{}
	switch verb {
	case "create":
		if len(rest) == 0 {
			fmt.Fprint(stderr, "agentd goal create: say what the goal is: agentd goal create \"OBJECTIVE\"\n")
			return 2
		}
		id = "agentd.goal.create"
		args["objective"] = strings.Join(rest, " ")
		if o.criterion != "" {
			args["completionCriterion"] = o.criterion
		}
		if o.replace {
			args["replace"] = true
		}
		if o.taskFile != "" {
			args["taskFile"] = o.taskFile
		}
	case "pause", "resume", "cancel":
		if len(rest) != 0 {
			fmt.Fprint(stderr, goalUsage)
			return 2
		}
		id = "agentd.goal." + verb
		if verb == "pause" && o.reason != "" {
			args["reason"] = o.reason
		}
	case "budget":
		if len(rest) == 0 {
			fmt.Fprint(stderr, goalUsage)
			return 2
		}
		var err error
		if args, err = commands.BudgetArgs(strings.Join(rest, " ")); err != nil {
			fmt.Fprintf(stderr, "agentd goal budget: %v\n", err)
			return 2
		}
		id = "agentd.goal.setBudget"
	case "status":
		if len(rest) != 0 {
			fmt.Fprint(stderr, goalUsage)
			return 2
		}
		id = "agentd.state"
	default:
		fmt.Fprintf(stderr, "agentd goal: unknown action %q\n%s", verb, goalUsage)
		return 2
	}
	res, err := oneShot(ctx, o, stateDir, log, id, args)
	if err != nil {
		fmt.Fprintf(stderr, "agentd goal %s: %v\n", verb, err)
		return 1
	}
	if cr, ok := res.(commands.CancelResult); ok {
		if o.jsonOut {
			printJSON(stdout, cr.Cancelled)
		} else {
			fmt.Fprint(stdout, formatCancelled(cr))
		}
		return 0
	}
	st := res.(commands.State)
	taskFileNow(&st)
	if o.jsonOut {
		printJSON(stdout, st.Goal)
	} else {
		fmt.Fprint(stdout, formatGoal(st))
	}
	if verb == "status" && o.exitCode {
		status := ""
		if st.Goal != nil {
			status = string(st.Goal.Status)
		}
		return statusExitCodes[status]
	}
	return 0
}

// formatCancelled is what `agentd goal cancel` says: the goal it cleared,
// as it ended.
func formatCancelled(cr commands.CancelResult) string {
	g := cr.Cancelled
	if g == nil {
		return "No goal.\n"
	}
	return fmt.Sprintf("Cancelled the goal: %s\n  It was %s; used %s.\n", g.Objective, g.Status, commands.FormatProgress(g))
}
