package cli

import (
	"flag"
	"io"
)

// The flags both programs take are declared here, once each, with their
// names, defaults and help; cmd/agentd's subcommands and agentd-hook bind
// them to their own fields (as gopls's internal/cmd embeds shared flag
// groups in the commands that take them).

// Globals are the flags every subcommand of both programs takes.
type Globals struct {
	StateDir, LogFile, LogLevel string
}

// SetFlags declares --state-dir, --log-file and --log-level on fs.
func (g *Globals) SetFlags(fs *flag.FlagSet) {
	fs.StringVar(&g.StateDir, "state-dir", "", "state directory")
	fs.StringVar(&g.LogFile, "log-file", "", "log file")
	fs.StringVar(&g.LogLevel, "log-level", "info", "log level")
}

// WorkspaceVar declares --workspace, the workspace folder, on fs.
func WorkspaceVar(fs *flag.FlagSet, p *string) {
	fs.StringVar(p, "workspace", "", "workspace folder")
}

// SessionVar declares --session on fs.
func SessionVar(fs *flag.FlagSet, p *string) {
	fs.StringVar(p, "session", "", "session")
}

// RemoteVar declares --remote, how to reach the shared daemon, on fs.
func RemoteVar(fs *flag.FlagSet, p *string) {
	fs.StringVar(p, "remote", "", "the shared daemon: auto or unix:PATH")
}

// Etcd are this machine's etcd settings for team folders (docs/team.md,
// "Configuration"), as flags; the password only comes from the
// environment, which a process list does not show.
type Etcd struct {
	Endpoints, CACert, Cert, Key, User string
}

// SetFlags declares --etcd-endpoints, --etcd-cacert, --etcd-cert,
// --etcd-key and --etcd-user on fs.
func (e *Etcd) SetFlags(fs *flag.FlagSet) {
	fs.StringVar(&e.Endpoints, "etcd-endpoints", "", "team folders: this machine's etcd endpoints, URL[,URL...] (else AGENTD_ETCD_ENDPOINTS, else team.json's)")
	fs.StringVar(&e.CACert, "etcd-cacert", "", "team folders: CA certificate file of the etcd members (else AGENTD_ETCD_CACERT)")
	fs.StringVar(&e.Cert, "etcd-cert", "", "team folders: client certificate file (else AGENTD_ETCD_CERT)")
	fs.StringVar(&e.Key, "etcd-key", "", "team folders: client key file (else AGENTD_ETCD_KEY)")
	fs.StringVar(&e.User, "etcd-user", "", "team folders: etcd user; the password comes from AGENTD_ETCD_PASSWORD (else AGENTD_ETCD_USER)")
}

// Args are the etcd flags given, as --NAME=VALUE, for a daemon this
// process starts (which inherits the environment too).
func (e Etcd) Args() []string {
	var out []string
	for _, f := range []struct{ name, v string }{
		{"etcd-endpoints", e.Endpoints}, {"etcd-cacert", e.CACert}, {"etcd-cert", e.Cert},
		{"etcd-key", e.Key}, {"etcd-user", e.User},
	} {
		if f.v != "" {
			out = append(out, "--"+f.name+"="+f.v)
		}
	}
	return out
}

// HookFlags are agentd-hook's flags: those `agentd hook` takes, declared
// by the same code (TestHookFlagsAsAgentd keeps the two alike).
type HookFlags struct {
	Globals
	HookLine
	Etcd Etcd
}

// SetFlags declares the flags of a hook command line besides the global
// ones (--workspace, --session, --remote) on fs.
func (l *HookLine) SetFlags(fs *flag.FlagSet) {
	WorkspaceVar(fs, &l.Workspace)
	SessionVar(fs, &l.Session)
	RemoteVar(fs, &l.Remote)
}

// FlagSet is the flag set of f, for agentd-hook.
func (f *HookFlags) FlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	f.Globals.SetFlags(fs)
	f.HookLine.SetFlags(fs)
	f.Etcd.SetFlags(fs)
	return fs
}
