package main

// `agentd run [AGENT]` (docs/commands.md, "Running a goal unattended"): drives a headless
// agent on the folder's goal until the goal is complete, blocked or
// cancelled. Within one agent process the hooks continue the goal
// (docs/hooks.md); this command starts the next process when one ends
// with the goal still active, waits without starting any while the goal is
// paused or waiting, and says why it stopped in one line.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agentd/agentd/cmd/internal/cli"
	"github.com/agentd/agentd/commands"
	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/lsp/daemon/client"
)

const runUsage = `usage: agentd run [claude|gemini|codex] [--workspace DIR] [--remote=auto|unix:PATH] [-- AGENT FLAGS...]
  drives the agent, headless, on the workspace folder's goal until the goal is complete,
  blocked or cancelled (default agent: claude). It sets the agent up for the folder when
  that is not done (agentd setup AGENT), starts it with the goal's continuation prompt on
  its stdin, resumes the agent's own session for the next process, waits without
  starting one while the goal is paused or waiting, and goes on with the queue's next goal.
  When its daemon goes away it connects again (at most ` + "%d" + ` tries) and goes on.
  The agent is the program of that name on your PATH; the flags after -- are passed to it
  as they are (e.g. -- --model opus). Its output is appended to a log file under the
  state directory, named in the output.
  Exit: ` + "%s" + `, with one line saying why; ` + "%d" + ` when it cannot run.
`

// runGoal is `agentd run [AGENT] [-- FLAGS]`.
type runGoal struct{ t target }

func (*runGoal) Name() string { return "run" }

func (*runGoal) Usage([]string) string {
	return fmt.Sprintf(runUsage, reconnectTries, commands.StatusExitCodes(), exitFailure)
}

func (*runGoal) ShortHelp() string {
	return `  agentd run [claude|gemini|codex] [-- AGENT FLAGS]
                                        drive a headless agent on the folder's goal until
                                        it is complete, blocked or cancelled
`
}

func (r *runGoal) SetFlags(fs *flag.FlagSet) {
	cli.WorkspaceVar(fs, &r.t.workspace)
	cli.RemoteVar(fs, &r.t.remote)
	r.t.etcd.SetFlags(fs)
}

// printsForPerson is false: the status line writes its own terminal
// controls, and every text from the store or the agent goes through
// commands.VisibleText (runView).
func (*runGoal) printsForPerson() bool { return false }

// defaultRunAgent is the agent `agentd run` drives when none is named.
const defaultRunAgent = "claude"

func (r *runGoal) Run(ctx context.Context, e *env, pos []string) int {
	name, extra := defaultRunAgent, pos
	if len(pos) > 0 && !strings.HasPrefix(pos[0], "-") {
		name, extra = pos[0], pos[1:]
	}
	agent, ok := headlessAgents[name]
	if !ok {
		fmt.Fprintf(e.stderr, "agentd run: unknown agent %q: use one of %s\n", name, strings.Join(headlessNames(), ", "))
		return exitFailure
	}
	folder, err := workspaceFolder(e, r.t)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentd run: %v\n", err)
		return exitFailure
	}
	noteFolder(e.stderr, folder)
	if !setUpForRun(e, name, folder) {
		return exitFailure
	}
	d := &driver{e: e, agent: agent, name: name, extra: extra, folder: folder, t: r.t, changed: make(chan struct{}, 1)}
	d.view = newRunView(e.stdout)
	if err := d.connect(ctx); err != nil {
		fmt.Fprintf(e.stderr, "agentd run: %v\n", err)
		return exitFailure
	}
	defer func() { d.sess.Close() }() // the session of the end: a lost one is replaced (reconnect)
	d.rec, d.recPath = loadRunRecord(e.stateDir, folder)
	return d.loop(ctx)
}

// setUpForRun makes sure the agent's hooks and agentd's MCP server are in
// its config for folder: when neither the project's nor the user's config
// has them all, `agentd setup AGENT` for the project is done on the spot and
// said on stderr. false: it failed, and the error is said.
func setUpForRun(e *env, agent, folder string) bool {
	var project []setupPlan
	quiet := *e // the user scope is only read: its notes are not for this run
	quiet.stderr = io.Discard
	for _, user := range []bool{false, true} {
		c, ce := &setupCmd{workspace: folder, user: user}, e
		if user {
			ce = &quiet
		}
		opts, code := c.options(ce, agent)
		if code != 0 {
			return false
		}
		plan, err := planSetup(opts)
		if err != nil {
			fmt.Fprintf(e.stderr, "agentd run: agentd setup %s: %v\n", agent, err)
			return false
		}
		if plan.done() {
			return true
		}
		if !user {
			project = append(project, plan)
		}
	}
	fmt.Fprintf(e.stderr, "agentd run: %s is not set up for this folder: running agentd setup %s now\n", agent, agent)
	setupOut := *e
	setupOut.stdout = e.stderr
	if _, ok := applyChanges(&setupOut, agent, project[0].changes); !ok {
		return false
	}
	(&setupCmd{workspace: folder}).nextSteps(&setupOut, project[0].opts)
	return true
}

// driver runs one `agentd run`: its LSP session with the folder's daemon,
// the agent it starts, and what it shows.
type driver struct {
	e      *env
	agent  headless
	name   string   // the agent's name on the command line
	extra  []string // the person's flags for the agent, after --
	folder string
	t      target // how the daemon is reached, again after it was lost
	sess   *client.Session
	// lostTries counts the connections made since the daemon was lost
	// and no command answered (reconnect).
	lostTries int
	// changed has a value when a notification came since the state was
	// last read.
	changed chan struct{}
	view    *runView
	rec     runRecord
	recPath string
	// goalID is the goal the last agent process worked on; seen: a goal
	// was seen in this run (its going away is a cancel).
	goalID string
	seen   bool
	// logStart is where the output of the agent process that runs, or
	// ran last, begins in the run's log.
	logStart int64
}

// loop drives the goal until it ends, and returns the exit code.
func (d *driver) loop(ctx context.Context) int {
	for {
		st, err := d.state(ctx)
		if err != nil {
			return d.failed(ctx, err)
		}
		d.view.show(d.name, st)
		g := st.Goal
		if code, line, done := d.ended(st); done {
			return d.finish(code, line)
		}
		switch g.Status {
		case "active":
			if code, line, stop := d.runAgent(ctx, st); stop {
				return d.finish(code, line)
			}
		case "paused", "waiting": // docs/runtime.md §2: neither is continued
			d.view.line(fmt.Sprintf("waiting: the goal is %s (%s); nothing runs until it is active again (agentd goal resume, or the editor's goal panel)", g.Status, orNone(g.TerminalReason)))
			if err := d.await(ctx, g); err != nil {
				return d.failed(ctx, err)
			}
		default:
			code, err := commands.StatusExitCode(g)
			return d.finish(code, fmt.Sprintf("stopped: %v", err))
		}
	}
}

// ended says whether the run is over for st: no goal (never one, or the
// goal was cancelled), complete with no next goal, or blocked.
func (d *driver) ended(st protocol.State) (code int, line string, done bool) {
	g := st.Goal
	switch {
	case g == nil && d.seen:
		return commands.ExitNoGoal, "cancelled: the goal was cancelled", true
	case g == nil:
		return commands.ExitNoGoal, "no goal: create one first (agentd goal create OBJECTIVE)", true
	case g.Status == "complete":
		line := fmt.Sprintf("goal complete after %s (%s)", turns(g.TurnsUsed), commands.FormatProgress(g))
		if n := len(st.Queue.Items); n > 0 && !st.Queue.AutoAdvance {
			line += fmt.Sprintf("; %d queued goal(s) wait, and auto-advance is off (agentd goal queue help)", n)
		}
		return commands.ExitComplete, line, true
	case g.Status == "blocked":
		return commands.ExitBlocked, "blocked: " + orNone(g.TerminalReason), true
	}
	d.seen = true
	return 0, "", false
}

// await returns once a notification came and the goal is no longer what
// g was (a paused or waiting goal woken, resumed, cancelled, replaced).
func (d *driver) await(ctx context.Context, g *protocol.GoalSnapshot) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-d.sess.Done(): // the daemon is lost: state reconnects
		case <-d.changed:
		}
		st, err := d.state(ctx)
		if err != nil {
			return err
		}
		d.view.show(d.name, st)
		if st.Goal == nil || st.Goal.GoalID != g.GoalID || st.Goal.Status != g.Status {
			return nil
		}
	}
}

// failed is the end of a run whose daemon or context failed: interrupted
// by a signal (the goal's own exit code), or the error.
func (d *driver) failed(ctx context.Context, err error) int {
	if ctx.Err() == nil {
		return d.finish(exitFailure, fmt.Sprintf("stopped: %v", err))
	}
	sctx, cancel := context.WithTimeout(context.Background(), client.DefaultCallWaits.Command)
	defer cancel()
	st, serr := d.state(sctx)
	if serr != nil {
		return d.finish(exitFailure, "stopped: interrupted")
	}
	code, cerr := commands.StatusExitCode(st.Goal)
	if cerr != nil || st.Goal == nil {
		return d.finish(code, "stopped: interrupted")
	}
	return d.finish(code, fmt.Sprintf("stopped: interrupted; the goal is %s (%s): run agentd run again to go on", st.Goal.Status, commands.FormatProgress(st.Goal)))
}

// finish says line as the run's last and returns code.
func (d *driver) finish(code int, line string) int {
	d.view.last(line)
	return code
}

// orNone is s, or "no reason given".
func orNone(s string) string {
	if s == "" {
		return "no reason given"
	}
	return s
}

// turns is "1 turn", "7 turns".
func turns(n int64) string {
	if n == 1 {
		return "1 turn"
	}
	return fmt.Sprintf("%d turns", n)
}

// headlessNames are the agents `agentd run` drives, sorted.
func headlessNames() []string {
	var names []string
	for n := range headlessAgents {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// runLogPath is where the agent's output goes for folder's run.
func runLogPath(stateDir, folder string) string { return runFile(stateDir, folder, ".log") }
