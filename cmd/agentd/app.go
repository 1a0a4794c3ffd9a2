package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/agentd/agentd/cmd/internal/cli"
)

// command is one of agentd's subcommands, as gopls's internal/cmd has
// them: a type whose fields are its flags (declared by SetFlags), with its
// usage, its line in agentd's overview and its run function. app.commands
// lists them; a new subcommand is one more type there.
type command interface {
	action
	// Usage is what `agentd NAME --help` and `agentd help NAME` print;
	// args are the arguments after the name.
	Usage(args []string) string
	// ShortHelp is its entry in agentd's overview (overview).
	ShortHelp() string
}

// action is what a command runs: the command itself, or one of the
// actions of a command with actions (goal, team), each with its own type.
type action interface {
	Name() string
	// SetFlags declares the flags it takes besides the global ones, bound
	// to its fields; a command with actions declares those every action
	// takes.
	SetFlags(fs *flag.FlagSet)
	// Run runs it with the arguments after its name and returns the exit
	// code.
	Run(ctx context.Context, e *env, args []string) int
}

// withActions is a command whose second word is an action with flags of
// its own ("goal create --criterion").
type withActions interface {
	command
	Actions() []action
}

// forPeople is a command whose output may hold text from the store or the
// repository: its stderr, and its stdout when printsForPerson (not JSON,
// which escapes control characters itself), go through visibleWriter.
type forPeople interface {
	printsForPerson() bool
}

// env is what a command runs with besides its flags: the global flags,
// the state directory, the log and the process's streams.
type env struct {
	globals        cli.Globals
	stateDir       string
	log            *slog.Logger
	stdin          io.Reader
	stdout, stderr io.Writer
}

// app is one command line of agentd: the global flags and a fresh value of
// every subcommand, in the order the refusal of a flag names those that
// take it. serve is agentd without a subcommand.
type app struct {
	globals  cli.Globals
	version  *versionCmd
	commands []command
}

func newApp() *app {
	a := &app{version: &versionCmd{}}
	a.commands = []command{&serve{}, &tool{}, &state{}, &todoCmd{}, newGoal(), &undo{}, &history{},
		&watchCmd{}, &simulate{}, &mcp{}, &hookCmd{}, &setupCmd{}, newTeam(), &runGoal{}, a.version}
	return a
}

// lookup is the subcommand named name.
func (a *app) lookup(name string) (command, bool) {
	i := slices.IndexFunc(a.commands, func(c command) bool { return c.Name() == name })
	if i < 0 {
		return nil, false
	}
	return a.commands[i], true
}

// newFlagSet is an empty flag set of agentd: its errors name agentd.
func newFlagSet(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("agentd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	return fs
}

// flagsOf is the flag set that set declares.
func flagsOf(set func(*flag.FlagSet)) *flag.FlagSet {
	fs := newFlagSet(io.Discard)
	set(fs)
	return fs
}

// merge adds to dst the flags of src that dst lacks.
func merge(dst, src *flag.FlagSet) {
	src.VisitAll(func(f *flag.Flag) {
		if dst.Lookup(f.Name) == nil {
			dst.Var(f.Value, f.Name, f.Usage)
		}
	})
}

// allFlags is every flag of agentd: the global ones and every command's
// and action's. It reads a command line whose subcommand is not known yet
// (flags may come first); TestSharedFlagsAlike checks that a flag two
// commands take is of one kind and default.
func (a *app) allFlags(stderr io.Writer) *flag.FlagSet {
	fs := newFlagSet(stderr)
	a.globals.SetFlags(fs)
	for _, c := range a.commands {
		merge(fs, flagsOf(c.SetFlags))
		if p, ok := c.(withActions); ok {
			for _, act := range p.Actions() {
				merge(fs, flagsOf(act.SetFlags))
			}
		}
	}
	return fs
}

// flagSet is the flag set of subcommand c given the arguments after its
// name, and the command it names ("goal pause"): the global flags, c's,
// and its action's when args name one, else every action's (for c's own
// usage error).
func (a *app) flagSet(c command, args []string, stderr io.Writer) (*flag.FlagSet, string) {
	fs := newFlagSet(stderr)
	a.globals.SetFlags(fs)
	c.SetFlags(fs)
	p, ok := c.(withActions)
	if !ok {
		return fs, c.Name()
	}
	if act := actionNamed(p, args); act != nil {
		act.SetFlags(fs)
		return fs, c.Name() + " " + act.Name()
	}
	for _, act := range p.Actions() {
		merge(fs, flagsOf(act.SetFlags))
	}
	return fs, c.Name()
}

// actionNamed is the action of p that args (after p's name) name, or nil.
func actionNamed(p withActions, args []string) action {
	if len(args) == 0 {
		return nil
	}
	for _, act := range p.Actions() {
		if act.Name() == args[0] {
			return act
		}
	}
	return nil
}

// takers names, for every flag but the global ones, the commands that
// take it, in the order of a.commands: a subcommand, "goal ACTION", or
// "goal" when the command itself declares it (every action takes it).
func (a *app) takers() map[string][]string {
	m := map[string][]string{}
	add := func(name string, fs, common *flag.FlagSet) {
		fs.VisitAll(func(f *flag.Flag) {
			if common == nil || common.Lookup(f.Name) == nil {
				m[f.Name] = append(m[f.Name], name)
			}
		})
	}
	for _, c := range a.commands {
		common := flagsOf(c.SetFlags)
		add(c.Name(), common, nil)
		if p, ok := c.(withActions); ok {
			for _, act := range p.Actions() {
				add(c.Name()+" "+act.Name(), flagsOf(act.SetFlags), common)
			}
		}
	}
	return m
}

// refusal is the error for the flags set in all that cmd (whose flag set
// is own) does not take, naming the commands that take it. Flags are
// checked in lexical order.
func (a *app) refusal(all, own *flag.FlagSet, cmd string) error {
	var err error
	all.Visit(func(f *flag.Flag) {
		if err != nil || own.Lookup(f.Name) != nil {
			return
		}
		names := strings.Join(a.takers()[f.Name], ", ")
		if f.Name == "version" {
			names = "agentd alone (agentd --version is agentd version)"
		}
		err = fmt.Errorf("--%s is a flag of: %s; agentd %s does not take it (see agentd %s --help)",
			f.Name, names, cmd, strings.Fields(cmd)[0])
	})
	return err
}

// run is the whole program behind main's OS setup; it returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := newApp()
	c, pos, code, done := a.parse(args, stdout, stderr)
	if done {
		return code
	}
	_, isHook := c.(*hookCmd)
	log, closeLog, err := cli.OpenLog("agentd", a.globals.LogFile, a.globals.LogLevel, stderr)
	if isHook && errors.Is(err, cli.ErrLogFile) {
		return cli.HookNotHandled("agentd hook", err, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentd: %v\n", err)
		return failBeforeRun(args, 2)
	}
	defer closeLog()
	stateDir, err := cli.ResolveStateDir(a.globals.StateDir)
	if isHook && err != nil {
		return cli.HookNotHandled("agentd hook", err, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentd: %v\n", err)
		return failBeforeRun(args, 2)
	}
	if p, ok := c.(forPeople); ok {
		if p.printsForPerson() {
			stdout = visibleWriter{stdout}
		}
		stderr = visibleWriter{stderr}
	}
	e := &env{globals: a.globals, stateDir: stateDir, log: log, stdin: stdin, stdout: stdout, stderr: stderr}
	return c.Run(ctx, e, pos)
}

// parse reads args into a's flags and returns the subcommand (serve when
// none is named) and the arguments after its name. done is true when the
// command line is answered already (help, version, a flag error, an
// unknown subcommand or a flag the subcommand does not take), with code
// the exit code; then nothing has opened.
func (a *app) parse(args []string, stdout, stderr io.Writer) (c command, pos []string, code int, done bool) {
	probe := newApp() // reads where the subcommand is; a's fields stay unset
	all := probe.allFlags(stderr)
	pos, err := cli.ParseInterspersed(all, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, a.usageOf(pos))
		return nil, nil, 0, true
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentd: %v\n", err)
		return nil, nil, failBeforeRun(args, 2), true
	}
	if probe.version.flag && len(pos) == 0 {
		pos = []string{"version"}
	}
	name := "serve"
	if len(pos) > 0 {
		name, pos = pos[0], pos[1:]
	}
	if name == "help" {
		fmt.Fprint(stdout, a.usageOf(pos))
		return nil, nil, 0, true
	}
	c, ok := a.lookup(name)
	if !ok {
		fmt.Fprintf(stderr, "agentd: unknown command %q (see agentd --help)\n", name)
		return nil, nil, failBeforeRun(args, 2), true
	}
	own, cmd := a.flagSet(c, pos, stderr)
	if err := a.refusal(all, own, cmd); err != nil {
		fmt.Fprintf(stderr, "agentd: %v\n", err)
		return nil, nil, failBeforeRun(args, 2), true
	}
	if _, err := cli.ParseInterspersed(own, args); err != nil { // own takes every flag all read
		fmt.Fprintf(stderr, "agentd: %v\n", err)
		return nil, nil, failBeforeRun(args, 2), true
	}
	if c == a.version { // it needs no log or state directory
		return nil, nil, c.Run(context.Background(), &env{stdout: stdout, stderr: stderr}, pos), true
	}
	return c, pos, 0, false
}

// failBeforeRun is the exit code of a failure before a subcommand runs:
// with --exit-code on the line (or a misspelling of it), exitFailure,
// which `agentd goal status --exit-code` gives no state.
func failBeforeRun(args []string, code int) int {
	if exitCodeAsked(args) {
		return exitFailure
	}
	return code
}

// exitCodeAsked says whether args asks for `goal status --exit-code`: a
// flag before "--" named exit-code (not set to false), or one whose name
// starts with "exit", which can only be a misspelling of it (a name with
// a space is text, as cli.ParseInterspersed reads it).
func exitCodeAsked(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, value, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(name, "exit") && !strings.ContainsAny(name, " \t\n") && !(name == "exit-code" && value == "false") {
			return true
		}
	}
	return false
}
