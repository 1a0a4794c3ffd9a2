package client

import (
	"path/filepath"
	"testing"

	"golang.org/x/sys/windows"
)

// openToOthers gives Everyone read access to dir, beside the user's own
// (TestSecureDir).
func openToOthers(dir string) error {
	me, err := CurrentUser()
	if err != nil {
		return err
	}
	sd, err := windows.SecurityDescriptorFromString("D:P(A;OICI;FA;;;" + me + ")(A;OICI;FR;;;WD)")
	if err != nil {
		return err
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return err
	}
	return windows.SetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil)
}

// TestAutoSocketPathWindows: without XDG_RUNTIME_DIR the socket is in
// %LocalAppData%\agentd\run, whatever TEMP a process was given; with it,
// in XDG_RUNTIME_DIR\agentd.
func TestAutoSocketPathWindows(t *testing.T) {
	base, tmp := t.TempDir(), t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", "")
	t.Setenv("LocalAppData", base)
	t.Setenv("TEMP", tmp)
	if got, want := AutoSocketPath(), filepath.Join(base, "agentd", "run", "daemon.sock"); got != want {
		t.Errorf("AutoSocketPath() = %s, want %s", got, want)
	}
	t.Setenv("XDG_RUNTIME_DIR", tmp)
	if got, want := AutoSocketPath(), filepath.Join(tmp, "agentd", "daemon.sock"); got != want {
		t.Errorf("with XDG_RUNTIME_DIR: %s, want %s", got, want)
	}
}
