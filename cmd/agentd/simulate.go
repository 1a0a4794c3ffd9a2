package main

import (
	"context"
	"embed"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentd/agentd/commands/protocol"

	"github.com/agentd/agentd/caller"
	"github.com/agentd/agentd/cmd/internal/cli"
	"github.com/agentd/agentd/commands"
	"github.com/agentd/agentd/loop"
	"github.com/agentd/agentd/service"
)

// scripts are the example conversations `agentd simulate` plays.
//
//go:embed scripts/*.json
var scripts embed.FS

// loadScript reads an embedded script by name ("complete", "turn-budget")
// or a JSON file by path.
func loadScript(name string) (*loop.Script, error) {
	data, err := scripts.ReadFile("scripts/" + name + ".json")
	if err != nil {
		if data, err = os.ReadFile(name); err != nil {
			return nil, fmt.Errorf("no script %q: give a JSON file or one of the built-in scripts complete, turn-budget", name)
		}
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var s loop.Script
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("script %s: %v", name, err)
	}
	return &s, nil
}

// simulateUsage is its usage: what --help prints and a wrong command line shows.
const simulateUsage = "usage: agentd simulate [--script NAME|FILE] [--workspace DIR] [--session S] [--verbose]\n  plays a scripted agent loop (built-in: complete, turn-budget) and prints what the agent sees\n"

// simulate is `agentd simulate`: it plays a script as an agent host would, through the lifecycle
// commands, and prints each turn's injections, tool results and
// continuation. Without --workspace and --state-dir it plays in a fresh
// temporary folder, so it never touches real state.
type simulate struct {
	t       target // workspace, session and etcd
	script  string
	verbose bool
}

func (*simulate) Name() string          { return "simulate" }
func (*simulate) Usage([]string) string { return simulateUsage }
func (*simulate) ShortHelp() string {
	return `  agentd simulate [--script NAME|FILE]  play a scripted agent loop (built-in: complete,
                                        turn-budget) and print injections and continuations
`
}

func (s *simulate) SetFlags(fs *flag.FlagSet) {
	cli.WorkspaceVar(fs, &s.t.workspace)
	cli.SessionVar(fs, &s.t.session)
	s.t.etcd.SetFlags(fs)
	fs.StringVar(&s.script, "script", "", "simulate: built-in script name or JSON file")
	fs.BoolVar(&s.verbose, "verbose", false, "simulate: print whole injections and prompts")
}

func (*simulate) printsForPerson() bool { return true }

func (s *simulate) Run(ctx context.Context, e *env, pos []string) int {
	stdout, stderr := e.stdout, e.stderr
	name := "complete"
	if s.script != "" {
		name = s.script
	}
	if len(pos) > 0 {
		fmt.Fprint(stderr, simulateUsage)
		return 2
	}
	sc, err := loadScript(name)
	if err != nil {
		fmt.Fprintf(stderr, "agentd simulate: %v\n", err)
		return 2
	}
	dir, stateDir := s.t.workspace, e.stateDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "agentd-simulate-")
		if err != nil {
			fmt.Fprintf(stderr, "agentd simulate: %v\n", err)
			return 1
		}
		defer os.RemoveAll(tmp)
		dir, stateDir = filepath.Join(tmp, "workspace"), filepath.Join(tmp, "state")
		os.Mkdir(dir, 0o700)
	}
	abs, _ := filepath.Abs(dir)
	here := *e
	here.stateDir = stateDir
	svc := service.New(here.storeOptions(s.t.etcd), service.OneShot)
	defer svc.Close()
	session := s.t.session
	if session == "" {
		session = sc.Session
	}
	cl := commands.NewClient(svc, commands.Defaults{Session: session})
	defer cl.Close()
	if s.t.workspace != "" {
		cl.SetCaller(caller.Self()) // a real folder's state: as `agentd goal` would
	}
	if err := cl.AddFolder(abs); err != nil {
		fmt.Fprintf(stderr, "agentd simulate: %v\n", err)
		return 1
	}
	// The run's nanosecond clock makes turn ids unique per run, so a script
	// can be played again on the same state.
	h := &loop.Host{Executor: executor{cl}, TurnPrefix: fmt.Sprintf("sim-%d-", time.Now().UnixNano())}
	p := &printer{out: stdout, verbose: s.verbose}
	fmt.Fprintf(stdout, "Script: %s\n\n", sc.Description)
	st, err := loop.Play(ctx, h, sc, p.observer())
	if err != nil {
		fmt.Fprintf(stderr, "agentd simulate: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "\nFinal todo list (revision %d):\n", st.Revision)
	for _, it := range st.Todos.Items {
		fmt.Fprintf(stdout, "  [%s] %s\n", it.Status, it.Title)
	}
	return 0
}

// executor runs the loop's commands in-process on a commands.Client, the
// way the LSP server runs workspace/executeCommand.
type executor struct{ cl *commands.Client }

func (x executor) Execute(ctx context.Context, command string, args any) (json.RawMessage, error) {
	var arguments []any
	if args != nil {
		arguments = []any{args}
	}
	raw, err := json.Marshal(arguments)
	if err != nil {
		return nil, err
	}
	res, err := x.cl.Execute(ctx, command, raw)
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

// printer prints what agentd answers while a script plays.
type printer struct {
	out     io.Writer
	verbose bool
}

func (p *printer) observer() loop.Observer {
	return loop.Observer{
		GoalSet: func(st protocol.State) {
			fmt.Fprintf(p.out, "User creates a goal: %s\n  budget: %s\n", st.Goal.Objective, commands.FormatProgress(st.Goal))
		},
		TurnBegan: func(turn int, origin protocol.Origin, res protocol.TurnBeginResult) {
			fmt.Fprintf(p.out, "\nTurn %d (origin %s, goal-driven: %v)\n", turn, origin, res.GoalDriven)
		},
		StepBegan: func(_, step int, res protocol.StepBeginResult) {
			for _, inj := range res.Injections {
				p.show(fmt.Sprintf("  step %d  inject %s", step, inj.Variant), inj.Text)
			}
		},
		ToolCalled: func(_, step int, tool loop.Tool, res protocol.ToolResult) {
			mark := "→"
			if res.IsError {
				mark = "→ refused:"
			}
			p.show(fmt.Sprintf("  step %d  %s %s", step, tool.Name, mark), res.Output)
		},
		StepEnded: func(_, step int, s loop.Step, res protocol.StepEndResult) {
			fmt.Fprintf(p.out, "  step %d  end: %s, output tokens: %d\n", step, s.FinishReason, s.OutputTokens)
			for _, inj := range res.Injections {
				p.show(fmt.Sprintf("  step %d  inject %s", step, inj.Variant), inj.Text)
			}
			if res.StopTurn {
				fmt.Fprintf(p.out, "  agentd says: stop the turn\n")
			}
		},
		TurnEnded: func(_ int, res protocol.TurnEndResult) {
			if res.Continuation != nil {
				p.show("  turn end: continuation "+string(res.Continuation.Variant), res.Continuation.Prompt)
			} else {
				fmt.Fprintf(p.out, "  turn end: no continuation\n")
			}
			if res.Goal != nil {
				fmt.Fprintf(p.out, "  goal: %s · %s", res.Goal.Status, commands.FormatProgress(res.Goal))
				if res.Goal.TerminalReason != "" {
					fmt.Fprintf(p.out, " · %s", res.Goal.TerminalReason)
				}
				fmt.Fprintln(p.out)
			}
		},
	}
}

// show prints a label and text: the first meaningful line, or all of it
// with --verbose.
func (p *printer) show(label, text string) {
	if p.verbose {
		fmt.Fprintf(p.out, "%s\n", label)
		for _, line := range strings.Split(text, "\n") {
			fmt.Fprintf(p.out, "      | %s\n", line)
		}
		return
	}
	first := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line != "" && line != "<system-reminder>" {
			first = line
			break
		}
	}
	if r := []rune(first); len(r) > 100 {
		first = string(r[:99]) + "…"
	}
	fmt.Fprintf(p.out, "%s %s\n", label, first)
}
