package client

import (
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestPeerCred: the user and pid of a connected peer (here this process),
// as the shared daemon reads them to refuse another user
// (peercred_linux.go, peercred_darwin.go, peercred_windows.go: the uid,
// or the SID of the peer process's token); a system without them says so,
// naming itself and the way around. It runs here on Linux and is built
// for the others by tests/run.sh.
func TestPeerCred(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Skipf("no Unix sockets here: %v", err)
	}
	defer l.Close()
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := l.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	user, pid, err := PeerCred(s)
	switch runtime.GOOS {
	case "linux", "darwin", "windows":
		me, merr := CurrentUser()
		if merr != nil || me == "" {
			t.Fatalf("CurrentUser() = %q, %v", me, merr)
		}
		if err != nil || user != me || pid != os.Getpid() {
			t.Errorf("PeerCred = user %s pid %d, %v; want user %s pid %d", user, pid, err, me, os.Getpid())
		}
	default:
		if err == nil || !strings.Contains(err.Error(), runtime.GOOS) || !strings.Contains(err.Error(), "--remote=off") {
			t.Errorf("PeerCred on %s = %v, want an error naming the system and --remote=off", runtime.GOOS, err)
		}
	}
}
