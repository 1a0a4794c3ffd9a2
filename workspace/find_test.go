package workspace

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFindFolder: the nearest folder with state wins over a nearer
// repository root, a repository root over the start folder, and the start
// folder is the answer when there is neither; symbolic links are resolved.
func TestFindFolder(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	stateDir := filepath.Join(base, "state")
	top := filepath.Join(base, "top")          // gets state
	repo := filepath.Join(top, "repo")         // a git repository inside it
	sub := filepath.Join(repo, "src", "pkg")   // where the agent starts
	worktree := filepath.Join(base, "wt")      // a git worktree: .git is a file
	plain := filepath.Join(base, "plain", "x") // neither
	for _, d := range []string{sub, filepath.Join(repo, ".git"), worktree, plain} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(worktree, ".git"), []byte("gitdir: elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(sub, link); err != nil {
		t.Fatal(err)
	}
	find := func(dir string) string {
		t.Helper()
		got, err := FindFolder(stateDir, dir)
		if err != nil {
			t.Fatalf("FindFolder(%s): %v", dir, err)
		}
		return got
	}
	check := func(what, dir, want string) {
		t.Helper()
		if got := find(dir); got != want {
			t.Errorf("%s: FindFolder(%s) = %s, want %s", what, dir, got, want)
		}
	}
	check("no state: the repository root", sub, repo)
	check("through a symbolic link", link, repo)
	check("a worktree's .git file", worktree, worktree)
	check("neither: the folder itself", plain, plain)

	r := newRegistry(t, stateDir)
	openWorkspace(t, r, top)
	if !HasState(stateDir, top) || HasState(stateDir, repo) {
		t.Fatalf("HasState: top %v (want true), repo %v (want false)", HasState(stateDir, top), HasState(stateDir, repo))
	}
	check("an ancestor with state wins over the repository root", sub, top)
	openWorkspace(t, r, repo)
	check("the nearest folder with state", sub, repo)
	check("the start folder itself has state", repo, repo)

	if _, err := FindFolder(stateDir, filepath.Join(base, "missing")); err == nil {
		t.Error("FindFolder of a missing folder: no error")
	}
}
