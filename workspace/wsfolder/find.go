package wsfolder

import (
	"fmt"
	"os"
	"path/filepath"
)

// FindFolder is the one rule that decides which workspace folder a process
// started in dir means when it is not told (docs/protocol.md
// §1.3): the shell commands, `agentd mcp`, `agentd hook` and `agentd
// setup` use it, and a --workspace flag always wins over it. Walking from
// dir up to the root, the nearest folder that qualifies wins:
//
//   - a folder an agentd process has open right now (Served: an editor's
//     agentd, the shared daemon, an `agentd mcp --remote=off`) qualifies at
//     any height;
//   - a folder that merely has agentd state (HasState) qualifies only from
//     dir up to the repository root, the nearest folder that holds a .git
//     entry (a directory, or the file of a git worktree); outside a
//     repository only dir itself. So state left in a parent folder never
//     captures a repository below it.
//
// When none qualifies, the answer is the repository root, else dir itself.
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
	repo := repositoryRoot(abs)
	// State alone qualifies from dir up to the repository root; outside a
	// repository, at dir only.
	stateCounts := true
	for d := abs; ; {
		if HasState(stateDir, d) && (stateCounts || Served(stateDir, d)) {
			return d, nil
		}
		if d == repo || repo == "" {
			stateCounts = false
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

// repositoryRoot is the nearest folder from dir up that holds a .git entry
// (a directory, or the file of a git worktree), or "" when there is none.
func repositoryRoot(dir string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// HasState reports whether the folder at root (an absolute, clean path with
// symbolic links resolved) has a state file under stateDir.
func HasState(stateDir, root string) bool {
	fi, err := os.Stat(StateFile(stateDir, root))
	return err == nil && fi.Mode().IsRegular()
}

// Served reports whether an agentd process has the folder at root open
// right now: its state file is locked, as bbolt locks it (an exclusive
// flock) for as long as the process keeps the folder open. The probe asks
// for a shared lock without waiting, on a descriptor of its own opened
// read-only, and lets go at once: a holder is not disturbed, and a process
// opening the file meanwhile only retries its lock, as bbolt does. A shell
// command's own short open also reads as served while it lasts. False when
// the file is missing or cannot be read.
func Served(stateDir, root string) bool {
	f, err := os.Open(StateFile(stateDir, root))
	if err != nil {
		return false
	}
	defer f.Close() // closing lets go of a lock it got
	got, err := TryLock(f, true)
	return err == nil && !got
}
