package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/agentd/agentd/caller"
	"github.com/agentd/agentd/cmd/internal/cli"
	"github.com/agentd/agentd/commands"
	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/workspace"
)

// teamUsage is the usage of `agentd team`.
const teamUsage = `usage: agentd team init --etcd URL[,URL...] [--workspace DIR]
       agentd team accept [--json] [--workspace DIR]
       agentd team status [--json] [--workspace DIR]
  init: makes the folder a team folder (docs/team.md): copies its todo lists, goals and history
        to etcd under a new team id and writes .agentd/team.json, to commit with the repository,
        accepted on this machine; run it with no agentd serving the folder; a team folder
        already is left as it is
  accept: uses the folder's .agentd/team.json on this machine, as it is now (a teammate's clone):
        shows its team id and etcd endpoints, where your etcd credentials will be sent; until
        then, and again after any change to the file, this machine's own state serves the folder
  status: which store serves the folder (bbolt or etcd), whether it answers, and the round trip;
        exit 1 when it does not answer
  this machine's etcd settings: --etcd-endpoints, --etcd-cacert, --etcd-cert, --etcd-key,
  --etcd-user, or AGENTD_ETCD_ENDPOINTS, AGENTD_ETCD_CACERT, AGENTD_ETCD_CERT, AGENTD_ETCD_KEY,
  AGENTD_ETCD_USER, AGENTD_ETCD_PASSWORD
`

// storeOptions are the workspace options of this process: the state
// directory, the logger, the machine's etcd settings etcd and what a
// person reads when another process holds a folder's state file.
// lockedHint is this command line's advice on a folder another process
// holds (workspace.locked, docs/protocol.md §1): share one daemon.
const lockedHint = "to use one folder from several clients at once, start every client with `agentd --remote=auto` so that they share one daemon"

func (e *env) storeOptions(etcd cli.Etcd) workspace.Options {
	return workspace.Options{StateDir: e.stateDir, Logger: e.log, Team: teamOptions(etcd), LockedHint: lockedHint}
}

// teamOptions are this machine's etcd settings (docs/team.md,
// "Configuration"): each flag, else its environment variable; the password
// only from AGENTD_ETCD_PASSWORD, which a process list does not show.
func teamOptions(etcd cli.Etcd) workspace.TeamOptions {
	pick := func(flag, env string) string {
		if flag != "" {
			return flag
		}
		return os.Getenv(env)
	}
	t := workspace.TeamOptions{
		CACert:   pick(etcd.CACert, workspace.EnvEtcdCACert),
		Cert:     pick(etcd.Cert, workspace.EnvEtcdCert),
		Key:      pick(etcd.Key, workspace.EnvEtcdKey),
		User:     pick(etcd.User, workspace.EnvEtcdUser),
		Password: os.Getenv(workspace.EnvEtcdPassword),
	}
	if eps := pick(etcd.Endpoints, workspace.EnvEtcdEndpoints); eps != "" {
		t.Endpoints = splitList(eps)
	}
	return t
}

func splitList(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// team is `agentd team init|accept|status` (docs/team.md), an action
// each with its flags.
type team struct {
	init   teamInit
	accept teamAccept
	status teamStatus
}

func newTeam() *team { return &team{} }

func (*team) Name() string          { return "team" }
func (*team) Usage([]string) string { return teamUsage }
func (*team) ShortHelp() string {
	return `  agentd team init --etcd URL[,URL...]  share this folder's goal and todo lists through etcd:
                                        writes .agentd/team.json and copies the state (docs/team.md)
  agentd team accept                    use the folder's committed .agentd/team.json on this machine
                                        (shows its team and etcd endpoints; docs/team.md)
  agentd team status [--json]           which store serves the folder, reachable, round trip
`
}

// SetFlags declares none: each action declares its own.
func (*team) SetFlags(*flag.FlagSet) {}

func (t *team) Actions() []action { return []action{&t.init, &t.accept, &t.status} }

func (t *team) printsForPerson() bool { return !t.accept.jsonOut && !t.status.jsonOut }

// Run runs the action args name, on the workspace folder it names on
// stderr; no action, an unknown one or more arguments show the usage.
func (t *team) Run(ctx context.Context, e *env, args []string) int {
	act := actionNamed(t, args)
	if act == nil || len(args) != 1 {
		fmt.Fprint(e.stderr, teamUsage)
		return 2
	}
	return act.Run(ctx, e, nil)
}

// teamFolder is the workspace folder of `agentd team ACTION`, named on
// stderr; false, the error said, when there is none.
func teamFolder(e *env, t target, action string) (string, bool) {
	folder, err := workspaceFolder(e, t)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentd team %s: %v\n", action, err)
		return "", false
	}
	noteFolder(e.stderr, folder)
	return folder, true
}

// teamStatus is `agentd team status`: which store serves the folder and
// whether it answers.
type teamStatus struct {
	t       target // workspace and etcd
	jsonOut bool
}

func (*teamStatus) Name() string { return "status" }

func (s *teamStatus) SetFlags(fs *flag.FlagSet) {
	cli.WorkspaceVar(fs, &s.t.workspace)
	s.t.etcd.SetFlags(fs)
	jsonVar(fs, &s.jsonOut)
}

func (s *teamStatus) Run(ctx context.Context, e *env, _ []string) int {
	folder, ok := teamFolder(e, s.t, "status")
	if !ok {
		return 1
	}
	st, err := workspace.StatusOf(e.storeOptions(s.t.etcd), folder)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentd team status: %v\n", err)
		return 1
	}
	if s.jsonOut {
		printJSON(e.stdout, st)
	} else {
		fmt.Fprint(e.stdout, formatTeamStatus(st))
	}
	if !st.Reachable || len(st.Alarms) > 0 {
		return 1
	}
	return 0
}

// formatTeamStatus is the human view of `agentd team status`.
func formatTeamStatus(st workspace.TeamStatus) string {
	switch {
	case st.Store == "bbolt":
		out := fmt.Sprintf("store: bbolt (this machine only) %s\n", st.StateFile)
		if st.TeamFile != nil {
			out += st.TeamFile.Line() + "\n"
		}
		return out
	case st.Reachable:
		out := fmt.Sprintf("store: etcd, team %s at %s\nreachable: yes, round trip %.2f ms\n", st.Team, strings.Join(st.Endpoints, ","), st.RTTMs)
		if st.Compacted > 0 {
			out += fmt.Sprintf("history: compacted to revision %d of %d\n", st.Compacted, st.Revision)
		} else if st.Revision > 0 {
			out += fmt.Sprintf("history: not compacted yet (revision %d)\n", st.Revision)
		}
		if len(st.Alarms) > 0 {
			out += fmt.Sprintf("alarm: %s: %s\n", strings.Join(st.Alarms, ", "), st.Error)
		}
		return out
	}
	return fmt.Sprintf("store: etcd, team %s at %s\nreachable: no (%s)\n", st.Team, strings.Join(st.Endpoints, ","), st.Error)
}

// teamInit is `agentd team init --etcd URL[,URL...]`: it makes the folder
// a team folder.
type teamInit struct {
	t    target // workspace and etcd
	etcd string // the endpoints for team.json
}

func (*teamInit) Name() string { return "init" }

func (i *teamInit) SetFlags(fs *flag.FlagSet) {
	cli.WorkspaceVar(fs, &i.t.workspace)
	i.t.etcd.SetFlags(fs)
	fs.StringVar(&i.etcd, "etcd", "", "team init: the etcd endpoints for team.json, URL[,URL...]")
}

func (i *teamInit) Run(ctx context.Context, e *env, _ []string) int {
	folder, ok := teamFolder(e, i.t, "init")
	if !ok {
		return 1
	}
	if i.etcd == "" {
		fmt.Fprintf(e.stderr, "agentd team init: --etcd URL[,URL...] is required: the client URLs of the etcd cluster (docs/team.md)\n")
		return 2
	}
	if a := caller.Self(); a.IsAgent() {
		// It writes a team file this machine accepts: the person's step,
		// like agentd team accept (docs/runtime.md §7).
		fmt.Fprintf(e.stderr, "agentd team init: %v\n", commands.AgentShellError("agentd team init", "make this folder a team folder and accept its team file", a))
		return 1
	}
	res, err := workspace.InitTeam(e.storeOptions(i.t.etcd), folder, splitList(i.etcd))
	if err != nil {
		fmt.Fprintf(e.stderr, "agentd team init: %v\n", err)
		if protocol.ErrorCode(err) == protocol.CodeArgsInvalid {
			return 2
		}
		return 1
	}
	if res.Already {
		fmt.Fprintf(e.stdout, "already a team folder: team %s at %s (%s); nothing copied\n", res.Team.ID, strings.Join(res.Team.Etcd, ","), workspace.TeamFile)
		if res.Pending != nil {
			fmt.Fprintln(e.stdout, res.Pending.Line())
		}
		return 0
	}
	fmt.Fprintf(e.stdout, "team %s at %s: copied the folder's state (sessions: %d, history events: %d); commit %s so that other clones share them\n",
		res.Team.ID, strings.Join(res.Team.Etcd, ","), res.Sessions, res.Events, workspace.TeamFile)
	return 0
}

// teamAccept is `agentd team accept`: it reads the folder's team file as
// it is now and has agentd.team.accept record exactly that content (by
// its SHA-256), through the shared daemon when one serves the folder, so
// that the daemon moves the folder to the team at once.
type teamAccept struct {
	t       target // workspace, remote and etcd
	jsonOut bool
}

func (*teamAccept) Name() string { return "accept" }

func (a *teamAccept) SetFlags(fs *flag.FlagSet) {
	cli.WorkspaceVar(fs, &a.t.workspace)
	cli.RemoteVar(fs, &a.t.remote)
	a.t.etcd.SetFlags(fs)
	jsonVar(fs, &a.jsonOut)
}

func (a *teamAccept) Run(ctx context.Context, e *env, _ []string) int {
	folder, ok := teamFolder(e, a.t, "accept")
	if !ok {
		return 1
	}
	accepted, notice, err := workspace.TeamFileStatus(e.stateDir, folder)
	stdout, stderr := e.stdout, e.stderr
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "agentd team accept: %v\n", err)
		return 1
	case accepted:
		st, _ := workspace.ReadTeam(folder)
		fmt.Fprintf(stdout, "%s is accepted on this machine already: team %s at %s\n", workspace.TeamFile, st.ID, strings.Join(st.Etcd, ","))
		return 0
	case notice == nil:
		fmt.Fprintf(stderr, "agentd team accept: %s has no %s: there is nothing to accept (agentd team init makes a team folder; docs/team.md)\n", folder, workspace.TeamFile)
		return 1
	case notice.Status == workspace.TeamFileInvalid:
		fmt.Fprintf(stderr, "agentd team accept: %s cannot be used: %s; nothing was accepted (docs/team.md)\n", workspace.TeamFile, notice.Error)
		return 2
	}
	res, err := oneShot(ctx, e, a.t, folder, protocol.CmdTeamAccept, &protocol.TeamAcceptArgs{SHA256: notice.SHA256})
	if err != nil {
		fmt.Fprintf(stderr, "agentd team accept: %v\n", err)
		if protocol.ErrorCode(err) == protocol.CodeArgsInvalid {
			return 2
		}
		return 1
	}
	ar := res.(protocol.TeamAcceptResult)
	if a.jsonOut {
		printJSON(stdout, ar)
		return 0
	}
	fmt.Fprintf(stdout, "accepted %s on this machine: team %s at %s (sha256 %s)\nyour etcd credentials will be sent to: %s\nthis folder is now served from the team's etcd; any change to %s asks again\n",
		ar.Path, ar.ID, strings.Join(ar.Endpoints, ","), ar.SHA256, strings.Join(ar.SendsTo, ","), ar.Path)
	return 0
}
