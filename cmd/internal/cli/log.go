package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/agentd/agentd/lsp/daemon/client"
	"github.com/agentd/agentd/workspace/wsfolder"
)

// ErrLogFile is in the error of OpenLog when --log-file cannot be opened
// (a missing folder, no permission): the environment's fault, not the
// command line's, which a hook does not let block the agent (HookNotHandled).
var ErrLogFile = errors.New("--log-file")

// OpenLog is the logger of program name (agentd, agentd-hook: the one
// the user ran, which the log's own notices name) on --log-file (appended
// to; "" is stderr) at --log-level (debug, info, warn or error), written
// through a logSink, and the func that flushes and closes it. Logs never
// go to stdout. A file that cannot be opened is an error wrapping
// ErrLogFile.
func OpenLog(name, logFile, logLevel string, stderr io.Writer) (*slog.Logger, func(), error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(logLevel)); err != nil {
		return nil, nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", logLevel)
	}
	w, closeFile := stderr, func() {}
	if logFile != "" {
		f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v", ErrLogFile, err)
		}
		w, closeFile = f, func() { f.Close() }
	}
	sink := newLogSink(name, w)
	closeFn := func() {
		sink.Close()
		closeFile()
	}
	return slog.New(slog.NewTextHandler(sink, &slog.HandlerOptions{Level: level})), closeFn, nil
}

// ResolveStateDir applies docs/protocol.md §1: --state-dir, else
// $XDG_STATE_HOME/agentd, else the state dir of the user's daemon when one
// runs on the auto socket (client.RunningStateDir: an agent that passes
// its MCP server or hooks no XDG_STATE_HOME must not split the user's
// state, docs/shared-daemon.md), else the platform's folder for it
// (platformStateDir: ~/.local/state/agentd on Linux).
func ResolveStateDir(flagValue string) (string, error) {
	if flagValue != "" {
		return filepath.Abs(flagValue)
	}
	if x := os.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "agentd"), nil
	}
	if dir := client.RunningStateDir(); dir != "" {
		return dir, nil
	}
	dir, err := platformStateDir()
	if err != nil {
		return "", fmt.Errorf("no state directory: set --state-dir or XDG_STATE_HOME (%v)", err)
	}
	return dir, nil
}

// Version is agentd's version: stamp (a program's main.version, set at
// build time with -ldflags "-X main.version=..."; docs/shared-daemon.md)
// when set, else the module version from the build info, else 0.1.0-dev.
// Both programs report the same, so that agentd-hook never takes the
// daemon that agentd started for an older one (client.DialCurrent).
func Version(stamp string) string {
	if stamp != "" {
		return stamp
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "0.1.0-dev"
}

// WorkspaceFolder is the folder a command works on: --workspace (value)
// when given, which must be a folder, else the one wsfolder.FindFolder
// finds from the current folder (the rule of docs/protocol.md §1.3).
func WorkspaceFolder(value, stateDir string) (string, error) {
	if value == "" {
		return wsfolder.FindFolder(stateDir, ".")
	}
	abs, err := filepath.Abs(value)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("--workspace %s is not a folder", value)
	}
	return abs, nil
}
