package main

import (
	"context"
	"io"
	"log/slog"

	"github.com/agentd/agentd/cmd/internal/cli"
)

// runHook runs `agentd hook claude|gemini|codex|copilot|qwen|opencode` (docs/hooks.md): cli.Hook,
// which agentd-hook runs too.
func runHook(ctx context.Context, o options, stateDir string, log *slog.Logger, pos []string, stdin io.Reader, stdout, stderr io.Writer) int {
	line := cli.HookLine{Workspace: o.workspace, Session: o.session, Remote: o.remote}
	return cli.Hook(ctx, "agentd hook", pos, line, o.daemon(stateDir, log), stdin, stdout, stderr)
}
