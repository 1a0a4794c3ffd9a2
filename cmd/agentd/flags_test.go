package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentd/agentd/cmd/internal/cli"
)

// TestParseInterspersed: flags before and after the arguments; "--" ends
// the flags; text that starts with "-" but holds a space, and numbers, are
// arguments; --help returns the arguments before it; an unknown flag is
// refused suggesting "--" (docs/protocol.md §1.2.2).
func TestParseInterspersed(t *testing.T) {
	for _, tt := range []struct {
		args    []string
		pos     []string
		replace bool
		reason  string
		err     string // part of the error; "" for none
	}{
		{args: []string{"goal", "create", "x", "--replace"}, pos: []string{"goal", "create", "x"}, replace: true},
		{args: []string{"goal", "create", "--", "-v", "--replace"}, pos: []string{"goal", "create", "-v", "--replace"}},
		{args: []string{"--replace", "goal", "create", "--", "--x"}, pos: []string{"goal", "create", "--x"}, replace: true},
		{args: []string{"goal", "create", "-v flag support"}, pos: []string{"goal", "create", "-v flag support"}},
		{args: []string{"goal", "create", "--no\tflag"}, pos: []string{"goal", "create", "--no\tflag"}},
		{args: []string{"goal", "pause", "--reason=a long lunch"}, pos: []string{"goal", "pause"}, reason: "a long lunch"},
		{args: []string{"goal", "budget", "-3", "turns"}, pos: []string{"goal", "budget", "-3", "turns"}},
		{args: []string{"goal", "create", "-v"}, err: "unknown flag -v (see agentd --help; to pass text that starts with -, put it after --)"},
		{args: []string{"goal", "create", "--help", "x"}, pos: []string{"goal", "create"}, err: "help requested"},
		{args: []string{"goal", "pause", "--reason"}, err: "flag --reason needs a value"},
	} {
		var o options
		fs := newFlagSet(&o, io.Discard)
		pos, err := cli.ParseInterspersed(fs, tt.args)
		switch {
		case tt.err == "" && err != nil, tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("cli.ParseInterspersed(%q): error %v, want %q", tt.args, err, tt.err)
		case tt.err == "help requested" && !errors.Is(err, flag.ErrHelp):
			t.Errorf("cli.ParseInterspersed(%q): error %v, want flag.ErrHelp", tt.args, err)
		case !slices.Equal(pos, tt.pos) || o.replace != tt.replace || o.reason != tt.reason:
			t.Errorf("cli.ParseInterspersed(%q) = %q, replace %v, reason %q; want %q, %v, %q", tt.args, pos, o.replace, o.reason, tt.pos, tt.replace, tt.reason)
		}
	}
}

// TestFlagsOfCommands: a flag is taken by the commands flagCommands names
// (goal: every action) and by no other; the refusal names the commands that
// take it, exits 2 (4 with --exit-code on the line) and runs nothing.
func TestFlagsOfCommands(t *testing.T) {
	for _, tt := range []struct {
		args []string
		err  string // the whole message; "" when the command line is fine
		code int
	}{
		{args: []string{"state", "--json", "--workspace", "w", "--session", "s", "--remote", "auto"}},
		{args: []string{"goal", "create", "x", "--criterion", "c", "--replace", "--task-file", "t", "--json"}},
		{args: []string{"goal", "pause", "--reason", "r", "--session", "s"}},
		{args: []string{"goal", "status", "--exit-code", "--json"}},
		{args: []string{"undo", "--scope", "goal", "--json", "--workspace", "w", "--session", "s", "--remote", "auto"}},
		{args: []string{"state", "--scope", "todo"}, code: 2,
			err: "agentd: --scope is a flag of: undo; agentd state does not take it (see agentd state --help)\n"},
		{args: []string{"--remote=auto"}},
		{args: []string{"serve", "--listen=unix:x", "--listen.timeout=0"}},
		{args: []string{"simulate", "--script", "complete", "--verbose", "--workspace", "w"}},
		{args: []string{"setup", "claude", "--user", "--print", "--remove"}},
		{args: []string{"hook", "claude", "--workspace", "w", "--session", "s", "--remote=auto"}},
		{args: []string{"version", "--version", "--state-dir", "d", "--log-level", "debug", "--log-file", "f"}},
		{args: []string{"state", "--criterion", "x"}, code: 2,
			err: "agentd: --criterion is a flag of: goal create, goal queue; agentd state does not take it (see agentd state --help)\n"},
		{args: []string{"goal", "pause", "--criterion", "x"}, code: 2,
			err: "agentd: --criterion is a flag of: goal create, goal queue; agentd goal pause does not take it (see agentd goal --help)\n"},
		{args: []string{"goal", "create", "x", "--exit-code"}, code: exitFailure,
			err: "agentd: --exit-code is a flag of: goal status; agentd goal create does not take it (see agentd goal --help)\n"},
		{args: []string{"--workspace", "w", "--stdio"}},
		{args: []string{"version", "--workspace", "w"}, code: 2,
			err: "agentd: --workspace is a flag of: serve, tool, state, goal, undo, history, simulate, mcp, hook, setup, team init, team accept, team status; agentd version does not take it (see agentd version --help)\n"},
		{args: []string{"--stdio", "--session", "s"}, code: 2,
			err: "agentd: --session is a flag of: tool, state, goal, undo, history, simulate, mcp, hook; agentd serve does not take it (see agentd serve --help)\n"},
		{args: []string{"mcp", "--json"}, code: 2,
			err: "agentd: --json is a flag of: tool, state, goal, undo, history, team accept, team status; agentd mcp does not take it (see agentd mcp --help)\n"},
		{args: []string{"version", "--etcd-user", "bob"}, code: 2,
			err: "agentd: --etcd-user is a flag of: serve, tool, state, goal, undo, history, simulate, mcp, hook, team init, team accept, team status; agentd version does not take it (see agentd version --help)\n"},
		{args: []string{"setup", "claude", "--print", "--etcd-endpoints", "http://x"}, code: 2,
			err: "agentd: --etcd-endpoints is a flag of: serve, tool, state, goal, undo, history, simulate, mcp, hook, team init, team accept, team status; agentd setup does not take it (see agentd setup --help)\n"},
		{args: []string{"goal", "status", "--etcd-cacert", "ca", "--etcd-cert", "c", "--etcd-key", "k", "--etcd-user", "u", "--etcd-endpoints", "e"}},
		{args: []string{"state", "--version"}, code: 2,
			err: "agentd: --version is a flag of: agentd alone (agentd --version is agentd version); agentd state does not take it (see agentd state --help)\n"},
	} {
		var o options
		set := newFlagSet(&o, io.Discard)
		pos, err := cli.ParseInterspersed(set, tt.args)
		if err != nil {
			t.Fatalf("cli.ParseInterspersed(%q): %v", tt.args, err)
		}
		cmd, ok := commandOf(pos)
		if !ok {
			t.Fatalf("commandOf(%q): not a command", pos)
		}
		if err := checkFlags(set, cmd); tt.err == "" && err != nil {
			t.Errorf("agentd %q: %v, want it accepted", tt.args, err)
		}
		if tt.err == "" {
			continue
		}
		// The refusal comes from run, before anything opens: the state
		// directory given does not exist and is not created.
		stateDir := filepath.Join(t.TempDir(), "state")
		var stdout, stderr strings.Builder
		code := run(context.Background(), append(tt.args, "--state-dir", stateDir), strings.NewReader(""), &stdout, &stderr)
		if code != tt.code || stderr.String() != tt.err || stdout.Len() != 0 {
			t.Errorf("agentd %q: exit %d, stderr %q, stdout %q; want exit %d, stderr %q", tt.args, code, stderr.String(), stdout.String(), tt.code, tt.err)
		}
		if _, err := os.Stat(stateDir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("agentd %q: the state directory exists after the refusal (%v)", tt.args, err)
		}
	}
}

// TestEveryFlagHasCommands: each flag of newFlagSet is global or names the
// commands that take it, and each of those is a command.
func TestEveryFlagHasCommands(t *testing.T) {
	var o options
	newFlagSet(&o, io.Discard).VisitAll(func(f *flag.Flag) {
		if slices.Contains(globalFlags, f.Name) {
			return
		}
		takers, ok := flagCommands[f.Name]
		if !ok || len(takers) == 0 {
			t.Errorf("flag --%s is neither global nor in flagCommands", f.Name)
		}
		for _, c := range takers {
			if _, ok := commandOf(strings.Fields(c)); !ok && c != "goal" {
				t.Errorf("flagCommands[%q] names %q, which is not a command", f.Name, c)
			}
		}
	})
	for name := range flagCommands {
		if newFlagSet(&o, io.Discard).Lookup(name) == nil {
			t.Errorf("flagCommands names --%s, which newFlagSet does not define", name)
		}
	}
}

// TestVersionAndGoalHelp: agentd --version prints what agentd version
// does; agentd goal --help prints the goal usage on stdout; both exit 0.
func TestVersionAndGoalHelp(t *testing.T) {
	for args, want := range map[string]string{
		"--version":         "agentd " + agentdVersion() + "\n",
		"version":           "agentd " + agentdVersion() + "\n",
		"goal --help":       goalUsage,
		"goal pause --help": goalUsage,
		"help goal":         goalUsage,
		"goal queue --help": queueUsage,
		"goal queue mv -h":  queueUsage,
		"state --help":      stateUsage,
		"history --help":    historyUsage,
		"--help":            usage,
	} {
		var stdout, stderr strings.Builder
		code := run(context.Background(), strings.Fields(args), strings.NewReader(""), &stdout, &stderr)
		if code != 0 || stdout.String() != want || stderr.Len() != 0 {
			t.Errorf("agentd %s: exit %d, stdout %q, stderr %q; want exit 0 and %q", args, code, stdout.String(), stderr.String(), want)
		}
	}
}

// TestHookFlagsAsAgentd: agentd-hook's flags (cli.HookFlags) are exactly
// those `agentd hook` takes, the global ones and those flagCommands gives
// hook, with agentd's defaults.
func TestHookFlagsAsAgentd(t *testing.T) {
	var o options
	agentd := newFlagSet(&o, io.Discard)
	var f cli.HookFlags
	lean := f.FlagSet("agentd-hook", io.Discard)
	var want, got []string
	agentd.VisitAll(func(fl *flag.Flag) {
		if slices.Contains(globalFlags, fl.Name) || slices.Contains(flagCommands[fl.Name], "hook") {
			want = append(want, fl.Name)
		}
	})
	lean.VisitAll(func(fl *flag.Flag) {
		got = append(got, fl.Name)
		if a := agentd.Lookup(fl.Name); a != nil && a.DefValue != fl.DefValue {
			t.Errorf("--%s defaults to %q in agentd-hook, %q in agentd", fl.Name, fl.DefValue, a.DefValue)
		}
	})
	if !slices.Equal(got, want) {
		t.Errorf("agentd-hook's flags %v, want those of agentd hook %v", got, want)
	}
}
