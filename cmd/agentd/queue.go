package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentd/agentd/commands"
	"github.com/agentd/agentd/commands/protocol"
)

var queueUsage = `usage:
  agentd goal queue add OBJECTIVE [--criterion TEXT] [--check COMMAND] [--budget BUDGET]...
  agentd goal queue list [--json]
  agentd goal queue rm ID
  agentd goal queue mv ID POSITION   POSITION 1 is first, as list numbers them
  agentd goal queue auto-advance on|off
The queue holds the session's upcoming goals: when the current goal completes, the
first one becomes the active goal, unless auto-advance is off; it starts with the
budgets --budget gave it as limits the person set (as agentd goal budget reads them:
--budget "20 turns, 50k tokens", or --budget repeated). Each command prints the
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

// goalQueue is `agentd goal queue ACTION ...` (docs/commands.md): the
// session's goal queue from a shell.
type goalQueue struct {
	g         *goal
	criterion string     // add
	check     optString  // add
	budgets   budgetList // add
}

// budgetList is a --budget flag that may be given more than once.
type budgetList []string

func (l *budgetList) String() string { return strings.Join(*l, ", ") }

func (l *budgetList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

func (*goalQueue) Name() string { return "queue" }

func (q *goalQueue) SetFlags(fs *flag.FlagSet) {
	criterionVar(fs, &q.criterion)
	checkVar(fs, &q.check)
	fs.Var(&q.budgets, "budget", "goal queue add: a budget of the queued goal, e.g. \"20 turns, 50k tokens\" (repeat for more)")
}

func (q *goalQueue) Run(ctx context.Context, e *env, pos []string) int {
	if len(pos) == 0 {
		fmt.Fprint(e.stderr, queueUsage)
		return 2
	}
	if pos[0] == "help" {
		fmt.Fprint(e.stdout, queueUsage)
		return 0
	}
	id, args, ok := q.request(e, pos[0], pos[1:])
	if !ok {
		return 2
	}
	res, ok := oneShotHere(ctx, e, q.g.target, "goal queue "+pos[0], id, args, nil)
	if !ok {
		return 1
	}
	st := res.(protocol.State)
	if q.g.jsonOut {
		printJSON(e.stdout, st.Queue)
	} else {
		fmt.Fprint(e.stdout, formatQueue(st.Queue))
	}
	return 0
}

// request is the command and arguments of `agentd goal queue VERB
// REST...`; false, its error and the usage said on stderr, for a command
// line that is wrong.
func (q *goalQueue) request(e *env, verb string, rest []string) (id protocol.CommandID, args protocol.Args, ok bool) {
	usage := func(msg string) (protocol.CommandID, protocol.Args, bool) {
		fmt.Fprintf(e.stderr, "agentd goal queue %s: %s\n%s", verb, msg, queueUsage)
		return "", nil, false
	}
	switch verb {
	case "add":
		if len(rest) == 0 {
			return usage("say what the goal is: agentd goal queue add \"OBJECTIVE\"")
		}
		add := &protocol.QueueAddArgs{Objective: strings.Join(rest, " "), CompletionCriterion: q.criterion}
		if q.check.set {
			add.Check = &q.check.value
		}
		budget, err := commands.QueueBudget(q.budgets)
		if err != nil {
			return usage(err.Error())
		}
		add.BudgetUpdate = budget
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
			return usage("name the queued goal and where it goes: agentd goal queue mv ID POSITION")
		}
		pos, err := strconv.Atoi(rest[1])
		if err != nil || pos < 1 {
			return usage(fmt.Sprintf("POSITION must be a whole number from 1 (the first, as agentd goal queue list numbers them), got %q", rest[1]))
		}
		id, args = protocol.CmdQueueMove, &protocol.QueueMoveArgs{ID: rest[0], Index: pos - 1}
	case "auto-advance":
		if len(rest) != 1 || (rest[0] != "on" && rest[0] != "off") {
			return usage("say on or off: agentd goal queue auto-advance on|off")
		}
		id, args = protocol.CmdQueueSetAutoAdvance, &protocol.QueueAutoAdvanceArgs{On: rest[0] == "on"}
	default:
		return usage(fmt.Sprintf("unknown action %q", verb))
	}
	return id, args, true
}

// formatQueue is the human view of the queue: one line per queued goal,
// numbered from 1 as agentd watch numbers them and mv takes them, with
// its id, criterion and check, and the auto-advance setting.
func formatQueue(q protocol.QueueState) string {
	var b strings.Builder
	onOff := map[bool]string{true: "on", false: "off"}[q.AutoAdvance]
	if len(q.Items) == 0 {
		fmt.Fprintf(&b, "Up next: nothing queued (auto-advance %s).\n", onOff)
		return b.String()
	}
	fmt.Fprintf(&b, "Up next (auto-advance %s):\n", onOff)
	for i, it := range q.Items {
		fmt.Fprintf(&b, "  %d. %s\n     id: %s\n", i+1, it.Objective, it.ID)
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
		if budgets := commands.QueuedBudgets(it); budgets != "" {
			fmt.Fprintf(&b, "     Budget: %s\n", budgets)
		}
	}
	return b.String()
}
