package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"
)

// globalFlags go with every command.
var globalFlags = []string{"state-dir", "log-file", "log-level"}

// storeCommands are the commands that open a folder's state, or reach the
// daemon that does, and so take this machine's etcd settings (docs/team.md):
// all but setup and version.
var storeCommands = []string{"serve", "tool", "state", "goal", "undo", "history", "simulate", "mcp", "hook", "team init", "team accept", "team status"}

// teamActions are the actions of `agentd team` (docs/team.md).
var teamActions = []string{"init", "accept", "status"}

// goalActions are the actions of `agentd goal`; "goal ACTION" is a command
// of flagCommands.
var goalActions = []string{"create", "pause", "resume", "cancel", "budget", "status", "queue", "set-check", "check"}

// flagCommands names, for every flag but the global ones, the commands
// that take it: a subcommand ("serve" is agentd without one), "goal
// ACTION", or "goal" for every goal action. A flag given to any other
// command is refused (checkFlags); the usages list the same flags. serve
// takes --workspace without using it (the LSP client names the folders):
// a command line that starts agentd for one folder may carry it.
var flagCommands = map[string][]string{
	"workspace":      {"serve", "tool", "state", "goal", "undo", "history", "simulate", "mcp", "hook", "setup", "team init", "team accept", "team status"},
	"session":        {"tool", "state", "goal", "undo", "history", "simulate", "mcp", "hook"},
	"json":           {"tool", "state", "goal", "undo", "history", "team accept", "team status"},
	"remote":         {"serve", "tool", "state", "goal", "undo", "history", "mcp", "hook", "team accept"},
	"stdio":          {"serve"},
	"listen":         {"serve"},
	"listen.timeout": {"serve"},
	"criterion":      {"goal create", "goal queue"},
	"check":          {"goal create", "goal queue"},
	"replace":        {"goal create"},
	"task-file":      {"goal create"},
	"clear":          {"goal set-check"},
	"approve":        {"goal check"},
	"reason":         {"goal pause"},
	"exit-code":      {"goal status"},
	"scope":          {"undo"},
	"limit":          {"history"},
	"before":         {"history"},
	"script":         {"simulate"},
	"verbose":        {"simulate"},
	"user":           {"setup"},
	"print":          {"setup"},
	"remove":         {"setup"},
	"version":        {"version"},
	"etcd":           {"team init"},
	"etcd-endpoints": storeCommands,
	"etcd-cacert":    storeCommands,
	"etcd-cert":      storeCommands,
	"etcd-key":       storeCommands,
	"etcd-user":      storeCommands,
}

// commandOf is the command that the positional arguments pos name, as
// flagCommands spells it ("goal pause"); ok is false for a command line
// that is wrong anyway (an unknown subcommand or goal action, help), whose
// own error or usage wins.
func commandOf(pos []string) (cmd string, ok bool) {
	if len(pos) == 0 {
		return "serve", true
	}
	switch pos[0] {
	case "serve", "tool", "state", "undo", "history", "simulate", "mcp", "hook", "setup", "version":
		return pos[0], true
	case "goal":
		if len(pos) > 1 && slices.Contains(goalActions, pos[1]) {
			return "goal " + pos[1], true
		}
	case "team":
		if len(pos) > 1 && slices.Contains(teamActions, pos[1]) {
			return "team " + pos[1], true
		}
	}
	return "", false
}

// checkFlags refuses a flag set in fs that cmd does not take, naming the
// commands that take it (goal spelt out as its actions when only some take
// it). Flags are checked in fs.Visit's order, lexical.
func checkFlags(fs *flag.FlagSet, cmd string) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err != nil || slices.Contains(globalFlags, f.Name) {
			return
		}
		takers := flagCommands[f.Name]
		goalAction, isGoal := strings.CutPrefix(cmd, "goal ")
		if slices.Contains(takers, cmd) || isGoal && slices.Contains(goalActions, goalAction) && slices.Contains(takers, "goal") {
			return
		}
		names := strings.Join(takers, ", ")
		if f.Name == "version" {
			names = "agentd alone (agentd --version is agentd version)"
		}
		err = fmt.Errorf("--%s is a flag of: %s; agentd %s does not take it (see agentd %s --help)",
			f.Name, names, cmd, strings.Fields(cmd)[0])
	})
	return err
}
