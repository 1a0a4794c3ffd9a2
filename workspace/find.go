package workspace

import (
	"fmt"
	"os"
	"path/filepath"
)

// FindFolder is the one rule that decides which workspace folder a process
// started in dir means when it is not told (docs/behaviour.md, "Which
// workspace"): `agentd mcp` and the shell commands use it, and a
// --workspace flag always wins over it. Walking from dir up to the root, it
// returns:
//
//  1. the nearest folder that has agentd state under stateDir (HasState);
//     every folder an editor has open in the daemon has it, since opening a
//     folder creates its state file;
//  2. else the nearest folder that holds a .git entry (a directory, or the
//     file of a git worktree): the repository root;
//  3. else dir itself.
//
// dir is made absolute and its symbolic links are resolved first, as the
// commands do with every folder, so that the answer names the folder whose
// state the commands open. An error only when dir cannot be made absolute
// or is not a folder.
func FindFolder(stateDir, dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s is not a folder", dir)
	}
	repo := ""
	for d := abs; ; {
		if HasState(stateDir, d) {
			return d, nil
		}
		if _, err := os.Lstat(filepath.Join(d, ".git")); repo == "" && err == nil {
			repo = d
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if repo != "" {
		return repo, nil
	}
	return abs, nil
}

// HasState reports whether the folder at root (an absolute, clean path with
// symbolic links resolved) has a state file under stateDir.
func HasState(stateDir, root string) bool {
	fi, err := os.Stat(filepath.Join(stateDir, workspacesDir, FolderKey(root), stateFile))
	return err == nil && fi.Mode().IsRegular()
}
