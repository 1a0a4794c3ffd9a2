package main

import (
	"flag"

	"github.com/agentd/agentd/cmd/internal/cli"
)

// target is where a command works: the workspace folder, the session, the
// shared daemon, and this machine's etcd settings (docs/team.md). Each
// command declares those of its flags it takes (cli declares each once);
// the others stay "", their defaults.
type target struct {
	workspace, session, remote string
	etcd                       cli.Etcd
}

// shell are the flags of the shell commands that run one command on a
// folder's state (tool, state, todo, goal, undo, history): where, and --json.
type shell struct {
	target
	jsonOut bool
}

func (s *shell) SetFlags(fs *flag.FlagSet) {
	cli.WorkspaceVar(fs, &s.workspace)
	cli.SessionVar(fs, &s.session)
	cli.RemoteVar(fs, &s.remote)
	s.etcd.SetFlags(fs)
	jsonVar(fs, &s.jsonOut)
}

func (s *shell) printsForPerson() bool { return !s.jsonOut }

// jsonVar declares --json on fs.
func jsonVar(fs *flag.FlagSet, p *bool) { fs.BoolVar(p, "json", false, "print JSON") }
