package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentd/agentd/commands"
	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/setup"
)

var goalUsage = `usage:
  agentd goal create OBJECTIVE [--criterion TEXT] [--replace] [--task-file PATH] [--check COMMAND]
                     [--require-todos=false]   by default the goal completes only once every
                                     item of the todo list is done; false: it does not wait
  agentd goal set-check COMMAND      the goal's verification command, run by sh -c in the
                                     workspace folder when the agent marks the goal complete
  agentd goal set-check --clear      remove it
  agentd goal check                  run the check now and print its result; the goal's status
                                     does not change; exit 0 passed, ` + strconv.Itoa(exitCheckFailed) + ` failed, 1 no check or an error
  agentd goal check --approve [COMMAND]
                                     approve the goal's check (COMMAND: the exact text you saw)
                                     on this machine, so that it may run here; a check set on
                                     another machine or outside agentd waits for this
  agentd goal pause [--reason TEXT]
  agentd goal wait [--until TIME|--for DURATION] [--path P]... [--check-passes] [--note TEXT]
                   [--wall-clock counts|stops]
                                     wait, spending nothing, until TIME (RFC 3339 or 14:00) or
                                     DURATION (30m) passes, a file or folder P changes, or the
                                     check passes; stops: the wait does not count against the
                                     wall-clock budget (default counts)
  agentd goal resume                 resume a paused, blocked or waiting goal
  agentd goal cancel
  agentd goal budget BUDGET          e.g. 20 turns, 50k tokens, 90 minutes, 1 hour, 2h, 1h30m, 1 day
  agentd goal budget off UNIT        remove that limit: off turns, off tokens, off time
  agentd goal queue add|list|rm|mv|auto-advance ...   the queue of upcoming goals
                                     (agentd goal queue help)
  agentd goal status [--json] [--exit-code]
                                     --exit-code: exit ` + commands.StatusExitCodes() + `;
                                     ` + strconv.Itoa(commands.ExitUnknownStatus) + ` a status this agentd does not know;
                                     with --exit-code every failure exits ` + strconv.Itoa(exitFailure) + `
A relative --task-file is relative to the current folder (to the workspace folder when
run outside it). An OBJECTIVE that starts with -
goes after --: agentd goal create -- "-v flag support". The workspace folder used is
named on stderr.
`

// exitFailure is what every failure exits with when --exit-code is on the
// command line: a code none of the states has (docs/protocol.md §1.2.2); the
// states' codes are commands.StatusExitCode's.
const exitFailure = 4

// exitCheckFailed is what `agentd goal check` exits with when the check
// ran and did not pass (docs/commands.md).
const exitCheckFailed = 3

// goal is `agentd goal ACTION ...`: the user's goal controls from a
// shell, an action each with its flags; every action takes the shell
// flags. With --exit-code (goal status) every failure exits exitFailure
// instead of 1 or 2.
type goal struct {
	shell
	create         goalCreate
	pause          goalPause
	wait           goalWait
	resume, cancel goalPlain
	budget         goalBudget
	status         goalStatus
	queue          goalQueue
	setCheck       goalSetCheck
	check          goalCheck
}

func newGoal() *goal {
	g := &goal{}
	g.wait.g = g
	g.create.g, g.pause.g, g.budget.g, g.status.g, g.queue.g, g.setCheck.g, g.check.g = g, g, g, g, g, g, g
	g.resume = goalPlain{g: g, name: "resume", id: protocol.CmdGoalResume}
	g.cancel = goalPlain{g: g, name: "cancel", id: protocol.CmdGoalCancel}
	return g
}

func (*goal) Name() string { return "goal" }

// Usage is goal's, the queue's for `agentd goal queue`.
func (*goal) Usage(args []string) string {
	if len(args) > 0 && args[0] == "queue" {
		return queueUsage
	}
	return goalUsage
}

func (*goal) ShortHelp() string {
	return `  agentd goal create|pause|wait|resume|cancel|budget|status|queue|set-check|check ...
                                        the user's goal controls (agentd goal for help)
`
}

// Actions are goal's, in the order the refusal of a flag names them.
func (g *goal) Actions() []action {
	return []action{&g.create, &g.pause, &g.wait, &g.resume, &g.cancel, &g.budget, &g.status, &g.queue, &g.setCheck, &g.check}
}

// fail is code, or exitFailure with --exit-code.
func (g *goal) fail(code int) int {
	if g.status.exitCode {
		return exitFailure
	}
	return code
}

func (g *goal) Run(ctx context.Context, e *env, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, goalUsage)
		return g.fail(2)
	}
	if args[0] == "help" {
		fmt.Fprint(e.stdout, goalUsage)
		return 0
	}
	act := actionNamed(g, args)
	if act == nil {
		fmt.Fprintf(e.stderr, "agentd goal: unknown action %q\n%s", args[0], goalUsage)
		return g.fail(2)
	}
	return act.Run(ctx, e, args[1:])
}

// send runs command id with args for `agentd goal VERB` on the workspace
// folder (oneShotHere; withFolder completes args with it) and prints the
// answer (printGoalResult).
func (g *goal) send(ctx context.Context, e *env, verb string, id protocol.CommandID, args protocol.Args, withFolder func(folder string) error) int {
	res, ok := oneShotHere(ctx, e, g.target, "goal "+verb, id, args, withFolder)
	if !ok {
		return g.fail(1)
	}
	return g.printResult(e, verb, res)
}

// noArgs says whether rest is empty; else it shows goal's usage.
func (g *goal) noArgs(e *env, rest []string) bool {
	if len(rest) != 0 {
		fmt.Fprint(e.stderr, goalUsage)
		return false
	}
	return true
}

// goalCreate is `agentd goal create OBJECTIVE`.
type goalCreate struct {
	g         *goal
	criterion string
	replace   bool
	taskFile  string
	check     optString
	todos     bool
}

func (*goalCreate) Name() string { return "create" }

func (c *goalCreate) SetFlags(fs *flag.FlagSet) {
	criterionVar(fs, &c.criterion)
	checkVar(fs, &c.check)
	fs.BoolVar(&c.replace, "replace", false, "goal create: replace the current goal")
	fs.StringVar(&c.taskFile, "task-file", "", "goal create: task file path")
	fs.BoolVar(&c.todos, "require-todos", true, "goal create: the goal completes only once every item of the todo list is done (--require-todos=false: it does not wait)")
}

func (c *goalCreate) Run(ctx context.Context, e *env, rest []string) int {
	if len(rest) == 0 {
		fmt.Fprint(e.stderr, "agentd goal create: say what the goal is: agentd goal create \"OBJECTIVE\"\n")
		return 2
	}
	args := &protocol.GoalCreateArgs{Objective: strings.Join(rest, " "), CompletionCriterion: c.criterion, Replace: c.replace}
	if c.check.set {
		args.Check = c.check.value
	}
	if !c.todos {
		args.RequireTodos = &c.todos
	}
	var withFolder func(folder string) error
	if c.taskFile != "" {
		withFolder = func(folder string) (err error) {
			args.TaskFile, err = taskFileArg(folder, c.taskFile)
			return err
		}
	}
	return c.g.send(ctx, e, "create", protocol.CmdGoalCreate, args, withFolder)
}

// criterionVar declares --criterion (goal create, goal queue add) on fs.
func criterionVar(fs *flag.FlagSet, p *string) {
	fs.StringVar(p, "criterion", "", "goal create, goal queue add: completion criterion")
}

// checkVar declares --check (goal create, goal queue add) on fs.
func checkVar(fs *flag.FlagSet, p *optString) {
	fs.Var(p, "check", "goal create, goal queue add: the command that proves the goal is done")
}

// goalPause is `agentd goal pause [--reason TEXT]`.
type goalPause struct {
	g      *goal
	reason string
}

func (*goalPause) Name() string { return "pause" }

func (p *goalPause) SetFlags(fs *flag.FlagSet) {
	fs.StringVar(&p.reason, "reason", "", "goal pause: reason")
}

func (p *goalPause) Run(ctx context.Context, e *env, rest []string) int {
	if !p.g.noArgs(e, rest) {
		return 2
	}
	return p.g.send(ctx, e, "pause", protocol.CmdGoalPause, &protocol.GoalPauseArgs{Reason: p.reason}, nil)
}

// goalWait is `agentd goal wait [--until TIME|--for DURATION] [--path
// P]... [--check-passes] [--note TEXT] [--wall-clock counts|stops]`
// (docs/runtime.md §2.13).
type goalWait struct {
	g    *goal
	args protocol.GoalWaitArgs
}

func (*goalWait) Name() string { return "wait" }

func (w *goalWait) SetFlags(fs *flag.FlagSet) {
	fs.StringVar(&w.args.Until, "until", "", "goal wait: wake at this time (RFC 3339, or a time of day: 14:00)")
	fs.StringVar(&w.args.For, "for", "", "goal wait: wake after this long (90s, 30m, 2h)")
	fs.Func("path", "goal wait: wake when this file or folder changes (repeatable)", func(p string) error {
		w.args.Paths = append(w.args.Paths, p)
		return nil
	})
	fs.BoolVar(&w.args.CheckPasses, "check-passes", false, "goal wait: wake when the goal's check passes")
	fs.StringVar(&w.args.Note, "note", "", "goal wait: what the goal waits for")
	fs.StringVar(&w.args.WallClock, "wall-clock", "", "goal wait: counts (default) or stops: whether the wait counts against the wall-clock budget")
}

func (w *goalWait) Run(ctx context.Context, e *env, rest []string) int {
	if !w.g.noArgs(e, rest) {
		return 2
	}
	args := w.args
	paths := args.Paths
	withFolder := func(folder string) error {
		args.Paths = nil
		for _, p := range paths {
			rel, err := taskFileArg(folder, p)
			if err != nil {
				return err
			}
			args.Paths = append(args.Paths, rel)
		}
		return nil
	}
	return w.g.send(ctx, e, "wait", protocol.CmdGoalWait, &args, withFolder)
}

// formatWait is what `agentd goal status` says of a waiting goal's wait:
// since when, by whom, and each wake condition, one per line; a time that
// has passed says so.
func formatWait(w *protocol.GoalWait) string {
	if w == nil {
		return ""
	}
	var b strings.Builder
	by := "the user"
	if w.By == "model" {
		by = "the agent"
	}
	fmt.Fprintf(&b, "  Waiting since %s (asked by %s; the wall clock %s)\n", w.Since.Local().Format(time.DateTime), by, w.WallClock)
	if w.Until != nil {
		passed := ""
		if w.Until.Before(time.Now()) { // read from a shell with no daemon, which is what wakes it
			passed = " (passed: the goal wakes when an agentd daemon serves this folder)"
		}
		fmt.Fprintf(&b, "    until %s%s\n", w.Until.Local().Format(time.DateTime), passed)
	}
	for _, p := range w.Paths {
		fmt.Fprintf(&b, "    for a change of %s\n", commands.VisibleText(p))
	}
	if w.CheckPasses {
		b.WriteString("    for the check to pass\n")
	}
	if w.Note != "" {
		fmt.Fprintf(&b, "    note: %s\n", commands.VisibleText(w.Note))
	}
	return b.String()
}

// goalPlain is an action without flags or arguments: resume, cancel.
type goalPlain struct {
	g    *goal
	name string
	id   protocol.CommandID
}

func (p *goalPlain) Name() string         { return p.name }
func (*goalPlain) SetFlags(*flag.FlagSet) {}

func (p *goalPlain) Run(ctx context.Context, e *env, rest []string) int {
	if !p.g.noArgs(e, rest) {
		return 2
	}
	return p.g.send(ctx, e, p.name, p.id, &protocol.NoArgs{}, nil)
}

// goalBudget is `agentd goal budget BUDGET`.
type goalBudget struct{ g *goal }

func (*goalBudget) Name() string           { return "budget" }
func (*goalBudget) SetFlags(*flag.FlagSet) {}

func (b *goalBudget) Run(ctx context.Context, e *env, rest []string) int {
	if len(rest) == 0 {
		fmt.Fprint(e.stderr, goalUsage)
		return 2
	}
	args, err := commands.BudgetArgs(strings.Join(rest, " "))
	if err != nil {
		fmt.Fprintf(e.stderr, "agentd goal budget: %v\n", err)
		return 2
	}
	return b.g.send(ctx, e, "budget", protocol.CmdGoalSetBudget, &args, nil)
}

// goalStatus is `agentd goal status [--exit-code]`.
type goalStatus struct {
	g        *goal
	exitCode bool
}

func (*goalStatus) Name() string { return "status" }

func (s *goalStatus) SetFlags(fs *flag.FlagSet) {
	fs.BoolVar(&s.exitCode, "exit-code", false, "goal status: exit "+commands.StatusExitCodes()+"; "+strconv.Itoa(exitFailure)+" a failure")
}

func (s *goalStatus) Run(ctx context.Context, e *env, rest []string) int {
	if !s.g.noArgs(e, rest) {
		return s.g.fail(2)
	}
	return s.g.send(ctx, e, "status", protocol.CmdState, &protocol.NoArgs{}, nil)
}

// goalSetCheck is `agentd goal set-check COMMAND|--clear`.
type goalSetCheck struct {
	g     *goal
	clear bool
}

func (*goalSetCheck) Name() string { return "set-check" }

func (c *goalSetCheck) SetFlags(fs *flag.FlagSet) {
	fs.BoolVar(&c.clear, "clear", false, "goal set-check: remove the goal's check")
}

func (c *goalSetCheck) Run(ctx context.Context, e *env, rest []string) int {
	args := &protocol.GoalSetCheckArgs{}
	switch {
	case c.clear && len(rest) == 0:
	case !c.clear && len(rest) > 0:
		command := strings.Join(rest, " ")
		args.Command = &command
	default:
		fmt.Fprint(e.stderr, "agentd goal set-check: give the command, or --clear to remove the check: agentd goal set-check \"go test ./...\"\n")
		return 2
	}
	return c.g.send(ctx, e, "set-check", protocol.CmdGoalSetCheck, args, nil)
}

// goalCheck is `agentd goal check [--approve [COMMAND]]`.
type goalCheck struct {
	g       *goal
	approve bool
}

func (*goalCheck) Name() string { return "check" }

func (c *goalCheck) SetFlags(fs *flag.FlagSet) {
	fs.BoolVar(&c.approve, "approve", false, "goal check: approve the goal's check on this machine instead of running it")
}

func (c *goalCheck) Run(ctx context.Context, e *env, rest []string) int {
	if c.approve {
		return approveCheck(ctx, e, c.g, strings.Join(rest, " "))
	}
	if !c.g.noArgs(e, rest) {
		return 2
	}
	return c.g.send(ctx, e, "check", protocol.CmdGoalRunCheck, &protocol.GoalRunCheckArgs{}, nil)
}

// printResult prints what `agentd goal VERB` answered, res, and returns
// the exit code: a check's run (exitCheckFailed when it did not pass), the
// goals a cancel ended, else the goal (with --exit-code, status exits its
// status's code).
func (g *goal) printResult(e *env, verb string, res any) int {
	stdout, stderr := e.stdout, e.stderr
	switch r := res.(type) {
	case protocol.CheckResult:
		if g.jsonOut {
			printJSON(stdout, r.Run)
		} else {
			fmt.Fprint(stdout, formatCheckRun(r))
		}
		if !r.Passed {
			return exitCheckFailed
		}
		return 0
	case protocol.CancelResult:
		if g.jsonOut {
			printJSON(stdout, r.Cancelled)
		} else {
			fmt.Fprint(stdout, formatCancelled(r))
		}
		return 0
	}
	st := res.(protocol.State)
	taskFileNow(&st)
	if g.jsonOut {
		printJSON(stdout, st.Goal)
	} else {
		fmt.Fprint(stdout, formatGoal(st))
		if verb == "status" && len(st.Queue.Items) > 0 {
			fmt.Fprint(stdout, formatQueue(st.Queue))
		}
	}
	if st.Stale {
		fmt.Fprint(stderr, staleNote)
	}
	if st.TeamFile != nil {
		fmt.Fprintln(stderr, teamFileLine(st.TeamFile))
	}
	if verb == "status" && g.status.exitCode {
		code, err := commands.StatusExitCode(st.Goal)
		if err != nil {
			fmt.Fprintf(stderr, "agentd goal status: %v\n", err)
		}
		return code
	}
	return 0
}

// taskFileArg is a --task-file path as the goal commands take it
// (docs/protocol.md §1.2.2). A relative path given in a folder
// inside the workspace folder is relative to the current folder, as a
// shell path is, and is sent relative to the workspace folder (symbolic
// links resolved on both sides), or absolute when it leaves it, for the
// command to refuse by name. Given elsewhere (--workspace names another
// folder), and when absolute, it is sent as it is: relative to the
// workspace folder.
func taskFileArg(folder, path string) (string, error) {
	if filepath.IsAbs(path) {
		return path, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("--task-file %s: the current folder: %v", path, err)
	}
	if real, err := filepath.EvalSymlinks(wd); err == nil {
		wd = real
	}
	root := folder
	if real, err := filepath.EvalSymlinks(folder); err == nil {
		root = real
	}
	if !within(root, wd) {
		return path, nil
	}
	abs := filepath.Join(wd, path)
	if !within(root, abs) {
		return abs, nil
	}
	return filepath.Rel(root, abs)
}

// within says whether path is root or lies under it (both clean and
// absolute).
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// formatCancelled is what `agentd goal cancel` says: the goal it cleared,
// as it ended.
func formatCancelled(cr protocol.CancelResult) string {
	g := cr.Cancelled
	if g == nil {
		return "No goal.\n"
	}
	return fmt.Sprintf("Cancelled the goal: %s\n  It was %s; used %s.\n", g.Objective, g.Status, commands.FormatProgress(g))
}

// formatCheckRun is what `agentd goal check` says: the run's summary and
// its output tail.
func formatCheckRun(cr protocol.CheckResult) string {
	command := ""
	if cr.Goal != nil && cr.Goal.Check != nil {
		command = cr.Goal.Check.Command
	}
	word := "failed"
	if cr.Passed {
		word = "passed"
	}
	out := fmt.Sprintf("Check %s: %s\n", word, commands.CheckRunSummary(cr.Run, command))
	if cr.Run.OutputTail != "" {
		out += "Output (its end):\n" + cr.Run.OutputTail
		if !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
	}
	return out
}

// approveCheck runs `agentd goal check --approve [COMMAND]`: it approves
// the goal's check on this machine (agentd.goal.approveCheck,
// docs/runtime.md §2.10.4) and says which command it approved and who set
// it. COMMAND is the exact text the person approves. Without it, the check
// the goal has now is shown with who set it, and approved only when the
// person answers yes on the terminal: a check changed in between (a
// teammate's set-check) is never approved unseen. Without a terminal to ask
// on, COMMAND is required.
func approveCheck(ctx context.Context, e *env, g *goal, command string) int {
	stdin, stdout, stderr := e.stdin, e.stdout, e.stderr
	if command == "" {
		res, ok := oneShotHere(ctx, e, g.target, "goal check --approve", protocol.CmdState, &protocol.NoArgs{}, nil)
		if !ok {
			return 1
		}
		cur := res.(protocol.State).Goal
		if cur == nil || cur.Check == nil {
			fmt.Fprint(stderr, "agentd goal check --approve: the goal has no check to approve\n")
			return 1
		}
		command = cur.Check.Command
		shown := fmt.Sprintf("Check: %s\n%s", commands.VisibleText(command), commands.FormatCheckConsent(cur.Check))
		f, ok := stdin.(*os.File)
		if !ok || !isTerminal(f) {
			fmt.Fprintf(stderr, "%sagentd goal check --approve: with no terminal to confirm on, give the exact command you approve: agentd goal check --approve %s\n", shown, setup.ShellQuote(commands.VisibleText(command)))
			return 2
		}
		fmt.Fprintf(stderr, "%sRun this command on this machine when the goal completes? [y/N] ", shown)
		answer, _ := bufio.NewReader(stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			fmt.Fprint(stderr, "agentd goal check --approve: nothing approved\n")
			return 1
		}
	}
	res, ok := oneShotHere(ctx, e, g.target, "goal check --approve", protocol.CmdGoalApproveCheck, &protocol.GoalApproveCheckArgs{Command: command}, nil)
	if !ok {
		return 1
	}
	st := res.(protocol.State)
	if g.jsonOut {
		printJSON(stdout, st.Goal)
		return 0
	}
	fmt.Fprintf(stdout, "Approved on this machine: %s\n%s", commands.VisibleText(command), commands.FormatCheckConsent(st.Goal.Check))
	return 0
}
