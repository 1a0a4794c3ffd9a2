package main

import "strings"

// overviewHead and overviewTail frame the subcommands' ShortHelp in
// agentd's overview (agentd --help).
const overviewHead = `agentd keeps AI agents' todo lists and goals per workspace folder and
serves them to editors and agents over LSP (JSON-RPC with Content-Length framing).

Usage:
`

const overviewTail = `  agentd SUB --help                     that subcommand's usage (also agentd help SUB)

Flags (before or after the arguments; text that starts with - goes after --; a flag the
subcommand does not take is refused, naming the subcommands that take it):
  --workspace DIR      workspace folder for tool/state/goal/undo/history/watch/simulate/mcp/hook/setup/run (default: the
                       nearest folder up from the current one that an agentd process has
                       open, or that has agentd state and lies within the repository; else
                       the repository root, else the current folder; docs/protocol.md §1.3)
  --session S          session (default "default")
  --state-dir DIR      where state lives (default $XDG_STATE_HOME/agentd, else the system's: docs/platforms.md)
  --log-file FILE      write logs there instead of stderr
  --log-level LEVEL    debug, info, warn or error (default info)
  --remote unix:PATH   tool/state/goal/run: use the daemon on that socket (default: the shared
                       daemon when one answers, else the state directly); watch, mcp: the
                       daemon to connect to (default auto: the shared one, started if need be)
  --etcd-endpoints, --etcd-cacert, --etcd-cert, --etcd-key, --etcd-user
                       this machine's etcd settings for team folders (also AGENTD_ETCD_ENDPOINTS,
                       AGENTD_ETCD_CACERT, AGENTD_ETCD_CERT, AGENTD_ETCD_KEY, AGENTD_ETCD_USER,
                       AGENTD_ETCD_PASSWORD; docs/team.md)

Docs: README.md and docs/ in the agentd repository.
`

// overview is agentd's usage: what agentd --help prints.
func (a *app) overview() string {
	var b strings.Builder
	b.WriteString(overviewHead)
	for _, c := range a.commands {
		b.WriteString(c.ShortHelp())
	}
	b.WriteString(overviewTail)
	return b.String()
}

// usageOf is the help for the command line pos (its positional arguments):
// the subcommand's usage when pos names one, else agentd's.
func (a *app) usageOf(pos []string) string {
	if len(pos) > 0 {
		if c, ok := a.lookup(pos[0]); ok {
			return c.Usage(pos[1:])
		}
	}
	return a.overview()
}
