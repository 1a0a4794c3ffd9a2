package cli

import (
	"errors"
	"os"
	"path/filepath"
)

// platformStateDir is where state lives without --state-dir or
// XDG_STATE_HOME: %LocalAppData%\agentd, the user's data that does not
// roam with their profile (docs/protocol.md §1).
func platformStateDir() (string, error) {
	dir := os.Getenv("LocalAppData")
	if dir == "" {
		return "", errors.New("LocalAppData is not set")
	}
	return filepath.Join(dir, "agentd"), nil
}
