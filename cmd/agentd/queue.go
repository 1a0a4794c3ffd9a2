package main

import (
	"context"
	"fmt"
	"github.com/agentd/agentd/commands/protocol"
	"io"
	"log/slog"
	"strconv"
	"strings"

	"github.com/agentd/agentd/commands"
)

var queueUsage = `usage:
  agentd goal queue add OBJECTIVE [--criterion TEXT] [--check COMMAND]
  agentd goal queue list [--json]
  agentd goal queue rm ID
  agentd goal queue mv ID INDEX      INDEX 0 is first
  agentd goal queue auto-advance on|off
The queue holds the session's upcoming goals: when the current goal completes, the
first one becomes the active goal, unless auto-advance is off. Each command prints the
queue (--json: {items, autoAdvance}).
`

// optString is a string flag that knows whether it was given, so that
// --check "" is sent (and refused) rather than taken for no check.
type optString struct {
	value string
	set   bool
}

func (s *optString) String() string { return s.value }

func (s *optString) Set(v string) error {
	s.value, s.set = v, true
	return nil
}

// runGoalQueue runs `agentd goal queue ACTION ...` (docs/commands.md):
// the session's goal queue from a shell. fail maps an exit code as
// runGoal does (--exit-code).
func runGoalQueue(ctx context.Context, o options, stateDir string, log *slog.Logger, pos []string, stdout, stderr io.Writer, fail func(int) int) int {
	if len(pos) == 0 {
		fmt.Fprint(stderr, queueUsage)
		return fail(2)
	}
	verb, rest := pos[0], pos[1:]
	var id protocol.CommandID
	var args protocol.Args
	usage := func(msg string) int {
		fmt.Fprintf(stderr, "agentd goal queue %s: %s\n%s", verb, msg, queueUsage)
		return fail(2)
	}
	switch verb {
	case "help":
		fmt.Fprint(stdout, queueUsage)
		return 0
	case "add":
		if len(rest) == 0 {
			return usage("say what the goal is: agentd goal queue add \"OBJECTIVE\"")
		}
		add := &protocol.QueueAddArgs{Objective: strings.Join(rest, " "), CompletionCriterion: o.criterion}
		if o.check.set {
			add.Check = &o.check.value
		}
		id, args = protocol.CmdQueueAdd, add
	case "list":
		if len(rest) != 0 {
			return usage("list takes no arguments")
		}
		id, args = protocol.CmdState, &protocol.NoArgs{} // a read: creates no state file (docs/protocol.md §1.2.2)
	case "rm":
		if len(rest) != 1 {
			return usage("name the queued goal: agentd goal queue rm ID (agentd goal queue list shows the ids)")
		}
		id, args = protocol.CmdQueueRemove, &protocol.QueueIDArgs{ID: rest[0]}
	case "mv":
		if len(rest) != 2 {
			return usage("name the queued goal and where it goes: agentd goal queue mv ID INDEX")
		}
		index, err := strconv.Atoi(rest[1])
		if err != nil {
			return usage(fmt.Sprintf("INDEX must be a whole number (0 is first), got %q", rest[1]))
		}
		id, args = protocol.CmdQueueMove, &protocol.QueueMoveArgs{ID: rest[0], Index: index}
	case "auto-advance":
		if len(rest) != 1 || (rest[0] != "on" && rest[0] != "off") {
			return usage("say on or off: agentd goal queue auto-advance on|off")
		}
		id, args = protocol.CmdQueueSetAutoAdvance, &protocol.QueueAutoAdvanceArgs{On: rest[0] == "on"}
	default:
		return usage(fmt.Sprintf("unknown action %q", verb))
	}
	res, ok := oneShotHere(ctx, o, stateDir, log, stderr, "goal queue "+verb, id, args, nil)
	if !ok {
		return fail(1)
	}
	st := res.(commands.State)
	if o.jsonOut {
		printJSON(stdout, st.Queue)
	} else {
		fmt.Fprint(stdout, formatQueue(st.Queue))
	}
	return 0
}

// formatQueue is the human view of the queue: one numbered line per
// queued goal with its id, criterion and check, and the auto-advance
// setting.
func formatQueue(q commands.QueueState) string {
	var b strings.Builder
	onOff := map[bool]string{true: "on", false: "off"}[q.AutoAdvance]
	if len(q.Items) == 0 {
		fmt.Fprintf(&b, "Up next: nothing queued (auto-advance %s).\n", onOff)
		return b.String()
	}
	fmt.Fprintf(&b, "Up next (auto-advance %s):\n", onOff)
	for i, it := range q.Items {
		fmt.Fprintf(&b, "  %d. %s\n     id: %s\n", i, it.Objective, it.ID)
		if it.CompletionCriterion != "" {
			fmt.Fprintf(&b, "     Done when: %s\n", it.CompletionCriterion)
		}
		if it.Check != "" {
			approval := "waiting for approval on this machine"
			if it.CheckApproved != nil && *it.CheckApproved {
				approval = "approved on this machine"
			}
			fmt.Fprintf(&b, "     Check: %s\n       (%s)\n", commands.VisibleText(it.Check), approval)
		}
	}
	return b.String()
}
