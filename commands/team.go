package commands

import (
	"context"
	"regexp"

	"github.com/agentd/agentd/workspace"
)

// TeamAcceptResult is the answer of agentd.team.accept (docs/team.md,
// "Accepting a team file").
type TeamAcceptResult struct {
	Path   string `json:"path"` // the team file, relative to the folder: ".agentd/team.json"
	ID     string `json:"id"`   // the team id it names
	SHA256 string `json:"sha256"`
	// Endpoints are the etcd endpoints the file names, now accepted.
	Endpoints []string `json:"endpoints"`
	// SendsTo are the endpoints this daemon dials for the team, and so
	// sends this machine's etcd credentials to: the machine's own
	// (--etcd-endpoints, AGENTD_ETCD_ENDPOINTS), else Endpoints.
	SendsTo []string `json:"sendsTo"`
	// Reopened: the daemon had the folder open from this machine's state;
	// every client moves to the team's state at its next command, and is
	// sent agentd/storeChanged {stale: false} to read it again.
	Reopened bool `json:"reopened"`
}

type teamAcceptArgs struct {
	Common
	SHA256 string `json:"sha256"`
}

var sha256Pattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

var teamCommands = []Command{
	def[TeamAcceptResult]("agentd.team.accept", "`sha256` (of the team file as shown to the person: `State.teamFile.sha256`)", "Accepts the folder's `.agentd/team.json` on this machine, as the person (docs/team.md): the file must still have that `sha256`; the folder is then served from the team's etcd; `{path, id, sha256, endpoints, sendsTo, reopened}`.", true,
		func(ctx context.Context, c *call, a *teamAcceptArgs) (any, error) {
			if !sha256Pattern.MatchString(a.SHA256) {
				return nil, argsErrorf("sha256 %q is not the lowercase hex SHA-256 of the team file (State.teamFile.sha256)", a.SHA256)
			}
			res, err := c.svc.Registry().AcceptTeam(c.folder.path, a.SHA256)
			if err != nil {
				return nil, err
			}
			return TeamAcceptResult{Path: workspace.TeamFile, ID: res.Team.ID, SHA256: res.SHA256, Endpoints: res.Team.Etcd,
				SendsTo: res.Dialed, Reopened: res.Reopened}, nil
		}).personOnly("accept the folder's team file, which sends this machine's etcd credentials to its endpoints"),
}
