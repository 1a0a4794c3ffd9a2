//go:build !windows && !darwin

package cli

// stateUnderHome is ~/.local/state/agentd, XDG's default state home
// (docs/protocol.md §1).
var stateUnderHome = []string{".local", "state", "agentd"}
