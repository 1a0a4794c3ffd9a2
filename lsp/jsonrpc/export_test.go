package jsonrpc

import "time"

// SetDrainTimeout sets how long Run waits, at most, when a connection
// ends, for a test; it returns the function that restores it.
func SetDrainTimeout(d time.Duration) (restore func()) {
	old := drainTimeout
	drainTimeout = d
	return func() { drainTimeout = old }
}
