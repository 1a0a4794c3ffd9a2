package cli

import (
	"os"
	"path/filepath"
)

// platformStateDir is where state lives without --state-dir or
// XDG_STATE_HOME: ~/Library/Application Support/agentd, where macOS
// programs keep their own data (docs/protocol.md §1).
func platformStateDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "Library", "Application Support", "agentd"), nil
}
