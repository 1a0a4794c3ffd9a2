//go:build !windows

package cli

import (
	"os"
	"path/filepath"
)

// platformStateDir is where state lives without --state-dir or
// XDG_STATE_HOME: stateUnderHome in the user's home folder.
func platformStateDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(append([]string{home}, stateUnderHome...)...), nil
}
