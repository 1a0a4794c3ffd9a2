package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agentd/agentd/hook"
)

// HookLine is what `agentd hook AGENT` and agentd-hook read from their
// command line besides the agent and the global flags.
type HookLine struct {
	Workspace string // --workspace; "" is the folder FindFolder finds from the event's cwd
	Session   string // --session
	Remote    string // --remote: "" or auto, or unix:PATH
}

// HookUsage is the usage of `agentd hook` (name "agentd hook") and of
// agentd-hook (name "agentd-hook").
func HookUsage(name string) string {
	return fmt.Sprintf("usage: %s %s [--workspace DIR] [--session S] [--remote=auto|unix:PATH]\n  runs one agent hook event: the event on stdin, the answer on stdout (docs/hooks.md)\n", name, strings.Join(hook.Hosts, "|"))
}

// Hook runs `agentd hook claude|gemini|codex|copilot|qwen|opencode` (docs/hooks.md), name being
// how its usage names it: one agent hook event on stdin, its answer on
// stdout, through the shared daemon (started with d.Program when none
// runs, as the forwarder does). pos are the positional arguments after
// "hook". It exits 0 whatever happens to the event, so the agent goes on;
// only a command line that names no agent exits 1 (never 2, which the
// agents read as "block").
func Hook(ctx context.Context, name string, pos []string, line HookLine, d Daemon, stdin io.Reader, stdout, stderr io.Writer) int {
	if problem := hookLineProblem(pos, line.Remote); problem != "" {
		fmt.Fprintf(stderr, "%s: %s\n", name, problem)
		fmt.Fprint(stderr, HookUsage(name))
		return 1
	}
	log := d.Logger
	opts := hook.Options{Host: pos[0], Session: line.Session, StateDir: d.StateDir, Logger: log}
	if line.Workspace != "" {
		folder, err := WorkspaceFolder(line.Workspace, d.StateDir)
		if err != nil {
			log.Warn("hook event not handled; the agent goes on without agentd", "err", err)
			return 0
		}
		opts.Folder = folder
	}
	path, explicit, err := RemoteSocket(line.Remote)
	if err != nil {
		log.Warn("hook event not handled; the agent goes on without agentd", "err", err)
		return 0
	}
	opts.Dial = func(dctx context.Context) (io.ReadWriteCloser, error) {
		return hookDial(dctx, d, path, explicit)
	}
	hook.Run(ctx, opts, stdin, stdout)
	return 0
}

// HookNotHandled is the end of a hook that fails before it has a logger or
// a state directory (no HOME, a --log-file that cannot be opened): as any
// event not handled, it says why on stderr, prints nothing and exits 0, so
// that the agent goes on (2 would block it; docs/hooks.md, "Never breaking
// the agent"). name is how the usage names the program.
func HookNotHandled(name string, err error, stderr io.Writer) int {
	fmt.Fprintf(stderr, "%s: hook event not handled; the agent goes on without agentd: %v\n", name, err)
	return 0
}

// hookLineProblem says what is wrong with a hook command line whose
// positional arguments are pos and whose --remote is remote, or "" when it
// names one known agent and a daemon to reach.
func hookLineProblem(pos []string, remote string) string {
	switch {
	case len(pos) == 0:
		return "name the agent: one of " + strings.Join(hook.Hosts, ", ")
	case !slices.Contains(hook.Hosts, pos[0]):
		return fmt.Sprintf("unknown agent %q: use one of %s", pos[0], strings.Join(hook.Hosts, ", "))
	case len(pos) > 1:
		return fmt.Sprintf("unexpected argument %q: name one agent", pos[1])
	case remote == "off":
		return "--remote=off is not for hooks: a hook works through the shared daemon (--remote=auto or --remote=unix:PATH)"
	}
	return ""
}
