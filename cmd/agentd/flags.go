package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"
)

// globalFlags go with every command.
var globalFlags = []string{"state-dir", "log-file", "log-level"}

// commandOf is the command that the positional arguments pos name, as
// flagCommands spells it ("goal pause"); ok is false for a command line
// that is wrong anyway (an unknown subcommand or goal action, help), whose
// own error or usage wins.
func commandOf(pos []string) (cmd string, ok bool) {
	if len(pos) == 0 {
		return "serve", true
	}
	s, ok := lookup(pos[0])
	switch {
	case !ok:
		return "", false
	case s.actions == nil:
		return s.name, true
	case len(pos) > 1 && s.hasAction(pos[1]):
		return s.name + " " + pos[1], true
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
		name, _, isAction := strings.Cut(cmd, " ")
		if slices.Contains(takers, cmd) || isAction && slices.Contains(takers, name) {
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
