package cli

// stateUnderHome is ~/Library/Application Support/agentd, where macOS
// programs keep their own data (docs/protocol.md §1).
var stateUnderHome = []string{"Library", "Application Support", "agentd"}
