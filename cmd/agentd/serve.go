package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/agentd/agentd/cmd/internal/cli"
	"github.com/agentd/agentd/lsp/daemon/client"
)

// serve is `agentd [serve]`: LSP on stdio, relayed to the shared daemon
// (--remote), or the shared daemon itself (--listen). It takes --workspace
// without using it (the LSP client names the folders): a command line that
// starts agentd for one folder may carry it.
type serve struct {
	t             target // workspace, remote and etcd
	stdio         bool
	listen        string        // unix:PATH
	listenTimeout time.Duration // how long the daemon waits without clients
}

func (*serve) Name() string { return "serve" }

func (s *serve) Usage([]string) string {
	return "usage:\n" + s.ShortHelp() + `  flags: --stdio, --remote=auto|unix:PATH, --listen=unix:PATH, --listen.timeout DURATION,
  the etcd settings of team folders (agentd --help), --workspace (taken, not used: the editor
  names the folders); docs/shared-daemon.md
`
}

func (*serve) ShortHelp() string {
	return `  agentd [serve] [--stdio]              LSP over stdin/stdout (what editors start)
  agentd --remote=auto                  LSP over stdin/stdout relayed to your shared daemon,
                                        started when none runs (--remote=unix:PATH: that socket)
  agentd serve --listen=unix:PATH       shared daemon on a Unix socket; exits after
                                        --listen.timeout (default 1m, 0 = never) without clients
`
}

func (s *serve) SetFlags(fs *flag.FlagSet) {
	cli.WorkspaceVar(fs, &s.t.workspace)
	cli.RemoteVar(fs, &s.t.remote)
	s.t.etcd.SetFlags(fs)
	fs.BoolVar(&s.stdio, "stdio", false, "serve LSP on stdin/stdout (the default)")
	fs.StringVar(&s.listen, "listen", "", "serve the shared daemon on unix:PATH")
	fs.DurationVar(&s.listenTimeout, "listen.timeout", client.DefaultIdleTimeout, "daemon: exit after this long without clients (0: never)")
}

func (s *serve) Run(ctx context.Context, e *env, pos []string) int {
	if len(pos) > 0 {
		fmt.Fprintf(e.stderr, "agentd serve: unexpected argument %q\n", pos[0])
		return 2
	}
	switch {
	case s.listen != "" && (s.t.remote != "" || s.stdio):
		fmt.Fprint(e.stderr, "agentd serve: --listen cannot go with --remote or --stdio\n")
		return 2
	case s.listen != "":
		return serveDaemon(ctx, e, s)
	case s.t.remote != "":
		return forward(ctx, e, s.t)
	}
	return serveStdio(ctx, e, s.t.etcd)
}

// versionCmd is `agentd version`, also `agentd --version`; app.parse
// runs it before anything opens.
type versionCmd struct{ flag bool }

func (*versionCmd) Name() string { return "version" }
func (*versionCmd) Usage([]string) string {
	return "usage: agentd version (also agentd --version)\n  prints agentd's version; takes no other flag\n"
}
func (*versionCmd) ShortHelp() string {
	return "  agentd version                        print the version (also agentd --version)\n"
}

func (v *versionCmd) SetFlags(fs *flag.FlagSet) {
	fs.BoolVar(&v.flag, "version", false, "print the version")
}

func (*versionCmd) Run(_ context.Context, e *env, _ []string) int {
	fmt.Fprintf(e.stdout, "agentd %s\n", agentdVersion())
	return 0
}
