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
// refused suggesting "--" (docs/protocol.md §1.2.2); a bad value is named
// with its flag and the kind of value it takes.
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
		{args: []string{"goal", "create", "x", "--bogus=1"}, err: "unknown flag --bogus (see agentd --help;"},
		{args: []string{"history", "--limit", "x"}, err: `--limit "x" is not a whole number (see agentd --help)`},
		{args: []string{"history", "--before=-2"}, err: `--before "-2" is not a whole number, 0 or more (see agentd --help)`},
		{args: []string{"goal", "create", "x", "--require-todos=maybe"}, err: `--require-todos "maybe" is not true or false (see agentd --help)`},
		{args: []string{"serve", "--listen.timeout", "soon"}, err: `--listen.timeout "soon" is not a duration (90s, 30m, 1h30m) (see agentd --help)`},
	} {
		a := newApp()
		fs := a.allFlags(io.Discard)
		c, _ := a.lookup("goal")
		g := c.(*goal)
		pos, err := cli.ParseInterspersed(fs, tt.args)
		switch {
		case tt.err == "" && err != nil, tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("cli.ParseInterspersed(%q): error %v, want %q", tt.args, err, tt.err)
		case tt.err == "help requested" && !errors.Is(err, flag.ErrHelp):
			t.Errorf("cli.ParseInterspersed(%q): error %v, want flag.ErrHelp", tt.args, err)
		case !slices.Equal(pos, tt.pos) || g.create.replace != tt.replace || g.pause.reason != tt.reason:
			t.Errorf("cli.ParseInterspersed(%q) = %q, replace %v, reason %q; want %q, %v, %q", tt.args, pos, g.create.replace, g.pause.reason, tt.pos, tt.replace, tt.reason)
		}
	}
}

// TestFlagsOfCommands: a flag is taken by the commands that declare it
// (goal: every action when goal declares it) and by no other; the refusal names the commands that
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
			err: "agentd: --workspace is a flag of: serve, tool, state, todo, goal, undo, history, watch, simulate, mcp, hook, setup, team init, team accept, team status, run; agentd version does not take it (see agentd version --help)\n"},
		{args: []string{"--stdio", "--session", "s"}, code: 2,
			err: "agentd: --session is a flag of: tool, state, todo, goal, undo, history, watch, simulate, mcp, hook; agentd serve does not take it (see agentd serve --help)\n"},
		{args: []string{"watch", "--once", "--workspace", "w", "--session", "s", "--remote", "auto"}},
		{args: []string{"watch", "--json"}, code: 2,
			err: "agentd: --json is a flag of: tool, state, todo, goal, undo, history, team accept, team status; agentd watch does not take it (see agentd watch --help)\n"},
		{args: []string{"state", "--once"}, code: 2,
			err: "agentd: --once is a flag of: watch; agentd state does not take it (see agentd state --help)\n"},
		{args: []string{"mcp", "--json"}, code: 2,
			err: "agentd: --json is a flag of: tool, state, todo, goal, undo, history, team accept, team status; agentd mcp does not take it (see agentd mcp --help)\n"},
		{args: []string{"version", "--etcd-user", "bob"}, code: 2,
			err: "agentd: --etcd-user is a flag of: serve, tool, state, todo, goal, undo, history, watch, simulate, mcp, hook, team init, team accept, team status, run; agentd version does not take it (see agentd version --help)\n"},
		{args: []string{"setup", "claude", "--print", "--etcd-endpoints", "http://x"}, code: 2,
			err: "agentd: --etcd-endpoints is a flag of: serve, tool, state, todo, goal, undo, history, watch, simulate, mcp, hook, team init, team accept, team status, run; agentd setup does not take it (see agentd setup --help)\n"},
		{args: []string{"goal", "status", "--etcd-cacert", "ca", "--etcd-cert", "c", "--etcd-key", "k", "--etcd-user", "u", "--etcd-endpoints", "e"}},
		{args: []string{"state", "--version"}, code: 2,
			err: "agentd: --version is a flag of: agentd alone (agentd --version is agentd version); agentd state does not take it (see agentd state --help)\n"},
	} {
		if tt.err == "" {
			var stderr strings.Builder
			if _, _, code, done := newApp().parse(tt.args, io.Discard, &stderr); done && code != 0 || stderr.Len() != 0 {
				t.Errorf("agentd %q: exit %d, %s; want it accepted", tt.args, code, stderr.String())
			}
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

// TestEveryFlagHasCommands: each flag of agentd is global or names the
// commands that take it, and each of those is a command or a command's
// action.
func TestEveryFlagHasCommands(t *testing.T) {
	a := newApp()
	global := flagsOf(a.globals.SetFlags)
	takers := a.takers()
	a.allFlags(io.Discard).VisitAll(func(f *flag.Flag) {
		if global.Lookup(f.Name) != nil {
			return
		}
		if len(takers[f.Name]) == 0 {
			t.Errorf("flag --%s is neither global nor taken by a command", f.Name)
		}
		for _, name := range takers[f.Name] {
			words := strings.Fields(name)
			c, ok := a.lookup(words[0])
			p, hasActions := c.(withActions)
			if !ok || len(words) == 2 && (!hasActions || actionNamed(p, words[1:]) == nil) {
				t.Errorf("--%s is taken by %q, which is not a command", f.Name, name)
			}
		}
	})
}

// TestSharedFlagsAlike: a flag that several commands or actions declare is
// of one kind, with one default, wherever it is declared (agentd reads a
// command line with all of them before it knows the subcommand), and no
// command declares a global flag.
func TestSharedFlagsAlike(t *testing.T) {
	a := newApp()
	global := flagsOf(a.globals.SetFlags)
	seen := map[string]*flag.Flag{}
	check := func(owner string, fs *flag.FlagSet) {
		fs.VisitAll(func(f *flag.Flag) {
			if global.Lookup(f.Name) != nil {
				t.Errorf("%s declares the global flag --%s", owner, f.Name)
			}
			first, ok := seen[f.Name]
			if !ok {
				seen[f.Name] = f
				return
			}
			if first.DefValue != f.DefValue || isBool(first) != isBool(f) {
				t.Errorf("--%s of %s: default %q, bool %v; elsewhere %q, %v", f.Name, owner, f.DefValue, isBool(f), first.DefValue, isBool(first))
			}
		})
	}
	for _, c := range a.commands {
		check(c.Name(), flagsOf(c.SetFlags))
		if p, ok := c.(withActions); ok {
			for _, act := range p.Actions() {
				check(c.Name()+" "+act.Name(), flagsOf(act.SetFlags))
			}
		}
	}
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// TestOverviewNamesEveryCommand: agentd --help has each subcommand's
// entry, which names it.
func TestOverviewNamesEveryCommand(t *testing.T) {
	a := newApp()
	for _, c := range a.commands {
		h := c.ShortHelp()
		if !strings.Contains(h, "agentd "+c.Name()) && c.Name() != "serve" || !strings.Contains(a.overview(), h) {
			t.Errorf("the overview's entry of %s is %q", c.Name(), h)
		}
	}
}

// TestEverySubcommandHasUsage: agentd SUB --help prints SUB's own usage,
// which names it, not the overview.
func TestEverySubcommandHasUsage(t *testing.T) {
	a := newApp()
	for _, c := range a.commands {
		var stdout, stderr strings.Builder
		code := run(context.Background(), []string{c.Name(), "--help"}, strings.NewReader(""), &stdout, &stderr)
		if code != 0 || stdout.String() != c.Usage(nil) || stdout.String() == a.overview() || !strings.Contains(stdout.String(), "agentd "+c.Name()) && c.Name() != "serve" {
			t.Errorf("agentd %s --help: exit %d, stdout %q, stderr %q; want its own usage", c.Name(), code, stdout.String(), stderr.String())
		}
	}
}

// TestEveryForeignFlagRefused: every command and action refuses every flag
// of agentd it does not declare, naming the flag and itself, before
// anything runs; and takes every flag it declares.
func TestEveryForeignFlagRefused(t *testing.T) {
	a := newApp()
	all := a.allFlags(io.Discard)
	try := func(line []string) {
		own, cmd := newApp().flagSet(mustLookup(t, line[0]), line[1:], io.Discard)
		all.VisitAll(func(f *flag.Flag) {
			args := append(slices.Clone(line), "--"+f.Name+"="+f.DefValue)
			var stderr strings.Builder
			_, _, code, done := newApp().parse(args, io.Discard, &stderr)
			if own.Lookup(f.Name) != nil {
				if done && code != 0 || stderr.Len() != 0 {
					t.Errorf("agentd %q: exit %d, %s; want it taken", args, code, stderr.String())
				}
				return
			}
			want := "agentd: --" + f.Name + " is a flag of: "
			if !done || code != failBeforeRun(args, 2) || !strings.HasPrefix(stderr.String(), want) || !strings.Contains(stderr.String(), "; agentd "+cmd+" does not take it") {
				t.Errorf("agentd %q: done %v, exit %d, stderr %q; want it refused", args, done, code, stderr.String())
			}
		})
	}
	for _, c := range a.commands {
		try([]string{c.Name()})
		if p, ok := c.(withActions); ok {
			for _, act := range p.Actions() {
				try([]string{c.Name(), act.Name()})
			}
		}
	}
}

func mustLookup(t *testing.T, name string) command {
	c, ok := newApp().lookup(name)
	if !ok {
		t.Fatalf("no command %s", name)
	}
	return c
}

// TestActionlessRefusal: a flag given to goal or team without an action,
// which none of their actions takes, is refused naming the command
// (before: goal's usage, the flag ignored).
func TestActionlessRefusal(t *testing.T) {
	for args, want := range map[string]string{
		"goal --scope todo": "agentd: --scope is a flag of: undo; agentd goal does not take it (see agentd goal --help)\n",
		"team --limit 3":    "agentd: --limit is a flag of: history; agentd team does not take it (see agentd team --help)\n",
	} {
		var stdout, stderr strings.Builder
		code := run(context.Background(), strings.Fields(args), strings.NewReader(""), &stdout, &stderr)
		if code != 2 || stderr.String() != want || stdout.Len() != 0 {
			t.Errorf("agentd %s: exit %d, stderr %q; want exit 2, %q", args, code, stderr.String(), want)
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
		"--help":            newApp().overview(),
	} {
		var stdout, stderr strings.Builder
		code := run(context.Background(), strings.Fields(args), strings.NewReader(""), &stdout, &stderr)
		if code != 0 || stdout.String() != want || stderr.Len() != 0 {
			t.Errorf("agentd %s: exit %d, stdout %q, stderr %q; want exit 0 and %q", args, code, stdout.String(), stderr.String(), want)
		}
	}
}

// TestHookFlagsAsAgentd: agentd-hook's flags (cli.HookFlags) are exactly
// those `agentd hook` takes, the global ones and hook's, with agentd's
// defaults.
func TestHookFlagsAsAgentd(t *testing.T) {
	a := newApp()
	c, _ := a.lookup("hook")
	agentd, _ := a.flagSet(c, nil, io.Discard)
	var f cli.HookFlags
	lean := f.FlagSet("agentd-hook", io.Discard)
	var want, got []string
	takers := a.takers()
	agentd.VisitAll(func(fl *flag.Flag) {
		if flagsOf(a.globals.SetFlags).Lookup(fl.Name) != nil || slices.Contains(takers[fl.Name], "hook") {
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
