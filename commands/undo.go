package commands

import (
	"context"
	"errors"
	"github.com/agentd/agentd/commands/protocol"

	"github.com/agentd/agentd/service"
	"github.com/agentd/agentd/workspace"
)

// UndoResult is the answer of agentd.undo: the State after the undo, and
// the change it reverted (its history event, docs/protocol.md §3).
type UndoResult struct {
	State
	Undone workspace.Event `json:"undone"`
}

var undoCommands = []Command{
	def[UndoResult](protocol.CmdUndo,
		func(ctx context.Context, c *call, a *protocol.UndoArgs) (UndoResult, error) {
			s, undone, err := c.svc.Undo(c.folder.ws, c.session, a.Scope, a.ExpectedRevision)
			var ue *service.UndoError
			if errors.As(err, &ue) && ue.Conflict {
				cur, verr := c.folder.ws.View(c.session)
				if verr != nil {
					return UndoResult{}, verr
				}
				return UndoResult{}, &Error{Code: ue.Code, Msg: ue.Msg, Data: map[string]any{"state": c.stateOf(cur)}}
			}
			if err != nil {
				return UndoResult{}, err
			}
			return UndoResult{State: c.stateOf(s), Undone: undone}, nil
		}).personOnly("undo a change, which may be one the person made"),
}
