package workspace

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentd/agentd/workspace/wsfolder"
)

// TestFindFolder: the rule of docs/protocol.md §1.3. A
// folder with state counts from the start folder up to the repository root
// (outside a repository, the start folder only), a folder an agentd process
// has open counts at any height, the nearest that counts wins; else the
// repository root, else the start folder. Symbolic links are resolved.
func TestFindFolder(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	stateDir := filepath.Join(base, "state")
	top := filepath.Join(base, "top")        // above the repository
	repo := filepath.Join(top, "repo")       // a git repository
	mid := filepath.Join(repo, "src")        // a folder inside it
	sub := filepath.Join(mid, "pkg")         // where the agent starts
	worktree := filepath.Join(base, "wt")    // a git worktree: .git is a file
	plainTop := filepath.Join(base, "plain") // no repository around
	plain := filepath.Join(plainTop, "x")    // where a command starts
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
	check := func(what, dir, want string) {
		t.Helper()
		got, err := wsfolder.FindFolder(stateDir, dir)
		if err != nil {
			t.Fatalf("%s: FindFolder(%s): %v", what, dir, err)
		}
		if got != want {
			t.Errorf("%s: FindFolder(%s) = %s, want %s", what, dir, got, want)
		}
	}
	r := newRegistry(t, stateDir)
	// open opens root in r (so that root has state and is served) and
	// returns the function that closes it again (state stays).
	open := func(root string) func() {
		t.Helper()
		w, err := r.Open(root)
		if err != nil {
			t.Fatalf("Open(%s): %v", root, err)
		}
		return w.Release
	}

	check("no state: the repository root", sub, repo)
	check("through a symbolic link", link, repo)
	check("a worktree's .git file", worktree, worktree)
	check("neither: the folder itself", plain, plain)

	closeTop := open(top)
	if !wsfolder.HasState(stateDir, top) || !wsfolder.Served(stateDir, top) || wsfolder.HasState(stateDir, repo) {
		t.Fatalf("top: HasState %v, Served %v (want both); repo: HasState %v (want false)",
			wsfolder.HasState(stateDir, top), wsfolder.Served(stateDir, top), wsfolder.HasState(stateDir, repo))
	}
	check("a served folder above the repository", sub, top)
	closeTop()
	if !wsfolder.HasState(stateDir, top) || wsfolder.Served(stateDir, top) {
		t.Fatalf("top after Release: HasState %v (want true), Served %v (want false)", wsfolder.HasState(stateDir, top), wsfolder.Served(stateDir, top))
	}
	check("state above the repository, not served, does not capture it", sub, repo)

	closePlain := open(plainTop)
	check("a served folder above, outside any repository", plain, plainTop)
	closePlain()
	check("state above, outside any repository, does not capture", plain, plain)

	closeRepo := open(repo)
	closeRepo()
	check("the repository root has state", sub, repo)
	closeMid := open(mid)
	closeMid()
	check("the nearest folder with state inside the repository", sub, mid)
	check("the start folder itself has state", mid, mid)
	defer open(top)()
	check("a nearer folder with state wins over a served one above", sub, mid)

	if _, err := wsfolder.FindFolder(stateDir, filepath.Join(base, "missing")); err == nil {
		t.Error("FindFolder of a missing folder: no error")
	}
}
