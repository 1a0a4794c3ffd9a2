//go:build !windows && !darwin

package cli

import (
	"os"
	"path/filepath"
)

// platformStateDir is where state lives without --state-dir or
// XDG_STATE_HOME: ~/.local/state/agentd, XDG's default state home
// (docs/protocol.md §1).
func platformStateDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state", "agentd"), nil
}
