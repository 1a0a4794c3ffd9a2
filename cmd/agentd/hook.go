package main

import (
	"context"
	"flag"

	"github.com/agentd/agentd/cmd/internal/cli"
)

// hookCmd is `agentd hook claude|gemini|codex|copilot|qwen|opencode`
// (docs/hooks.md): cli.Hook, which agentd-hook runs too, with the flags
// cli declares for both.
type hookCmd struct {
	line cli.HookLine
	etcd cli.Etcd
}

func (*hookCmd) Name() string          { return "hook" }
func (*hookCmd) Usage([]string) string { return cli.HookUsage("agentd hook") }
func (*hookCmd) ShortHelp() string {
	return `  agentd hook claude|gemini|codex|copilot|qwen|opencode
                                        run one agent hook event (stdin to stdout): turns,
                                        steps, reminders and goal continuation inside the agent
`
}

func (h *hookCmd) SetFlags(fs *flag.FlagSet) {
	h.line.SetFlags(fs)
	h.etcd.SetFlags(fs)
}

func (h *hookCmd) Run(ctx context.Context, e *env, pos []string) int {
	return cli.Hook(ctx, "agentd hook", pos, h.line, e.daemon(h.etcd), e.stdin, e.stdout, e.stderr)
}
