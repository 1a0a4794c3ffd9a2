package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"

	"github.com/agentd/agentd/hook"
)

// runHook runs `agentd hook claude|gemini|codex` (docs/hooks.md): one agent
// hook event on stdin, its answer on stdout, through the shared daemon
// (started when none runs, as the forwarder does). It exits 0 whatever
// happens to the event, so the agent goes on; only a command line that
// names no agent exits 1 (never 2, which the agents read as "block").
func runHook(ctx context.Context, o options, stateDir string, log *slog.Logger, pos []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(pos) != 1 || !slices.Contains(hook.Hosts, pos[0]) || o.remote == "off" {
		fmt.Fprint(stderr, hookUsage())
		return 1
	}
	opts := hook.Options{Host: pos[0], Session: o.session, StateDir: stateDir, Logger: log}
	if o.workspace != "" {
		folder, err := workspaceFolder(o, stateDir)
		if err != nil {
			log.Warn("hook event not handled; the agent goes on without agentd", "err", err)
			return 0
		}
		opts.Folder = folder
	}
	path, explicit, err := remoteSocket(o.remote)
	if err != nil {
		log.Warn("hook event not handled; the agent goes on without agentd", "err", err)
		return 0
	}
	opts.Dial = func(dctx context.Context) (io.ReadWriteCloser, error) {
		conn, _, err := dialShared(dctx, o, path, explicit, stateDir, log)
		if err != nil {
			return nil, err
		}
		return conn, nil
	}
	hook.Run(ctx, opts, stdin, stdout)
	return 0
}
