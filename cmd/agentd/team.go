package main

import (
	"context"
	"fmt"
	"github.com/agentd/agentd/commands/protocol"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/agentd/agentd/caller"
	"github.com/agentd/agentd/cmd/internal/cli"
	"github.com/agentd/agentd/commands"
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
// directory, the logger and the machine's etcd settings.
func (o options) storeOptions(stateDir string, log *slog.Logger) workspace.Options {
	return workspace.Options{StateDir: stateDir, Logger: log, Team: o.teamOptions()}
}

// teamOptions are this machine's etcd settings (docs/team.md,
// "Configuration"): each flag, else its environment variable; the password
// only from AGENTD_ETCD_PASSWORD, which a process list does not show.
func (o options) teamOptions() workspace.TeamOptions {
	pick := func(flag, env string) string {
		if flag != "" {
			return flag
		}
		return os.Getenv(env)
	}
	t := workspace.TeamOptions{
		CACert:   pick(o.etcdCACert, workspace.EnvEtcdCACert),
		Cert:     pick(o.etcdCert, workspace.EnvEtcdCert),
		Key:      pick(o.etcdKey, workspace.EnvEtcdKey),
		User:     pick(o.etcdUser, workspace.EnvEtcdUser),
		Password: os.Getenv(workspace.EnvEtcdPassword),
	}
	if eps := pick(o.etcdEndpoints, workspace.EnvEtcdEndpoints); eps != "" {
		t.Endpoints = splitList(eps)
	}
	return t
}

// etcdFlags are the etcd flags given to this process, for a daemon it
// starts (which inherits the environment too).
func (o options) etcdFlags() []string {
	return cli.EtcdFlags(o.etcdEndpoints, o.etcdCACert, o.etcdCert, o.etcdKey, o.etcdUser)
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

func runTeam(ctx context.Context, o options, stateDir string, log *slog.Logger, pos []string, stdout, stderr io.Writer) int {
	if len(pos) != 1 || (pos[0] != "init" && pos[0] != "status" && pos[0] != "accept") {
		fmt.Fprint(stderr, teamUsage)
		return 2
	}
	folder, err := workspaceFolder(o, stateDir)
	if err != nil {
		fmt.Fprintf(stderr, "agentd team %s: %v\n", pos[0], err)
		return 1
	}
	noteFolder(stderr, folder)
	opts := o.storeOptions(stateDir, log)
	if pos[0] == "accept" {
		return runTeamAccept(ctx, o, stateDir, log, folder, stdout, stderr)
	}
	if pos[0] == "status" {
		st, err := workspace.StatusOf(opts, folder)
		if err != nil {
			fmt.Fprintf(stderr, "agentd team status: %v\n", err)
			return 1
		}
		if o.jsonOut {
			printJSON(stdout, st)
		} else {
			switch {
			case st.Store == "bbolt":
				fmt.Fprintf(stdout, "store: bbolt (this machine only) %s\n", st.StateFile)
				if st.TeamFile != nil {
					fmt.Fprintln(stdout, st.TeamFile.Line())
				}
			case st.Reachable:
				fmt.Fprintf(stdout, "store: etcd, team %s at %s\nreachable: yes, round trip %.2f ms\n", st.Team, strings.Join(st.Endpoints, ","), st.RTTMs)
			default:
				fmt.Fprintf(stdout, "store: etcd, team %s at %s\nreachable: no (%s)\n", st.Team, strings.Join(st.Endpoints, ","), st.Error)
			}
		}
		if !st.Reachable {
			return 1
		}
		return 0
	}
	if o.etcd == "" {
		fmt.Fprintf(stderr, "agentd team init: --etcd URL[,URL...] is required: the client URLs of the etcd cluster (docs/team.md)\n")
		return 2
	}
	if a := caller.Self(); a.IsAgent() {
		// It writes a team file this machine accepts: the person's step,
		// like agentd team accept (docs/runtime.md §7).
		fmt.Fprintf(stderr, "agentd team init: %v\n", commands.AgentShellError("agentd team init", "make this folder a team folder and accept its team file", a))
		return 1
	}
	res, err := workspace.InitTeam(opts, folder, splitList(o.etcd))
	if err != nil {
		fmt.Fprintf(stderr, "agentd team init: %v\n", err)
		if protocol.ErrorCode(err) == protocol.CodeArgsInvalid {
			return 2
		}
		return 1
	}
	if res.Already {
		fmt.Fprintf(stdout, "already a team folder: team %s at %s (%s); nothing copied\n", res.Team.ID, strings.Join(res.Team.Etcd, ","), workspace.TeamFile)
		if res.Pending != nil {
			fmt.Fprintln(stdout, res.Pending.Line())
		}
		return 0
	}
	fmt.Fprintf(stdout, "team %s at %s: copied the folder's state (sessions: %d, history events: %d); commit %s so that other clones share them\n",
		res.Team.ID, strings.Join(res.Team.Etcd, ","), res.Sessions, res.Events, workspace.TeamFile)
	return 0
}

// runTeamAccept is `agentd team accept`: it reads the folder's team file
// as it is now and has agentd.team.accept record exactly that content (by
// its SHA-256), through the shared daemon when one serves the folder, so
// that the daemon moves the folder to the team at once.
func runTeamAccept(ctx context.Context, o options, stateDir string, log *slog.Logger, folder string, stdout, stderr io.Writer) int {
	accepted, notice, err := workspace.TeamFileStatus(stateDir, folder)
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
	res, err := oneShot(ctx, o, stateDir, log, folder, protocol.CmdTeamAccept, &protocol.TeamAcceptArgs{SHA256: notice.SHA256})
	if err != nil {
		fmt.Fprintf(stderr, "agentd team accept: %v\n", err)
		if protocol.ErrorCode(err) == protocol.CodeArgsInvalid {
			return 2
		}
		return 1
	}
	ar := res.(protocol.TeamAcceptResult)
	if o.jsonOut {
		printJSON(stdout, ar)
		return 0
	}
	fmt.Fprintf(stdout, "accepted %s on this machine: team %s at %s (sha256 %s)\nyour etcd credentials will be sent to: %s\nthis folder is now served from the team's etcd; any change to %s asks again\n",
		ar.Path, ar.ID, strings.Join(ar.Endpoints, ","), ar.SHA256, strings.Join(ar.SendsTo, ","), ar.Path)
	return 0
}
