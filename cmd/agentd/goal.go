package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"

	"github.com/agentd/agentd/commands"
)

const goalUsage = `usage:
  agentd goal create OBJECTIVE [--criterion TEXT] [--replace] [--task-file PATH]
  agentd goal pause [--reason TEXT]
  agentd goal resume
  agentd goal cancel
  agentd goal budget VALUE UNIT      UNIT: turns, tokens, seconds, minutes, hours, milliseconds
  agentd goal budget off UNIT        remove that limit
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
		if len(rest) != 2 {
			fmt.Fprint(stderr, goalUsage)
			return 2
		}
		remove := rest[0] == "off" || rest[0] == "none"
		value, err := strconv.ParseFloat(rest[0], 64)
		if err != nil && !remove {
			fmt.Fprintf(stderr, "agentd goal budget: %q is not a number (or off)\n", rest[0])
			return 2
		}
		if args, err = commands.BudgetArgs(value, rest[1], remove); err != nil {
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
	st := res.(commands.State)
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
