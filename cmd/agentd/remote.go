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
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/agentd/agentd/commands"
	"github.com/agentd/agentd/lsp"
	"github.com/agentd/agentd/lsp/daemon"
	"github.com/agentd/agentd/service"
)

// unixPath parses the value of --listen or --remote=unix:PATH.
func unixPath(flag, value string) (string, error) {
	path, ok := strings.CutPrefix(value, "unix:")
	if !ok || path == "" {
		return "", fmt.Errorf("--%s=%s: use unix:PATH", flag, value)
	}
	return filepath.Abs(path)
}

// remoteSocket resolves --remote: "" or "auto" is the auto socket,
// unix:PATH an explicit one.
func remoteSocket(value string) (path string, explicit bool, err error) {
	if value == "" || value == "auto" {
		return daemon.AutoSocketPath(), false, nil
	}
	path, err = unixPath("remote", value)
	if err != nil {
		return "", false, fmt.Errorf("--remote=%s: use auto or unix:PATH", value)
	}
	return path, true, nil
}

// serveDaemon runs `agentd serve --listen=unix:PATH` until the idle timeout
// or a signal, then closes the registry (releasing every state file) and
// only then the socket's lock, so that a new daemon never waits on ours.
func serveDaemon(ctx context.Context, o options, stateDir string, log *slog.Logger, stderr io.Writer) int {
	path, err := unixPath("listen", o.listen)
	if err != nil {
		fmt.Fprintf(stderr, "agentd serve: %v\n", err)
		return 2
	}
	if o.listenTimeout < 0 {
		fmt.Fprintf(stderr, "agentd serve: --listen.timeout must be 0 (never) or more, got %v\n", o.listenTimeout)
		return 2
	}
	d, err := daemon.Listen(daemon.Options{Path: path, IdleTimeout: o.listenTimeout, StateDir: stateDir, Version: agentdVersion(), Logger: log})
	if err != nil {
		fmt.Fprintf(stderr, "agentd serve: %v\n", err)
		return 1
	}
	defer d.Close()
	svc := service.New(o.storeOptions(stateDir, log), service.Daemon)
	defer svc.Close()
	srv := lsp.NewServer(svc, agentdVersion(), log)
	defer srv.Close()
	if err := d.Serve(ctx, srv); err != nil {
		log.Error("daemon stopped", "err", err)
		return 1
	}
	return 0
}

// forward runs `agentd --remote=...`: the stdio forwarder. It never opens
// the state files.
func forward(ctx context.Context, o options, stateDir string, log *slog.Logger, stdin io.Reader, stdout, stderr io.Writer) int {
	path, explicit, err := remoteSocket(o.remote)
	if err != nil {
		fmt.Fprintf(stderr, "agentd: %v\n", err)
		return 2
	}
	terminalHint(stdin, stderr, "agentd --remote is an editor's connection to the shared agentd daemon; it now waits for LSP messages on stdin.\n"+
		"Editors start it for you (docs/shared-daemon.md). From a shell, try: agentd tool TodoList, agentd state, agentd --help. Press Ctrl-D to quit.\n")
	conn, info, err := dialShared(ctx, o, path, explicit, stateDir, log)
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
		c, _, err := dialShared(ctx, o, path, explicit, stateDir, log)
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
func forwardEnd(code int, err error, path string, info daemon.Info, stderr io.Writer) int {
	var silent *daemon.SilentError
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

// dialShared connects to the shared daemon at path (remoteSocket of
// --remote), as the forwarder and `agentd mcp` do: a socket named with
// unix:PATH (explicit) must answer; for the auto socket, whose directory
// must be private, a daemon is started when none runs, an older one is
// replaced (daemon.DialCurrent), and it must keep its state in stateDir. Every error says what to do.
func dialShared(ctx context.Context, o options, path string, explicit bool, stateDir string, log *slog.Logger) (*net.UnixConn, daemon.Info, error) {
	var conn *net.UnixConn
	var err error
	if explicit {
		conn, err = daemon.Dial(path)
		if errors.Is(err, daemon.ErrNoDaemon) {
			err = fmt.Errorf("%w; start one with `agentd serve --listen=unix:%s`, or use --remote=auto", err, path)
		}
	} else {
		if err := daemon.SecureDir(filepath.Dir(path), true); err != nil {
			return nil, daemon.Info{}, err
		}
		conn, err = daemon.DialCurrent(ctx, path, agentdVersion(), stateDir, startDaemon(o, path, stateDir), log)
	}
	if err != nil {
		return nil, daemon.Info{}, fmt.Errorf("cannot reach the shared daemon at %s: %w", path, err)
	}
	info, infoErr := daemon.ReadInfo(path)
	if !explicit && infoErr == nil && info.StateDir != stateDir {
		conn.Close()
		return nil, info, fmt.Errorf("the shared daemon at %s (pid %d) keeps its state in %s, not in %s: stop it (kill %d) or use the same --state-dir",
			path, info.Pid, info.StateDir, stateDir, info.Pid)
	}
	return conn, info, nil
}

// startDaemon starts `agentd serve` on the auto socket, detached: its own
// session, stdin and stdout on /dev/null, stderr appended to daemon.log in
// the socket's directory, no other descriptor of the forwarder's, and the
// forwarder's state dir, log and etcd flags.
func startDaemon(o options, path, stateDir string) daemon.StartFunc {
	return func() (<-chan error, error) {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		if err := closeInheritedOnExec(); err != nil {
			return nil, err
		}
		args := []string{"serve", "--listen=unix:" + path, "--listen.timeout=" + daemon.DefaultIdleTimeout.String(),
			"--state-dir", stateDir, "--log-level", o.logLevel}
		args = append(args, o.etcdFlags()...)
		if o.logFile != "" {
			logFile, err := filepath.Abs(o.logFile)
			if err != nil {
				return nil, err
			}
			args = append(args, "--log-file", logFile)
		}
		logf, err := os.OpenFile(filepath.Join(filepath.Dir(path), "daemon.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, err
		}
		defer logf.Close()
		null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			return nil, err
		}
		defer null.Close()
		cmd := exec.Command(exe, args...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = null, null, logf
		cmd.Dir = "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		return exited, nil
	}
}

// closeInheritedOnExec marks every descriptor above stderr close-on-exec
// (Go opens its own so; those this process inherited may not be), so that
// a process started next inherits none of them. A pipe the forwarder's
// caller waits on, such as the output of `$(… | agentd --remote=auto)`
// passed on as another descriptor, then ends when the forwarder does, not
// when the daemon does.
func closeInheritedOnExec() error {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("cannot list the open descriptors: %w", err)
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
	return nil
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
func viaDaemon(ctx context.Context, o options, stateDir string, log *slog.Logger, folder, id string, args map[string]any) (json.RawMessage, error) {
	path, explicit, err := remoteSocket(o.remote)
	if err != nil {
		return nil, err
	}
	if !explicit {
		if err := daemon.SecureDir(filepath.Dir(path), false); errors.Is(err, fs.ErrNotExist) {
			return nil, errDirect
		} else if err != nil {
			return nil, fmt.Errorf("%w (a shared daemon may serve this state there, so the state is not opened directly)", err)
		}
	}
	conn, err := daemon.Dial(path)
	switch {
	case errors.Is(err, daemon.ErrNoDaemon) && !explicit:
		log.Debug("no shared daemon; opening the state directly", "socket", path, "err", err)
		return nil, errDirect
	case err != nil:
		return nil, fmt.Errorf("cannot reach the shared daemon at %s: %w", path, err)
	}
	info, infoErr := daemon.ReadInfo(path)
	if !explicit && infoErr == nil && info.StateDir != stateDir {
		conn.Close()
		log.Debug("the shared daemon keeps another state directory; opening the state directly", "daemon", info.StateDir, "pid", info.Pid)
		return nil, errDirect
	}
	raw, err := daemon.Call(ctx, conn, folder, o.session, id, args, daemon.DefaultCallWaits)
	if errors.Is(err, daemon.ErrNoDaemon) && !explicit {
		log.Debug("the shared daemon did not take the command; opening the state directly", "err", err)
		return nil, errDirect
	}
	var silent *daemon.SilentError
	if errors.As(err, &silent) {
		return nil, silentDaemon(path, info, err)
	}
	return raw, err
}

// silentDaemon is the error of a shell command or forwarder whose daemon
// at path, described by info (zero when unknown), accepted the connection
// but did not answer (err, a *daemon.SilentError): it names the daemon
// and says how to end it.
func silentDaemon(path string, info daemon.Info, err error) error {
	log := filepath.Join(filepath.Dir(path), "daemon.log")
	if info.Pid <= 0 {
		return fmt.Errorf("the shared daemon at %s does not answer: %w; end it and run the command again (its log: %s)", path, err, log)
	}
	return fmt.Errorf("the shared daemon at %s (pid %d) does not answer: %w; it is stopped or stuck: end it with `kill %d` (or resume it with `kill -CONT %d` if you stopped it), then run the command again (its log: %s)",
		path, info.Pid, err, info.Pid, info.Pid, log)
}

// resultOf decodes a command's JSON result into what the shell commands
// read, the same whichever way the command ran: commands.ToolResult for
// agentd.callTool, commands.ToolDescription for agentd.describeTool,
// commands.CancelResult for agentd.goal.cancel, commands.State for the
// other commands that answer State (docs/protocol.md §3), and
// plain JSON values (map[string]any) for the others.
func resultOf(id string, raw json.RawMessage) (any, error) {
	switch {
	case id == "agentd.callTool":
		return decodeAs[commands.ToolResult](id, raw)
	case id == "agentd.describeTool":
		return decodeAs[commands.ToolDescription](id, raw)
	case id == "agentd.goal.cancel":
		return decodeAs[commands.CancelResult](id, raw)
	case id == "agentd.undo":
		return decodeAs[commands.UndoResult](id, raw)
	case id == "agentd.goal.runCheck":
		return decodeAs[commands.CheckResult](id, raw)
	case id == "agentd.state", id == "agentd.todo.set", id == "agentd.awaitChange", strings.HasPrefix(id, "agentd.goal."):
		return decodeAs[commands.State](id, raw)
	}
	return decodeAs[any](id, raw)
}

func decodeAs[T any](id string, raw json.RawMessage) (any, error) {
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("reading the result of %s: %w", id, err)
	}
	return v, nil
}
