package main

// The shared daemon from the command line (docs/protocol.md §1): `agentd serve
// --listen=unix:PATH` serves it, `agentd --remote=auto` relays an editor to
// it (starting it when none runs), and the shell commands run through it
// when one answers (oneShot in run.go decides, with viaDaemon).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentd/agentd/cmd/internal/cli"
	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/lsp"
	"github.com/agentd/agentd/lsp/daemon"
	"github.com/agentd/agentd/lsp/daemon/client"
	"github.com/agentd/agentd/service"
)

// serveDaemon runs `agentd serve --listen=unix:PATH` until the idle timeout
// or a signal, then closes the registry (releasing every state file) and
// only then the socket's lock, so that a new daemon never waits on ours.
func serveDaemon(ctx context.Context, e *env, s *serve) int {
	path, err := cli.UnixPath("listen", s.listen)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentd serve: %v\n", err)
		return 2
	}
	if s.listenTimeout < 0 {
		fmt.Fprintf(e.stderr, "agentd serve: --listen.timeout must be 0 (never) or more, got %v\n", s.listenTimeout)
		return 2
	}
	d, err := daemon.Listen(daemon.Options{Path: path, IdleTimeout: s.listenTimeout, StateDir: e.stateDir, Version: agentdVersion(), Logger: e.log})
	if err != nil {
		fmt.Fprintf(e.stderr, "agentd serve: %v\n", err)
		return 1
	}
	defer d.Close()
	svc := service.New(e.storeOptions(s.t.etcd), service.Daemon)
	defer svc.Close()
	srv := lsp.NewServer(svc, agentdVersion(), e.log)
	defer srv.Close()
	if err := d.Serve(ctx, srv); err != nil {
		e.log.Error("daemon stopped", "err", err)
		return 1
	}
	return 0
}

// forward runs `agentd --remote=...`: the stdio forwarder. It never opens
// the state files.
func forward(ctx context.Context, e *env, t target) int {
	log, stdin, stdout, stderr := e.log, e.stdin, e.stdout, e.stderr
	path, explicit, err := cli.RemoteSocket(t.remote)
	if err != nil {
		fmt.Fprintf(stderr, "agentd: %v\n", err)
		return 2
	}
	terminalHint(stdin, stderr, "agentd --remote is an editor's connection to the shared agentd daemon; it now waits for LSP messages on stdin.\n"+
		"Editors start it for you (docs/shared-daemon.md). From a shell, try: agentd tool TodoList, agentd state, agentd --help. Press Ctrl-D to quit.\n")
	conn, info, err := dialShared(ctx, e, t, path, explicit)
	if err != nil {
		fmt.Fprintf(stderr, "agentd: %v\n", err)
		return 1
	}
	if info.Version != "" && info.Version != agentdVersion() {
		log.Warn("the shared daemon runs another agentd version than this one", "daemonVersion", info.Version, "version", agentdVersion(), "pid", info.Pid, "socket", path)
	}
	// A daemon that ends the connection before it answered (it was dying
	// or stopping when dialled) is replaced the way this one was reached.
	redial := func(ctx context.Context) (*net.UnixConn, error) {
		c, _, err := dialShared(ctx, e, t, path, explicit)
		return c, err
	}
	if stdin == os.Stdin && stdout == os.Stdout && daemon.Adoptable(os.Stdin) && daemon.Adoptable(os.Stdout) {
		// The daemon serves the editor's pipes itself (docs/shared-daemon.md, "Handoff").
		code, relay, err := daemon.Handoff(ctx, os.Stdin, os.Stdout, conn, redial, log)
		if relay == nil {
			return forwardEnd(code, err, path, info, stderr)
		}
		conn = relay
	}
	log.Debug("relaying to the shared daemon", "socket", path, "pid", info.Pid)
	in, restore := pollableStdin(stdin)
	defer restore()
	code, err := daemon.Forward(ctx, in, stdout, conn, redial, log)
	return forwardEnd(code, err, path, info, stderr)
}

// forwardEnd is the forwarder's exit code once daemon.Forward or
// daemon.Handoff returned code and err; err is said on stderr.
func forwardEnd(code int, err error, path string, info client.Info, stderr io.Writer) int {
	var silent *client.SilentError
	if errors.As(err, &silent) {
		fmt.Fprintf(stderr, "agentd: %v\n", silentDaemon(path, info, err))
		return 1
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentd: lost the shared daemon at %s: %v (its log: %s)\n", path, err, filepath.Join(filepath.Dir(path), "daemon.log"))
		return 1
	}
	return code
}

// dialShared connects to the shared daemon at path (cli.RemoteSocket of
// --remote), as the forwarder and `agentd mcp` do: cli.Daemon.Dial with
// this command line's daemon.
func dialShared(ctx context.Context, e *env, t target, path string, explicit bool) (*net.UnixConn, client.Info, error) {
	return e.daemon(t.etcd).Dial(ctx, path, explicit)
}

// daemon is how this command reaches the shared daemon: started, when
// none runs, as `agentd serve` by this executable with this command line's
// state dir, log and etcd flags (cli.Daemon).
func (e *env) daemon(etcd cli.Etcd) cli.Daemon {
	return cli.Daemon{StateDir: e.stateDir, LogLevel: e.globals.LogLevel, LogFile: e.globals.LogFile, Etcd: etcd.Args(),
		Version: agentdVersion(), Program: cli.Self, Logger: e.log}
}

// errDirect means no daemon serves the command: open the state directly.
var errDirect = errors.New("no shared daemon serves this state")

// viaDaemon runs one command through the shared daemon, when one answers on
// the socket of --remote (default: the auto socket, which must be in a
// private directory) and, for the auto socket, keeps its state in
// stateDir. It never starts a daemon. errDirect when none runs there (no
// socket directory, no socket, a stale one); a daemon named with
// --remote=unix:PATH must answer. Any other failure to reach the daemon
// (a socket directory that is not private, a daemon that does not answer)
// is an error: a daemon may be serving the state, and opening it behind
// its back would hide the change from its clients.
func viaDaemon(ctx context.Context, e *env, t target, folder string, id protocol.CommandID, args protocol.Args) (json.RawMessage, error) {
	log, stateDir := e.log, e.stateDir
	path, explicit, err := cli.RemoteSocket(t.remote)
	if err != nil {
		return nil, err
	}
	if !explicit {
		if err := client.SecureDir(filepath.Dir(path), false); errors.Is(err, fs.ErrNotExist) {
			return nil, errDirect
		} else if err != nil {
			return nil, fmt.Errorf("%w (a shared daemon may serve this state there, so the state is not opened directly)", err)
		}
	}
	conn, err := client.Dial(path)
	switch {
	case errors.Is(err, client.ErrNoDaemon) && !explicit:
		log.Debug("no shared daemon; opening the state directly", "socket", path, "err", err)
		return nil, errDirect
	case err != nil:
		return nil, fmt.Errorf("cannot reach the shared daemon at %s: %w", path, err)
	}
	info, infoErr := client.ReadInfo(path)
	if !explicit && infoErr == nil && info.StateDir != stateDir {
		conn.Close()
		log.Debug("the shared daemon keeps another state directory; opening the state directly", "daemon", info.StateDir, "pid", info.Pid)
		return nil, errDirect
	}
	raw, err := client.Call(ctx, conn, folder, t.session, id, args, client.DefaultCallWaits)
	if errors.Is(err, client.ErrNoDaemon) && !explicit {
		log.Debug("the shared daemon did not take the command; opening the state directly", "err", err)
		return nil, errDirect
	}
	var silent *client.SilentError
	if errors.As(err, &silent) {
		return nil, silentDaemon(path, info, err)
	}
	return raw, err
}

// silentDaemon is the error of a shell command or forwarder whose daemon
// at path, described by info (zero when unknown), accepted the connection
// but did not answer (err, a *client.SilentError): it names the daemon
// and says how to end it.
func silentDaemon(path string, info client.Info, err error) error {
	log := filepath.Join(filepath.Dir(path), "daemon.log")
	if info.Pid <= 0 {
		return fmt.Errorf("the shared daemon at %s does not answer: %w; end it and run the command again (its log: %s)", path, err, log)
	}
	return fmt.Errorf("the shared daemon at %s (pid %d) does not answer: %w; it is stopped or stuck: end it with `kill %d` (or resume it with `kill -CONT %d` if you stopped it), then run the command again (its log: %s)",
		path, info.Pid, err, info.Pid, info.Pid, log)
}

// resultOf decodes a command's JSON result into what the shell commands
// read, the same whichever way the command ran: protocol.ToolResult for
// agentd.callTool, protocol.ToolDescription for agentd.describeTool,
// protocol.CancelResult for agentd.goal.cancel, protocol.State for the
// other commands that answer State (docs/protocol.md §3), and
// plain JSON values (map[string]any) for the others.
func resultOf(id protocol.CommandID, raw json.RawMessage) (any, error) {
	switch {
	case id == protocol.CmdCallTool:
		return decodeAs[protocol.ToolResult](id, raw)
	case id == protocol.CmdDescribeTool:
		return decodeAs[protocol.ToolDescription](id, raw)
	case id == protocol.CmdGoalCancel:
		return decodeAs[protocol.CancelResult](id, raw)
	case id == protocol.CmdUndo:
		return decodeAs[protocol.UndoResult](id, raw)
	case id == protocol.CmdTeamAccept:
		return decodeAs[protocol.TeamAcceptResult](id, raw)
	case id == protocol.CmdHistory:
		return decodeAs[protocol.HistoryResult](id, raw)
	case id == protocol.CmdGoalRunCheck:
		return decodeAs[protocol.CheckResult](id, raw)
	case id == protocol.CmdState, id == protocol.CmdTodoSet, id == protocol.CmdAwaitChange, strings.HasPrefix(string(id), "agentd.goal."):
		return decodeAs[protocol.State](id, raw)
	}
	return decodeAs[any](id, raw)
}

func decodeAs[T any](id protocol.CommandID, raw json.RawMessage) (any, error) {
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("reading the result of %s: %w", id, err)
	}
	return v, nil
}
