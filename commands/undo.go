package commands

import (
	"context"
	"errors"
	"github.com/agentd/agentd/commands/protocol"

	"github.com/agentd/agentd/todo"
	"github.com/agentd/agentd/workspace"
)

var undoCommands = []Command{
	def[protocol.UndoResult](protocol.CmdUndo,
		func(ctx context.Context, c *call, a *protocol.UndoArgs) (protocol.UndoResult, error) {
			if err := workspace.CheckRequestID(a.RequestID); err != nil {
				return protocol.UndoResult{}, err
			}
			s, undone, err := c.svc.Undo(c.folder.ws, c.session, a.Scope, a.ExpectedRevision, a.RequestID)
			var conflict *protocol.Error
			if errors.As(err, &conflict) && conflict.Code == todo.CodeConflict {
				cur, verr := c.folder.ws.View(c.session)
				if verr != nil {
					return protocol.UndoResult{}, verr
				}
				return protocol.UndoResult{}, &Error{Code: conflict.Code, Msg: conflict.Msg, Data: map[string]any{"state": c.stateOf(cur)}}
			}
			if err != nil {
				return protocol.UndoResult{}, err
			}
			return protocol.UndoResult{State: c.stateOf(s), Undone: wireEvent(undone)}, nil
		}).personOnly("undo a change, which may be one the person made"),
}
