package client

import (
	"errors"
	"io/fs"
)

// ownerUID: Windows has no uid owning a file, so a socket directory's
// owner cannot be checked and SecureDir refuses it.
func ownerUID(fs.FileInfo) (int, bool) { return 0, false }

// terminate: Windows has no SIGTERM to end a daemon in order.
func terminate(int) error {
	return errors.New("cannot ask an older daemon to end: Windows has no SIGTERM")
}
