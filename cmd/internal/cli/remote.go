package cli

// The shell side of the shared daemon (docs/protocol.md §1): which socket
// --remote names, and dialing it the way the forwarder, `agentd mcp` and
// `agentd hook` do, starting `agentd serve` on the auto socket when no
// daemon runs there.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agentd/agentd/lsp/daemon/client"
)

// UnixPath parses the value of --listen or --remote=unix:PATH.
func UnixPath(flag, value string) (string, error) {
	path, ok := strings.CutPrefix(value, "unix:")
	if !ok || path == "" {
		return "", fmt.Errorf("--%s=%s: use unix:PATH", flag, value)
	}
	return filepath.Abs(path)
}

// RemoteSocket resolves --remote: "" or "auto" is the auto socket,
// unix:PATH an explicit one.
func RemoteSocket(value string) (path string, explicit bool, err error) {
	if value == "" || value == "auto" {
		return client.AutoSocketPath(), false, nil
	}
	path, err = UnixPath("remote", value)
	if err != nil {
		return "", false, fmt.Errorf("--remote=%s: use auto or unix:PATH", value)
	}
	return path, true, nil
}

// Daemon is how this process reaches the shared daemon, and the `agentd
// serve` it starts when none runs on the auto socket.
type Daemon struct {
	StateDir string   // the state directory (ResolveStateDir): the daemon must keep its state there
	LogLevel string   // --log-level, passed on to a daemon this process starts
	LogFile  string   // --log-file ("" for none), passed on as an absolute path
	Etcd     []string // the etcd flags given (--etcd-endpoints=URL, ...), passed on
	Version  string   // this agentd's version (Version): an older daemon is replaced
	// Program is the agentd executable a started daemon runs: Self for
	// agentd, Beside for agentd-hook, which never serves.
	Program func() (string, error)
	Logger  *slog.Logger
}

// Self is the running executable (os.Executable), for agentd.
func Self() (string, error) { return os.Executable() }

// Beside is the agentd executable in the folder of the running one, for
// agentd-hook; its error names the path that is missing, or not
// executable.
func Beside() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	agentd := filepath.Join(filepath.Dir(exe), agentdProgram)
	fi, err := os.Stat(agentd)
	switch {
	case err != nil || !fi.Mode().IsRegular():
		return "", fmt.Errorf("%s starts the shared daemon with the agentd beside it, and there is no agentd program at %s: install both in one folder (README, Install)", filepath.Base(exe), agentd)
	case !executable(fi):
		return "", fmt.Errorf("%s starts the shared daemon with the agentd beside it, and %s is not executable (mode %v): chmod +x it", filepath.Base(exe), agentd, fi.Mode().Perm())
	}
	return agentd, nil
}

// Dial connects to the shared daemon at path (RemoteSocket of --remote), as
// the forwarder, `agentd mcp` and `agentd hook` do: a socket named with
// unix:PATH (explicit) must answer; for the auto socket, whose directory
// must be private, a daemon is started when none runs, an older one is
// replaced (client.DialCurrent), and it must keep its state in d.StateDir.
// Every error says what to do.
func (d Daemon) Dial(ctx context.Context, path string, explicit bool) (*net.UnixConn, client.Info, error) {
	var conn *net.UnixConn
	var err error
	if explicit {
		conn, err = client.Dial(path)
		if errors.Is(err, client.ErrNoDaemon) {
			err = fmt.Errorf("%w; start one with `agentd serve --listen=unix:%s`, or use --remote=auto", err, path)
		}
	} else {
		if err := client.SecureDir(filepath.Dir(path), true); err != nil {
			return nil, client.Info{}, err
		}
		conn, err = client.DialCurrent(ctx, path, d.Version, d.StateDir, d.start(path), d.Logger)
	}
	if err != nil {
		return nil, client.Info{}, fmt.Errorf("cannot reach the shared daemon at %s: %w", path, err)
	}
	info, infoErr := client.ReadInfo(path)
	if !explicit && infoErr == nil && info.StateDir != d.StateDir {
		conn.Close()
		return nil, info, fmt.Errorf("the shared daemon at %s (pid %d) keeps its state in %s, not in %s: stop it (kill %d) or use the same --state-dir",
			path, info.Pid, info.StateDir, d.StateDir, info.Pid)
	}
	return conn, info, nil
}

// start starts `agentd serve` (d.Program) on the auto socket, detached: its
// own session, stdin and stdout on /dev/null, stderr appended to daemon.log
// in the socket's directory, no other descriptor of this process's, and
// this process's state dir, log and etcd flags.
func (d Daemon) start(path string) client.StartFunc {
	return func() (<-chan error, error) {
		exe, err := d.Program()
		if err != nil {
			return nil, err
		}
		if err := closeInheritedOnExec(); err != nil {
			return nil, err
		}
		args := []string{"serve", "--listen=unix:" + path, "--listen.timeout=" + client.DefaultIdleTimeout.String(),
			"--state-dir", d.StateDir, "--log-level", d.LogLevel}
		args = append(args, d.Etcd...)
		if d.LogFile != "" {
			logFile, err := filepath.Abs(d.LogFile)
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
		cmd, err := startDetached(func() *exec.Cmd {
			cmd := exec.Command(exe, args...)
			cmd.Stdin, cmd.Stdout, cmd.Stderr = null, null, logf
			cmd.Dir = "/"
			return cmd
		})
		if err != nil {
			return nil, err
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		return exited, nil
	}
}
