// Command agentd-hook is `agentd hook claude|gemini|codex|copilot|qwen|opencode` as a program of
// its own (docs/hooks.md): one agent hook event on stdin, its answer on
// stdout, through the shared daemon, with the flags, exit codes and output
// of `agentd hook AGENT` (both run cli.Hook). A coding agent runs it once
// per event, so it links only what a hook needs: no LSP server, command
// table, store, etcd client or MCP SDK, whose initialisation and page
// faults agentd's 28 MB pay at every exec (docs/performance.md). It never
// serves: when no daemon runs, it starts `agentd serve` with the agentd
// program beside it (cli.Beside). `agentd setup` writes it into the agents'
// hooks when it sits beside agentd.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/agentd/agentd/cmd/internal/cli"
)

// version is set at build time with -ldflags "-X main.version=...", as
// agentd's is (cli.Version).
var version = ""

const name = "agentd-hook"

func main() { cli.Main(run) }

// run is the whole program behind main's OS setup; it returns the exit
// code: 0 whatever happens to the event (also when no state directory is
// found or the log file cannot be opened), 1 for a command line that names
// no agent, 2 for a bad flag (as `agentd hook`).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var f cli.HookFlags
	fs := f.FlagSet(name, stderr)
	pos, err := cli.ParseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, cli.HookUsage(name))
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}
	log, closeLog, err := cli.OpenLog(name, f.LogFile, f.LogLevel, stderr)
	if errors.Is(err, cli.ErrLogFile) {
		return cli.HookNotHandled(name, err, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}
	defer closeLog()
	stateDir, err := cli.ResolveStateDir(f.StateDir)
	if err != nil {
		return cli.HookNotHandled(name, err, stderr)
	}
	d := cli.Daemon{StateDir: stateDir, LogLevel: f.LogLevel, LogFile: f.LogFile,
		Etcd:    f.Etcd.Args(),
		Version: cli.Version(version), Program: cli.Beside, Logger: log}
	return cli.Hook(ctx, name, pos, f.HookLine, d, stdin, stdout, stderr)
}
