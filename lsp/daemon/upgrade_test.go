package daemon_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd/agentd/lsp/daemon"
	"github.com/agentd/agentd/lsp/daemon/client"
)

func TestOlderVersion(t *testing.T) {
	for _, tc := range []struct {
		a, b  string
		older bool
	}{
		{"", "0.1.0", true}, // a daemon that records no version
		{"", "", false},
		{"0.1.0", "", false},
		{"0.1.0", "0.2.0", true},
		{"0.2.0", "0.1.0", false},
		{"0.1.0", "0.1.0", false},
		{"v0.1.0", "0.1.1", true},
		{"0.9.0", "0.10.0", true}, // numbers, not text
		{"1.2.3", "1.10.0", true},
		{"0.1.0-dev", "0.1.0", true}, // a prerelease precedes its release
		{"0.1.0", "0.1.0-dev", false},
		{"1.0.0-alpha", "1.0.0-alpha.1", true}, // semver.org §11's examples
		{"1.0.0-alpha.1", "1.0.0-alpha.beta", true},
		{"1.0.0-alpha.beta", "1.0.0-beta", true},
		{"1.0.0-beta.2", "1.0.0-beta.11", true},
		{"1.0.0-rc.1", "1.0.0", true},
		{"1.0.0+build.1", "1.0.0+build.2", false}, // build metadata is ignored
		{"v0.0.0-20240101000000-abcdef012345", "v0.0.0-20250101000000-012345abcdef", true}, // pseudo-versions
		{"devel", "0.1.0", false}, // no order known
		{"0.1.0", "devel", false},
		{"1.0", "1.0.1", false},
		{"1.0.0-", "1.0.1", false},
	} {
		if got := client.OlderVersion(tc.a, tc.b); got != tc.older {
			t.Errorf("OlderVersion(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.older)
		}
	}
}

// TestDialCurrentHandsOver: DialCurrent of a newer version makes the daemon
// of the same state dir hand over (its ready clients are told, Serve ends,
// the lock is free) and starts the new one; a daemon of the same or a newer
// version, or of another state dir, is used as it is.
func TestDialCurrentHandsOver(t *testing.T) {
	path := filepath.Join(shortDir(t), "d.sock")
	stateDir := filepath.Join(shortDir(t), "state")
	old := startDaemonWith(t, daemon.Options{Path: path, StateDir: stateDir, Version: "0.1.0"})
	folder := shortDir(t)
	c := dialClient(t, path)
	c.initialize(folder)
	c.writeTodos(folder, "kept")

	starts := 0
	start := func(version string) client.StartFunc {
		return func() (<-chan error, error) {
			starts++
			startDaemonWith(t, daemon.Options{Path: path, StateDir: stateDir, Version: version})
			return nil, nil
		}
	}
	for _, tc := range []struct{ version, stateDir string }{{"0.1.0", stateDir}, {"0.0.9", stateDir}, {"0.2.0", "/elsewhere"}} {
		conn, err := client.DialCurrent(context.Background(), path, tc.version, tc.stateDir, start(tc.version), nil)
		if err != nil {
			t.Fatal(err)
		}
		conn.Close()
		if info, _ := client.ReadInfo(path); starts != 0 || info.Version != "0.1.0" {
			t.Fatalf("DialCurrent of %s (state %s) replaced the daemon of 0.1.0 (now %q)", tc.version, tc.stateDir, info.Version)
		}
	}

	conn, err := client.DialCurrent(context.Background(), path, "0.2.0", stateDir, start("0.2.0"), nil)
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if err := old.wait(); err != nil {
		t.Fatalf("the old daemon's Serve: %v", err)
	}
	if info, err := client.ReadInfo(path); err != nil || starts != 1 || info.Version != "0.2.0" {
		t.Fatalf("after the handover: %d starts, %+v %v; want the daemon of 0.2.0", starts, info, err)
	}
	c.await("window/showMessage", func(params json.RawMessage) bool {
		var p struct{ Message string }
		return json.Unmarshal(params, &p) == nil && strings.Contains(p.Message, "agentd 0.2.0 replaces this shared daemon (agentd 0.1.0)")
	})
	n := dialClient(t, path)
	n.initialize(folder)
	var st struct {
		Todos struct{ Items []struct{ Title string } }
	}
	if err := n.exec("agentd.state", map[string]any{}, &st); err != nil || len(st.Todos.Items) != 1 || st.Todos.Items[0].Title != "kept" {
		t.Fatalf("state through the new daemon: %+v %v", st, err)
	}
}
