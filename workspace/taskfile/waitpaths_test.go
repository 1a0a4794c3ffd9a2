package taskfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWaitPathMarkStaysInside: a wait path is checked when the wait
// begins (docs/runtime.md §2.13), and a folder on it that becomes a link
// out of the workspace later is not followed: its mark is "outside", and
// the file outside is never read, so its changes cannot wake the goal.
func TestWaitPathMarkStaysInside(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	for _, bad := range []string{"../x", filepath.Join(elsewhere, "out.log"), ""} {
		if _, err := WaitPath(root, bad); err == nil {
			t.Errorf("WaitPath(%q) accepted", bad)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	rel, err := WaitPath(root, "build/out.log")
	if err != nil || rel != "build/out.log" {
		t.Fatalf("WaitPath: %q, %v", rel, err)
	}
	if m := Mark(root, rel); m != "absent" {
		t.Fatalf("mark before the file exists: %q", m)
	}
	secret := filepath.Join(elsewhere, "out.log")
	if err := os.WriteFile(secret, []byte("a"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "build")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(root, "build")); err != nil {
		t.Fatal(err)
	}
	before := Mark(root, rel)
	if err := os.WriteFile(secret, []byte("a longer text"), 0o600); err != nil {
		t.Fatal(err)
	}
	if after := Mark(root, rel); before != "outside" || after != "outside" {
		t.Errorf("marks through a link out of the workspace: %q, then %q; want outside both times", before, after)
	}
}
