package wsfolder

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
)

// Names on disk (docs/protocol.md §1): each folder's state lives in
// <StateDir>/WorkspacesDir/<FolderKey>/StateFileName (the layout of that
// directory is package workspace's).
const (
	WorkspacesDir = "workspaces"
	StateFileName = "state.db"
)

// DefaultSession is the session used when a caller names none (docs/runtime.md, scope).
const DefaultSession = "default"

// FolderKey returns the name of the directory, under <StateDir>/workspaces,
// that holds the state of the folder at root: the hex of the first 16 bytes
// of the SHA-256 of filepath.Clean(root).
func FolderKey(root string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(root)))
	return hex.EncodeToString(sum[:16])
}

// StateFile is the path of the state file of the folder at root (an
// absolute path) under stateDir, whether or not it exists yet.
func StateFile(stateDir, root string) string {
	return filepath.Join(stateDir, WorkspacesDir, FolderKey(root), StateFileName)
}
