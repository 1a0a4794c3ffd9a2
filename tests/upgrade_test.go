package tests

// End-to-end tests of upgrades and odd runtime dirs (docs/shared-daemon.md,
// "Upgrades", "Where the socket lives"): a forwarder of a newer agentd
// replaces an older daemon and keeps the state; daemons and forwarders of
// different versions say so; a runtime dir too long for a socket address
// works; shell commands never bypass a daemon they cannot reach.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// versionedBins are agentd binaries built with -X main.version, the way a
// release sets its version, once per test run.
var versionedBins sync.Map // version → func() (string, error)

func versionedBin(t *testing.T, version string) string {
	t.Helper()
	build, _ := versionedBins.LoadOrStore(version, sync.OnceValues(func() (string, error) {
		bin := filepath.Join(filepath.Dir(agentdBin), "agentd-"+version) // removed with agentdBin by TestMain
		out, err := exec.Command("go", "build", "-ldflags=-X main.version="+version, "-o", bin, "../cmd/agentd").CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("go build agentd %s: %v: %s", version, err, out)
		}
		return bin, nil
	}))
	bin, err := build.(func() (string, error))()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// install puts a copy of bin at path the way package managers do (a new
// file renamed over the old one, which running processes keep), and makes
// the env run it.
func (e *env) install(bin, path string) {
	e.t.Helper()
	data, err := os.ReadFile(bin)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(path), 0o755)
	}
	if err != nil {
		e.t.Fatal(err)
	}
	writeExecutable(e.t, path+".new", data)
	if err := os.Rename(path+".new", path); err != nil {
		e.t.Fatal(err)
	}
	e.bin = path
}

// serverVersion is serverInfo.version of an initialize result.
func serverVersion(res map[string]any) string {
	info, _ := res["serverInfo"].(map[string]any)
	v, _ := info["version"].(string)
	return v
}

// TestDaemonUpgrade: with a daemon of agentd 0.1.0 serving an editor in the
// middle of a goal-driven turn, agentd is upgraded to 0.2.0 in place and a
// new editor starts `agentd --remote=auto`: it reaches a daemon of 0.2.0
// with every acknowledged write, the old editor is told and its forwarder
// ends (its turn paused as on a disconnect), and no old daemon is left. A
// daemon that records no version (older than the records) is replaced
// too. A forwarder older than the daemon uses it and says so.
func TestDaemonUpgrade(t *testing.T) {
	t.Parallel()
	oldBin, newBin := versionedBin(t, "0.1.0"), versionedBin(t, "0.2.0")
	for _, unversioned := range []bool{false, true} {
		t.Run(map[bool]string{false: "handover", true: "daemon without a version record"}[unversioned], func(t *testing.T) {
			e := newEnv(t)
			installed := filepath.Join(filepath.Dir(e.stateDir), "bin", "agentd")
			e.install(oldBin, installed)
			pa, a := e.forwarder()
			if v := serverVersion(a.Initialize(nil, e.ws)); v != "0.1.0" {
				t.Fatalf("serverInfo.version of the old daemon: %q", v)
			}
			a.tool("TodoList", map[string]any{"todos": []item{{"acknowledged", "in_progress"}}})
			liveGoalTurn(t, a)
			old := e.oneDaemon()
			if stdin := fdTarget(t, pa.Cmd.Process.Pid, 0); !holds(old, stdin) { // the handoff (docs/shared-daemon.md)
				t.Fatalf("the old daemon does not serve the old forwarder's stdin %s itself", stdin)
			}
			if unversioned { // as a daemon of agentd before version records wrote it
				lock := e.socketPath() + ".lock"
				data, err := os.ReadFile(lock)
				var info map[string]any
				if err != nil || json.Unmarshal(data, &info) != nil || info["version"] != "0.1.0" {
					t.Fatalf("%s: %s (%v), want a record with version 0.1.0", lock, data, err)
				}
				delete(info, "version")
				if data, err = json.Marshal(info); err != nil || os.WriteFile(lock, data, 0o600) != nil {
					t.Fatalf("rewriting %s: %v", lock, err)
				}
			}

			e.install(newBin, installed)
			pb, b := e.forwarder()
			if v := serverVersion(b.Initialize(nil, e.ws)); v != "0.2.0" {
				t.Fatalf("serverInfo.version after the upgrade: %q, want 0.2.0; forwarder stderr:\n%s", v, pb.Stderr.String())
			}
			// Written before it relays anything, but copied by a goroutine
			// of this process: wait for the copy (as "older forwarder" does).
			waitFor(t, "the new forwarder to say it replaces the daemon", func() bool { return strings.Contains(pb.Stderr.String(), "replacing it") })
			if msg := pb.Stderr.String(); strings.Contains(msg, "not replaced") {
				t.Errorf("the new forwarder says it failed to replace the daemon:\n%s", msg)
			}
			if !unversioned {
				msg := string(a.Await("window/showMessage", func(raw json.RawMessage) bool {
					return strings.Contains(string(raw), "agentd 0.2.0 replaces this shared daemon")
				}))
				if !strings.Contains(msg, "agentd 0.1.0") {
					t.Errorf("the old editor's message %s does not name the old version", msg)
				}
			}
			wantExit(t, pa, 1)
			if !waitGone(old, waitLimit) {
				t.Fatalf("the old daemon (pid %d) still runs", old)
			}
			pid := e.oneDaemon()
			if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); exe != installed {
				t.Errorf("the daemon runs %q, want the upgraded %s", exe, installed)
			}
			st := b.state()
			if st.Todos.Revision != 1 || len(st.Todos.Items) != 1 || st.Todos.Items[0].Title != "acknowledged" {
				t.Fatalf("todo list after the upgrade = %+v, want the acknowledged write", st.Todos)
			}
			if g := b.goal(); g == nil || g.Status != "paused" || !strings.Contains(g.TerminalReason, "connection") {
				t.Fatalf("goal after the upgrade: %+v, want paused because the connection closed mid-turn", g)
			}
		})
	}
	t.Run("older forwarder", func(t *testing.T) {
		e := newEnv(t)
		e.bin = newBin
		_, a := e.forwarder()
		a.Initialize(nil, e.ws)
		daemon := e.oneDaemon()
		e.bin = oldBin
		pb, b := e.forwarder()
		if v := serverVersion(b.Initialize(nil, e.ws)); v != "0.2.0" {
			t.Fatalf("the older forwarder reached a daemon of %q, want the running 0.2.0", v)
		}
		if pid := e.oneDaemon(); pid != daemon {
			t.Fatalf("the older forwarder replaced the newer daemon (pid %d → %d)", daemon, pid)
		}
		// The forwarder writes the warning before it relays anything, but
		// this process copies its stderr on a goroutine of its own: wait
		// for the copy, not for the forwarder.
		says := func() bool {
			msg := pb.Stderr.String()
			return strings.Contains(msg, "another agentd version") && strings.Contains(msg, "daemonVersion=0.2.0") && strings.Contains(msg, "version=0.1.0")
		}
		waitFor(t, "the older forwarder to say the versions differ on its stderr", says)
		b.tool("TodoList", map[string]any{"todos": []item{{"through the newer daemon", "pending"}}})
		a.awaitTodo(e.ws, "through the newer daemon")
	})
}

// TestLongRuntimeDir: an XDG_RUNTIME_DIR so long that the socket path does
// not fit a Unix socket address still gets a working shared daemon there,
// and shell commands go through it.
func TestLongRuntimeDir(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.runDir = filepath.Join(e.runDir, strings.Repeat("long-runtime-dir-", 8))
	if err := os.MkdirAll(e.runDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if n := len(e.socketPath()); n <= 108 {
		t.Fatalf("the socket path is %d bytes, want more than a socket address holds", n)
	}
	pa, a := e.forwarder()
	a.Initialize(nil, e.ws)
	e.oneDaemon()
	if fi, err := os.Lstat(e.socketPath()); err != nil || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("no socket at %s: %v; forwarder stderr:\n%s", e.socketPath(), err, pa.Stderr.String())
	}
	if _, errOut, code := e.cli("tool", "TodoList", `{"todos":[{"title":"from shell","status":"pending"}]}`, "--workspace", e.ws); code != 0 {
		t.Fatalf("agentd tool: %d %s", code, errOut)
	}
	a.awaitTodo(e.ws, "from shell") // it went through the daemon
}

// TestShellNeverBypassesDaemon: when a daemon may serve the state but
// cannot be used (here: its socket directory is no longer private), a shell
// command says so and changes nothing, rather than opening the state
// behind the daemon's back.
func TestShellNeverBypassesDaemon(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	other := filepath.Join(filepath.Dir(e.ws), "other")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	_, a := e.forwarder()
	a.Initialize(nil, e.ws)
	dir := filepath.Dir(e.socketPath())
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := e.cli("tool", "TodoList", `{"todos":[{"title":"behind its back","status":"pending"}]}`, "--workspace", other)
	if code != 1 || !strings.Contains(errOut, "mode 0755") || !strings.Contains(errOut, "not opened directly") {
		t.Fatalf("agentd tool with the socket dir at 0755: code %d, stderr %q; want 1 and why the state is not opened", code, errOut)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := e.cli("state", "--json", "--workspace", other)
	var st state
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Revision != 0 {
		t.Fatalf("state of the other folder: code %d, %q %q; want nothing written", code, out, errOut)
	}
}
