package main

import (
	"bufio"
	"context"
	"fmt"
	"github.com/agentd/agentd/commands/protocol"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agentd/agentd/commands"
	"github.com/agentd/agentd/setup"
)

var goalUsage = `usage:
  agentd goal create OBJECTIVE [--criterion TEXT] [--replace] [--task-file PATH] [--check COMMAND]
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
  agentd goal resume
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

// runGoal runs `agentd goal ...`: the user's goal controls from a shell.
// With --exit-code every failure exits exitFailure instead of 1 or 2.
func runGoal(ctx context.Context, o options, stateDir string, log *slog.Logger, pos []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fail := func(code int) int {
		if o.exitCode {
			return exitFailure
		}
		return code
	}
	if len(pos) == 0 {
		fmt.Fprint(stderr, goalUsage)
		return fail(2)
	}
	verb, rest := pos[0], pos[1:]
	switch {
	case verb == "help":
		fmt.Fprint(stdout, goalUsage)
		return 0
	case verb == "queue":
		return runGoalQueue(ctx, o, stateDir, log, rest, stdout, stderr, fail)
	case verb == "check" && o.approve:
		return approveCheck(ctx, o, stateDir, log, strings.Join(rest, " "), stdin, stdout, stderr, fail)
	}
	id, args, ok := goalRequest(o, verb, rest, stderr)
	if !ok {
		return fail(2)
	}
	var withFolder func(folder string) error
	if verb == "create" && o.taskFile != "" {
		withFolder = func(folder string) (err error) {
			create := args.(*protocol.GoalCreateArgs)
			create.TaskFile, err = taskFileArg(folder, o.taskFile)
			return err
		}
	}
	res, ok := oneShotHere(ctx, o, stateDir, log, stderr, "goal "+verb, id, args, withFolder)
	if !ok {
		return fail(1)
	}
	return printGoalResult(o, verb, res, stdout, stderr)
}

// goalRequest is the command and arguments of `agentd goal VERB REST...`
// (every action but help, queue and check --approve); false, its error
// said on stderr, for a command line that is wrong.
func goalRequest(o options, verb string, rest []string, stderr io.Writer) (id protocol.CommandID, args protocol.Args, ok bool) {
	switch verb {
	case "create":
		if len(rest) == 0 {
			fmt.Fprint(stderr, "agentd goal create: say what the goal is: agentd goal create \"OBJECTIVE\"\n")
			return "", nil, false
		}
		a := &protocol.GoalCreateArgs{Objective: strings.Join(rest, " "), CompletionCriterion: o.criterion, Replace: o.replace}
		if o.check.set {
			a.Check = o.check.value
		}
		return protocol.CmdGoalCreate, a, true
	case "set-check":
		a := &protocol.GoalSetCheckArgs{}
		switch {
		case o.clear && len(rest) == 0:
		case !o.clear && len(rest) > 0:
			command := strings.Join(rest, " ")
			a.Command = &command
		default:
			fmt.Fprint(stderr, "agentd goal set-check: give the command, or --clear to remove the check: agentd goal set-check \"go test ./...\"\n")
			return "", nil, false
		}
		return protocol.CmdGoalSetCheck, a, true
	case "check", "pause", "resume", "cancel", "status":
		if len(rest) != 0 {
			fmt.Fprint(stderr, goalUsage)
			return "", nil, false
		}
		switch verb {
		case "check":
			return protocol.CmdGoalRunCheck, &protocol.NoArgs{}, true
		case "status":
			return protocol.CmdState, &protocol.NoArgs{}, true
		case "pause":
			return protocol.CmdGoalPause, &protocol.GoalPauseArgs{Reason: o.reason}, true
		case "resume":
			return protocol.CmdGoalResume, &protocol.NoArgs{}, true
		}
		return protocol.CmdGoalCancel, &protocol.NoArgs{}, true
	case "budget":
		if len(rest) == 0 {
			fmt.Fprint(stderr, goalUsage)
			return "", nil, false
		}
		args, err := commands.BudgetArgs(strings.Join(rest, " "))
		if err != nil {
			fmt.Fprintf(stderr, "agentd goal budget: %v\n", err)
			return "", nil, false
		}
		return protocol.CmdGoalSetBudget, &args, true
	}
	fmt.Fprintf(stderr, "agentd goal: unknown action %q\n%s", verb, goalUsage)
	return "", nil, false
}

// printGoalResult prints what `agentd goal VERB` answered, res, and
// returns the exit code: a check's run (exitCheckFailed when it did not
// pass), the goals a cancel ended, else the goal (with --exit-code, status
// exits its status's code).
func printGoalResult(o options, verb string, res any, stdout, stderr io.Writer) int {
	switch r := res.(type) {
	case commands.CheckResult:
		if o.jsonOut {
			printJSON(stdout, r.Run)
		} else {
			fmt.Fprint(stdout, formatCheckRun(r))
		}
		if !r.Passed {
			return exitCheckFailed
		}
		return 0
	case commands.CancelResult:
		if o.jsonOut {
			printJSON(stdout, r.Cancelled)
		} else {
			fmt.Fprint(stdout, formatCancelled(r))
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
	if st.Stale {
		fmt.Fprint(stderr, staleNote)
	}
	if st.TeamFile != nil {
		fmt.Fprintln(stderr, st.TeamFile.Line())
	}
	if verb == "status" && o.exitCode {
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
func formatCancelled(cr commands.CancelResult) string {
	g := cr.Cancelled
	if g == nil {
		return "No goal.\n"
	}
	return fmt.Sprintf("Cancelled the goal: %s\n  It was %s; used %s.\n", g.Objective, g.Status, commands.FormatProgress(g))
}

// formatCheckRun is what `agentd goal check` says: the run's summary and
// its output tail.
func formatCheckRun(cr commands.CheckResult) string {
	command := ""
	if cr.Goal != nil && cr.Goal.Check != nil {
		command = cr.Goal.Check.Command
	}
	word := "failed"
	if cr.Passed {
		word = "passed"
	}
	out := fmt.Sprintf("Check %s: %s\n", word, cr.Run.Summary(command))
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
func approveCheck(ctx context.Context, o options, stateDir string, log *slog.Logger, command string, stdin io.Reader, stdout, stderr io.Writer, fail func(int) int) int {
	if command == "" {
		res, ok := oneShotHere(ctx, o, stateDir, log, stderr, "goal check --approve", protocol.CmdState, &protocol.NoArgs{}, nil)
		if !ok {
			return fail(1)
		}
		g := res.(commands.State).Goal
		if g == nil || g.Check == nil {
			fmt.Fprint(stderr, "agentd goal check --approve: the goal has no check to approve\n")
			return fail(1)
		}
		command = g.Check.Command
		shown := fmt.Sprintf("Check: %s\n%s", commands.VisibleText(command), commands.FormatCheckConsent(g.Check))
		f, ok := stdin.(*os.File)
		if !ok || !isTerminal(f) {
			fmt.Fprintf(stderr, "%sagentd goal check --approve: with no terminal to confirm on, give the exact command you approve: agentd goal check --approve %s\n", shown, setup.ShellQuote(commands.VisibleText(command)))
			return fail(2)
		}
		fmt.Fprintf(stderr, "%sRun this command on this machine when the goal completes? [y/N] ", shown)
		answer, _ := bufio.NewReader(stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			fmt.Fprint(stderr, "agentd goal check --approve: nothing approved\n")
			return fail(1)
		}
	}
	res, ok := oneShotHere(ctx, o, stateDir, log, stderr, "goal check --approve", protocol.CmdGoalApproveCheck, &protocol.GoalApproveCheckArgs{Command: command}, nil)
	if !ok {
		return fail(1)
	}
	st := res.(commands.State)
	if o.jsonOut {
		printJSON(stdout, st.Goal)
		return 0
	}
	fmt.Fprintf(stdout, "Approved on this machine: %s\n%s", commands.VisibleText(command), commands.FormatCheckConsent(st.Goal.Check))
	return 0
}
