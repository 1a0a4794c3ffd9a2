//go:build unix

package client

import "os"

// openToOthers gives others access to dir (TestSecureDir).
func openToOthers(dir string) error { return os.Chmod(dir, 0o755) }
