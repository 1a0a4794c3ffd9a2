package client

// This file is the client side of the upgrade of the shared daemon
// (docs/shared-daemon.md, "Upgrades"): a forwarder of a newer agentd replaces
// a daemon of an older one (DialCurrent), which hands over on request
// (agentd/handover, served by package daemon).

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentd/agentd/lsp/jsonrpc"
)

// HandoverMethod is the request a forwarder of a newer agentd sends, on a
// fresh connection (before initialize), to the daemon it replaces. The
// daemon answers null, then stops.
const HandoverMethod = "agentd/handover"

// HandoverParams are the params of agentd/handover.
type HandoverParams struct {
	Version string `json:"version"` // the newer agentd's version
	Pid     int    `json:"pid"`     // the forwarder's pid
}

// handoverWait bounds how long a forwarder waits for the daemon it
// replaces to release its lock (it first finishes its connections, at most
// about 2 s, and closes its state files).
const handoverWait = 10 * time.Second

// DialCurrent is DialOrStart for a forwarder of agentd version that keeps
// its state in stateDir. When the daemon that answers keeps its state there
// too but runs an older agentd (OlderVersion; one that records no version
// predates the records and is older), it is replaced: asked to hand over
// (agentd/handover, or SIGTERM for a daemon that predates that request),
// waited for (at most 10 s) until it has released PATH.lock, by when it has
// ended its connections as on a disconnect and closed every state file,
// and then a daemon is started with start in its place. Forwarders doing so
// at once take turns on daemon.lock. A daemon of the same, a newer or an
// incomparable version is used as it is; so is one that did not hand over
// (logged).
func DialCurrent(ctx context.Context, path, version, stateDir string, start StartFunc, log *slog.Logger) (*net.UnixConn, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	replace := func() bool {
		info, err := ReadInfo(path)
		return err == nil && info.StateDir == stateDir && OlderVersion(info.Version, version)
	}
	c, err := DialOrStart(ctx, path, start)
	if err != nil || !replace() {
		return c, err
	}
	c.Close()
	unlock, err := LockFile(ctx, filepath.Join(filepath.Dir(path), SpawnLockName), handoverWait+2*startWait)
	if err != nil {
		return nil, err
	}
	defer unlock()
	c, err = Dial(path)
	switch {
	case errors.Is(err, ErrNoDaemon):
		return dialOrStartLocked(ctx, path, start)
	case err != nil || !replace(): // or another forwarder replaced it meanwhile
		return c, err
	}
	info, _ := ReadInfo(path)
	log.Info("the shared daemon runs an older agentd: replacing it", "pid", info.Pid, "daemonVersion", info.Version, "version", version)
	if err := handOver(ctx, c, path, info, version); err != nil {
		log.Warn("the shared daemon was not replaced", "pid", info.Pid, "daemonVersion", info.Version, "err", err)
	}
	return dialOrStartLocked(ctx, path, start)
}

// handOver asks the daemon on c, described by info, to hand over to version,
// and waits until it has released path's lock. It closes c.
func handOver(ctx context.Context, c *net.UnixConn, path string, info Info, version string) error {
	defer c.Close()
	_, pid, err := PeerCred(c)
	if err != nil {
		return err
	}
	if pid != info.Pid { // never signal a pid the socket does not vouch for
		return fmt.Errorf("the socket's daemon is pid %d, but %s.lock names pid %d", pid, path, info.Pid)
	}
	if info.Version == "" {
		err = terminate(pid) // it ends in order on SIGTERM
	} else {
		err = askHandover(ctx, c, version)
	}
	if err != nil {
		return err
	}
	f, err := WaitFlock(ctx, path+".lock", handoverWait, nil)
	if errors.Is(err, ErrLockHeld) {
		return fmt.Errorf("it did not end within %v", handoverWait)
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// askHandover sends agentd/handover on c and waits for the answer.
func askHandover(ctx context.Context, c *net.UnixConn, version string) error {
	ctx, cancel := context.WithTimeout(ctx, startWait)
	defer cancel()
	rpc := jsonrpc.NewConn(c, func(*jsonrpc.Request) (jsonrpc.Handler, bool) { return jsonrpc.Ignore, true }, jsonrpc.Options{})
	runDone := make(chan struct{})
	go func() {
		rpc.Run(ctx)
		close(runDone)
	}()
	defer func() {
		rpc.Close()
		<-runDone
	}()
	if _, err := rpc.Call(ctx, HandoverMethod, HandoverParams{Version: version, Pid: os.Getpid()}); err != nil {
		return fmt.Errorf("%s: %w", HandoverMethod, err)
	}
	return nil
}

// OlderVersion reports whether agentd version a is older than version b.
// Versions compare as semantic versions ("0.2.0", "v1.0.0-rc.1", a Go
// pseudo-version; a leading "v" and "+build" metadata are ignored). ""
// (a daemon that predates version records) is older than any other
// version. When a or b is not a semantic version their order is unknown,
// and OlderVersion is false.
func OlderVersion(a, b string) bool {
	if a == "" || b == "" {
		return a == "" && b != ""
	}
	va, okA := parseVersion(a)
	vb, okB := parseVersion(b)
	return okA && okB && compareVersions(va, vb) < 0
}

// semver is a parsed semantic version.
type semver struct {
	core [3]uint64
	pre  []string // prerelease identifiers; none for a release
}

func parseVersion(s string) (semver, bool) {
	var v semver
	s, _, _ = strings.Cut(strings.TrimPrefix(s, "v"), "+")
	core, pre, hasPre := strings.Cut(s, "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return v, false
		}
		v.core[i] = n
	}
	if hasPre {
		v.pre = strings.Split(pre, ".")
		for _, id := range v.pre {
			if id == "" {
				return v, false
			}
		}
	}
	return v, true
}

// compareVersions orders versions as semver.org §11 does.
func compareVersions(a, b semver) int {
	for i := range a.core {
		if c := cmp.Compare(a.core[i], b.core[i]); c != 0 {
			return c
		}
	}
	if len(a.pre) == 0 || len(b.pre) == 0 { // a release follows its prereleases
		return cmp.Compare(len(b.pre), len(a.pre))
	}
	for i := 0; i < len(a.pre) && i < len(b.pre); i++ {
		x, errX := strconv.ParseUint(a.pre[i], 10, 64)
		y, errY := strconv.ParseUint(b.pre[i], 10, 64)
		var c int
		switch {
		case errX == nil && errY == nil:
			c = cmp.Compare(x, y)
		case errX == nil: // numeric identifiers come first
			c = -1
		case errY == nil:
			c = 1
		default:
			c = strings.Compare(a.pre[i], b.pre[i])
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a.pre), len(b.pre))
}
