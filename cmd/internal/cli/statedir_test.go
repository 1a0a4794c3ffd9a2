package cli

import (
	"path/filepath"
	"runtime"
	"testing"
)

// TestResolveStateDirPlatform: without --state-dir, XDG_STATE_HOME wins
// on every system, and without it the state is where the system keeps
// programs' data (docs/platforms.md, "Where agentd keeps its files"). It
// runs here on Linux and is built for the others by tests/run.sh.
func TestResolveStateDirPlatform(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home)
	t.Setenv("LocalAppData", filepath.Join(home, "AppData", "Local"))
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir()) // no daemon runs on this auto socket
	xdg := filepath.Join(home, "xdg")
	t.Setenv("XDG_STATE_HOME", xdg)
	if got, err := ResolveStateDir(""); err != nil || got != filepath.Join(xdg, "agentd") {
		t.Errorf("with XDG_STATE_HOME: %s, %v", got, err)
	}
	t.Setenv("XDG_STATE_HOME", "")
	want := map[string]string{
		"darwin":  filepath.Join(home, "Library", "Application Support", "agentd"),
		"windows": filepath.Join(home, "AppData", "Local", "agentd"),
	}[runtime.GOOS]
	if want == "" {
		want = filepath.Join(home, ".local", "state", "agentd")
	}
	if got, err := ResolveStateDir(""); err != nil || got != want {
		t.Errorf("on %s without XDG_STATE_HOME: %s, %v; want %s", runtime.GOOS, got, err, want)
	}
	if runtime.GOOS == "windows" {
		t.Setenv("LocalAppData", "")
		if _, err := ResolveStateDir(""); err == nil {
			t.Error("no error without LocalAppData")
		}
	}
}
