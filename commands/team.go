package commands

import (
	"context"
	"github.com/agentd/agentd/commands/protocol"
	"regexp"

	"github.com/agentd/agentd/workspace"
)

var sha256Pattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

var teamCommands = []Command{
	def[protocol.TeamAcceptResult](protocol.CmdTeamAccept,
		func(ctx context.Context, c *call, a *protocol.TeamAcceptArgs) (protocol.TeamAcceptResult, error) {
			if !sha256Pattern.MatchString(a.SHA256) {
				return protocol.TeamAcceptResult{}, argsErrorf("sha256 %q is not the lowercase hex SHA-256 of the team file (State.teamFile.sha256)", a.SHA256)
			}
			res, err := c.svc.Registry().AcceptTeam(c.folder.path, a.SHA256)
			if err != nil {
				return protocol.TeamAcceptResult{}, err
			}
			return protocol.TeamAcceptResult{Path: workspace.TeamFile, ID: res.Team.ID, SHA256: res.SHA256, Endpoints: res.Team.Etcd,
				SendsTo: res.Dialed, Reopened: res.Reopened}, nil
		}).personOnly("accept the folder's team file, which sends this machine's etcd credentials to its endpoints"),
}
