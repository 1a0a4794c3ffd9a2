package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"

	"github.com/agentd/agentd/caller"
	"github.com/agentd/agentd/cmd/internal/cli"
	"github.com/agentd/agentd/lsp"
	"github.com/agentd/agentd/mcpserver"
	"github.com/agentd/agentd/service"
)

// runMCP runs `agentd mcp` (docs/mcp.md): an MCP server on stdin/stdout for
// one workspace folder (--workspace, else workspaceFolder's rule) and
// session. --remote=auto (the default, except on Windows, which has no
// shared daemon: there it is off) and unix:PATH reach the shared
// daemon as the forwarder does (dialShared); --remote=off serves the state
// from this process, as `agentd` on stdio does.
func runMCP(ctx context.Context, o options, stateDir string, log *slog.Logger, pos []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(pos) > 0 {
		fmt.Fprint(stderr, mcpUsage)
		return 2
	}
	folder, err := workspaceFolder(o, stateDir)
	if err != nil {
		fmt.Fprintf(stderr, "agentd mcp: %v\n", err)
		return 2
	}
	var dial func(context.Context) (io.ReadWriteCloser, error)
	if o.remote == "off" || (o.remote == "" && !cli.SharedDaemon) {
		svc := service.New(o.storeOptions(stateDir, log), service.Daemon)
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
		path, explicit, err := cli.RemoteSocket(o.remote)
		if err != nil {
			fmt.Fprintf(stderr, "agentd mcp: %v\n", err)
			return 2
		}
		dial = func(dctx context.Context) (io.ReadWriteCloser, error) {
			conn, _, err := dialShared(dctx, o, path, explicit, stateDir, log)
			if err != nil {
				return nil, err
			}
			return conn, nil
		}
	}
	terminalHint(stdin, stderr, "agentd mcp is an MCP server that gives coding agents agentd's tools; it now waits for MCP messages on stdin.\n"+
		"Agents start it for you: agentd setup claude|gemini|codex|copilot|qwen|cursor writes it into their config (docs/mcp.md). Press Ctrl-D to quit.\n")
	log.Debug("serving MCP", "workspace", folder, "session", o.session, "remote", o.remote)
	in, restore := pollableStdin(stdin)
	defer restore()
	err = mcpserver.Serve(ctx, readCloser(in), nopWriteCloser{stdout}, mcpserver.Options{
		Folder: folder, Session: o.session, Version: agentdVersion(), Dial: dial, Logger: log,
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
