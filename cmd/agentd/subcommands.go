package main

import (
	"context"
	"io"
	"log/slog"
	"slices"

	"github.com/agentd/agentd/cmd/internal/cli"
)

// subcommand is one of agentd's subcommands, declared once (as gopls's
// internal/cmd declares its own): its name, the flags it takes besides the
// global ones, its actions with theirs, its usage and its run function.
// commandOf, usageOf, flagCommands and run read the table subcommands; a
// new subcommand is one more entry.
type subcommand struct {
	name string
	// flags are the flags it takes (for goal: every action takes them),
	// besides globalFlags.
	flags []string
	// actions are goal's and team's: the second word, each with the flags
	// only it takes.
	actions []action
	// usage is what `agentd NAME --help` prints; pos are the arguments
	// after the name. nil: agentd's usage.
	usage func(pos []string) string
	// visible: what it prints for a person may hold text from the store or
	// the repository, so its output goes through visibleWriter (stdout only
	// without --json: JSON escapes control characters itself).
	visible bool
	run     func(ctx context.Context, in invocation) int
}

// action is a subcommand's action ("goal create") and the flags only it
// takes.
type action struct {
	name  string
	flags []string
}

// invocation is what a subcommand runs with: the parsed flags, the state
// directory, the log, its arguments (after its name) and the process's
// streams.
type invocation struct {
	o              options
	stateDir       string
	log            *slog.Logger
	pos            []string
	stdin          io.Reader
	stdout, stderr io.Writer
}

// etcdFlags are this machine's etcd settings (docs/team.md), which every
// subcommand that opens a folder's state, or reaches the daemon that does,
// takes.
var etcdFlags = []string{"etcd-endpoints", "etcd-cacert", "etcd-cert", "etcd-key", "etcd-user"}

// with is flags followed by etcdFlags.
func with(flags ...string) []string { return append(flags, etcdFlags...) }

// subcommands are agentd's subcommands, in the order the refusal of a flag
// names those that take it. serve is agentd without one; it takes
// --workspace without using it (the LSP client names the folders): a
// command line that starts agentd for one folder may carry it.
var subcommands = []subcommand{
	{name: "serve", flags: with("workspace", "remote", "stdio", "listen", "listen.timeout"),
		run: func(ctx context.Context, in invocation) int {
			return runServe(ctx, in.o, in.stateDir, in.log, in.pos, in.stdin, in.stdout, in.stderr)
		}},
	{name: "tool", flags: with("workspace", "session", "json", "remote"), usage: fixed(toolUsage), visible: true,
		run: func(ctx context.Context, in invocation) int {
			return runTool(ctx, in.o, in.stateDir, in.log, in.pos, in.stdout, in.stderr)
		}},
	{name: "state", flags: with("workspace", "session", "json", "remote"), usage: fixed(stateUsage), visible: true,
		run: func(ctx context.Context, in invocation) int {
			return runState(ctx, in.o, in.stateDir, in.log, in.pos, in.stdout, in.stderr)
		}},
	{name: "goal", flags: with("workspace", "session", "json", "remote"), actions: goalActions, usage: goalUsageOf, visible: true,
		run: func(ctx context.Context, in invocation) int {
			return runGoal(ctx, in.o, in.stateDir, in.log, in.pos, in.stdin, in.stdout, in.stderr)
		}},
	{name: "undo", flags: with("workspace", "session", "json", "remote", "scope"), usage: fixed(undoUsage), visible: true,
		run: func(ctx context.Context, in invocation) int {
			return runUndo(ctx, in.o, in.stateDir, in.log, in.pos, in.stdout, in.stderr)
		}},
	{name: "history", flags: with("workspace", "session", "json", "remote", "limit", "before"), usage: fixed(historyUsage), visible: true,
		run: func(ctx context.Context, in invocation) int {
			return runHistory(ctx, in.o, in.stateDir, in.log, in.pos, in.stdout, in.stderr)
		}},
	{name: "simulate", flags: with("workspace", "session", "script", "verbose"), usage: fixed(simulateUsage), visible: true,
		run: func(ctx context.Context, in invocation) int {
			return runSimulate(ctx, in.o, in.stateDir, in.log, in.pos, in.stdout, in.stderr)
		}},
	{name: "mcp", flags: with("workspace", "session", "remote"), usage: fixed(mcpUsage),
		run: func(ctx context.Context, in invocation) int {
			return runMCP(ctx, in.o, in.stateDir, in.log, in.pos, in.stdin, in.stdout, in.stderr)
		}},
	{name: "hook", flags: with("workspace", "session", "remote"), usage: fixed(cli.HookUsage("agentd hook")),
		run: func(ctx context.Context, in invocation) int {
			return runHook(ctx, in.o, in.stateDir, in.log, in.pos, in.stdin, in.stdout, in.stderr)
		}},
	{name: "setup", flags: []string{"workspace", "user", "print", "remove"}, usage: fixed(setupUsage), visible: true,
		run: func(ctx context.Context, in invocation) int {
			return runSetup(in.o, in.stateDir, in.pos, in.stdout, in.stderr)
		}},
	{name: "team", actions: teamActions, usage: fixed(teamUsage), visible: true,
		run: func(ctx context.Context, in invocation) int {
			return runTeam(ctx, in.o, in.stateDir, in.log, in.pos, in.stdout, in.stderr)
		}},
	{name: "version", flags: []string{"version"}},
}

// goalActions are the actions of `agentd goal`, each a command of its own
// for flagCommands ("goal create").
var goalActions = []action{
	{"create", []string{"criterion", "check", "replace", "task-file"}},
	{"pause", []string{"reason"}},
	{"resume", nil},
	{"cancel", nil},
	{"budget", nil},
	{"status", []string{"exit-code"}},
	{"queue", []string{"criterion", "check"}},
	{"set-check", []string{"clear"}},
	{"check", []string{"approve"}},
}

// teamActions are the actions of `agentd team` (docs/team.md).
var teamActions = []action{
	{"init", with("workspace", "etcd")},
	{"accept", with("workspace", "json", "remote")},
	{"status", with("workspace", "json")},
}

// fixed is a usage that does not depend on the arguments.
func fixed(usage string) func([]string) string { return func([]string) string { return usage } }

// goalUsageOf is goal's usage, the queue's for `agentd goal queue`.
func goalUsageOf(pos []string) string {
	if len(pos) > 0 && pos[0] == "queue" {
		return queueUsage
	}
	return goalUsage
}

// lookup is the subcommand named name.
func lookup(name string) (subcommand, bool) {
	i := slices.IndexFunc(subcommands, func(s subcommand) bool { return s.name == name })
	if i < 0 {
		return subcommand{}, false
	}
	return subcommands[i], true
}

// hasAction says whether s has the action named name.
func (s subcommand) hasAction(name string) bool {
	return slices.ContainsFunc(s.actions, func(a action) bool { return a.name == name })
}

// flagCommands names, for every flag but the global ones, the commands
// that take it, from the table: a subcommand, "goal ACTION", or "goal" for
// every goal action. A flag given to any other command is refused
// (checkFlags).
var flagCommands = takers()

func takers() map[string][]string {
	m := map[string][]string{}
	add := func(cmd string, flags []string) {
		for _, f := range flags {
			if !slices.Contains(m[f], cmd) {
				m[f] = append(m[f], cmd)
			}
		}
	}
	for _, s := range subcommands {
		add(s.name, s.flags)
		for _, a := range s.actions {
			add(s.name+" "+a.name, a.flags)
		}
	}
	return m
}
