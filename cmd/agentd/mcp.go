package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/agentd/agentd/caller"
	"github.com/agentd/agentd/cmd/internal/cli"
	"github.com/agentd/agentd/lsp"
	"github.com/agentd/agentd/mcpserver"
	"github.com/agentd/agentd/service"
)

// mcpUsage is its usage: what --help prints and a wrong command line shows.
const mcpUsage = "usage: agentd mcp [--workspace DIR] [--session S] [--remote=auto|off|unix:PATH]\n  serves MCP on stdin/stdout for coding agents (docs/mcp.md)\n"

// mcp is `agentd mcp` (docs/mcp.md): an MCP server on stdin/stdout for
// one workspace folder (--workspace, else workspaceFolder's rule) and
// session. --remote=auto (the default) and unix:PATH reach the shared
// daemon as the forwarder does (dialShared); --remote=off serves the state
// from this process, as `agentd` on stdio does.
type mcp struct{ t target }

func (*mcp) Name() string          { return "mcp" }
func (*mcp) Usage([]string) string { return mcpUsage }
func (*mcp) ShortHelp() string {
	return `  agentd mcp [--remote=auto|off|unix:PATH]
                                        MCP server on stdin/stdout for coding agents: the
                                        tools, the state as resources, a goal prompt
`
}

func (m *mcp) SetFlags(fs *flag.FlagSet) {
	cli.WorkspaceVar(fs, &m.t.workspace)
	cli.SessionVar(fs, &m.t.session)
	cli.RemoteVar(fs, &m.t.remote)
	m.t.etcd.SetFlags(fs)
}

func (m *mcp) Run(ctx context.Context, e *env, pos []string) int {
	t, log, stdin, stdout, stderr := m.t, e.log, e.stdin, e.stdout, e.stderr
	if len(pos) > 0 {
		fmt.Fprint(stderr, mcpUsage)
		return 2
	}
	folder, err := workspaceFolder(e, t)
	if err != nil {
		fmt.Fprintf(stderr, "agentd mcp: %v\n", err)
		return 2
	}
	var dial func(context.Context) (io.ReadWriteCloser, error)
	if t.remote == "off" {
		svc := service.New(e.storeOptions(t.etcd), service.Daemon)
		defer svc.Close()
		srv := lsp.NewServer(svc, agentdVersion(), log)
		defer srv.Close()
		var conns sync.WaitGroup
		defer conns.Wait() // before the deferred closes above
		dial = func(context.Context) (io.ReadWriteCloser, error) {
			client, server := net.Pipe()
			conns.Go(func() { srv.ServeConn(ctx, server, lsp.ConnOptions{Caller: caller.Self()}) })
			return client, nil
		}
	} else {
		path, explicit, err := cli.RemoteSocket(t.remote)
		if err != nil {
			fmt.Fprintf(stderr, "agentd mcp: %v\n", err)
			return 2
		}
		dial = func(dctx context.Context) (io.ReadWriteCloser, error) {
			conn, _, err := dialShared(dctx, e, t, path, explicit)
			if err != nil {
				return nil, err
			}
			return conn, nil
		}
	}
	terminalHint(stdin, stderr, "agentd mcp is an MCP server that gives coding agents agentd's tools; it now waits for MCP messages on stdin.\n"+
		"Agents start it for you: agentd setup claude|gemini|codex|copilot|qwen|cursor writes it into their config (docs/mcp.md). Press Ctrl-D to quit.\n")
	log.Debug("serving MCP", "workspace", folder, "session", t.session, "remote", t.remote)
	in, restore := pollableStdin(stdin)
	defer restore()
	err = mcpserver.Serve(ctx, readCloser(in), nopWriteCloser{stdout}, mcpserver.Options{
		Folder: folder, Session: t.session, Version: agentdVersion(), Dial: dial, Logger: log,
	})
	if err != nil {
		fmt.Fprintf(stderr, "agentd mcp: %v\n", err)
		return 1
	}
	return 0
}

// readCloser is r, with a Close that closes it when it can.
func readCloser(r io.Reader) io.ReadCloser {
	if rc, ok := r.(io.ReadCloser); ok {
		return rc
	}
	return io.NopCloser(r)
}

// nopWriteCloser keeps stdout open when the MCP connection closes: the
// process's exit closes it.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
