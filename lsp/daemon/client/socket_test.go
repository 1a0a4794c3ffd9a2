//go:build unix

package client

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestAutoSocketPathWithoutXDG: with XDG_RUNTIME_DIR unset (an agent that
// strips it), the socket is in the login manager's runtime dir of the user
// when that is a private directory of theirs, the one XDG_RUNTIME_DIR names
// in the login session; a missing one, one open to others or a symbolic
// link is passed over for the temp dir, as before.
func TestAutoSocketPathWithoutXDG(t *testing.T) {
	base, tmp := t.TempDir(), t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("TMPDIR", tmp)
	saved := runtimeBase
	runtimeBase = base
	t.Cleanup(func() { runtimeBase = saved })
	mine := filepath.Join(base, strconv.Itoa(os.Getuid()))
	fallback := filepath.Join(tmp, fmt.Sprintf("agentd-%d", os.Getuid()), "daemon.sock")
	login := filepath.Join(mine, "agentd", "daemon.sock")
	other := filepath.Join(t.TempDir(), "other")
	for _, tc := range []struct {
		name string
		make func() error
		want string
	}{
		{"no runtime dir", func() error { return nil }, fallback},
		{"open to others", func() error { return os.Mkdir(mine, 0o755) }, fallback},
		{"a symbolic link", func() error {
			if err := os.Mkdir(other, 0o700); err != nil {
				return err
			}
			return os.Symlink(other, mine)
		}, fallback},
		{"the login's", func() error { return os.Mkdir(mine, 0o700) }, login},
	} {
		os.RemoveAll(mine)
		if err := tc.make(); err != nil {
			t.Fatal(err)
		}
		if got := AutoSocketPath(); got != tc.want {
			t.Errorf("%s: AutoSocketPath() = %s, want %s", tc.name, got, tc.want)
		}
	}
	t.Setenv("XDG_RUNTIME_DIR", tmp)
	if got, want := AutoSocketPath(), filepath.Join(tmp, "agentd", "daemon.sock"); got != want {
		t.Errorf("with XDG_RUNTIME_DIR: %s, want %s", got, want)
	}
}
