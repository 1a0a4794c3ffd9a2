package protocol

// MaxNameBytes bounds session and agent names (they are storage keys).
const MaxNameBytes = 256

// Bounds of agentd.awaitChange's timeoutMs: absent or 0 is the default.
const (
	DefaultAwaitMs = 30_000
	MaxAwaitMs     = 300_000
)
