package commands

import (
	"context"
	"errors"

	"github.com/agentd/agentd/service"
	"github.com/agentd/agentd/workspace"
)

// UndoResult is the answer of agentd.undo: the State after the undo, and
// the change it reverted (its history event, docs/protocol.md §3).
type UndoResult struct {
	State
	Undone workspace.Event `json:"undone"`
}

type undoArgs struct {
	Common
	Scope            service.UndoScope `json:"scope"`
	ExpectedRevision *uint64           `json:"expectedRevision"`
}

var undoCommands = []Command{
	def[UndoResult]("agentd.undo", "`scope?` (`\"todo\"` or `\"goal\"`; absent: the newest change of either), `expectedRevision?`", "Reverts the newest change of the todo list or the goal as the user (docs/runtime.md §6); returns `State` and `undone`: the history event it reverted; a change newer than `expectedRevision`, or one that came in between, answers `todo.conflict` with `data.state`.", true,
		func(ctx context.Context, c *call, a *undoArgs) (any, error) {
			s, undone, err := c.svc.Undo(c.folder.ws, c.session, a.Scope, a.ExpectedRevision)
			var ue *service.UndoError
			if errors.As(err, &ue) && ue.Conflict {
				cur, verr := c.folder.ws.View(c.session)
				if verr != nil {
					return nil, verr
				}
				return nil, &Error{Code: ue.Code, Msg: ue.Msg, Data: map[string]any{"state": c.stateOf(cur)}}
			}
			if err != nil {
				return nil, err
			}
			return UndoResult{State: c.stateOf(s), Undone: undone}, nil
		}).personOnly("undo a change, which may be one the person made"),
}
