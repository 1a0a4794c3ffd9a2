package commands

import (
	"context"
	"github.com/agentd/agentd/commands/protocol"

	"github.com/agentd/agentd/goal"
)

// QueueState is the session's goal queue as clients read it
// (docs/protocol.md §3): the upcoming goals, first first, and whether a
// complete goal advances to the first of them (docs/runtime.md §2.9).
type QueueState struct {
	Items       []goal.QueuedGoal `json:"items"` // never null
	AutoAdvance bool              `json:"autoAdvance"`
}

// queueOf is the queue of g for the client.
func queueOf(g *goal.State) QueueState {
	return QueueState{Items: g.QueueItems(), AutoAdvance: g.AutoAdvance()}
}

// userQueue is a host command that changes the session's goal queue as the
// user (service.UpdateQueue) and answers the new State.
func userQueue[A any, PA interface {
	*A
	withCommon
}](id protocol.CommandID, fn func(c *call, a PA, g *goal.State) (goal.QueueChange, bool, error)) Command {
	return def[State, A](id, func(ctx context.Context, c *call, a PA) (State, error) {
		s, err := c.svc.UpdateQueue(c.folder.ws, c.session, func(g *goal.State) (goal.QueueChange, bool, error) { return fn(c, a, g) })
		if err != nil {
			return State{}, err
		}
		return c.stateOf(s), nil
	})
}

// queueCommands are the commands of the goal queue (docs/runtime.md §2.9).
var queueCommands = []Command{
	userQueue(protocol.CmdQueueAdd,
		func(c *call, a *protocol.QueueAddArgs, g *goal.State) (goal.QueueChange, bool, error) {
			ch, err := g.Enqueue(goal.QueueParams{ID: a.ID, Objective: a.Objective, CompletionCriterion: a.CompletionCriterion, Check: a.Check, CheckSetBy: c.svc.Person()}, c.svc.Now())
			if err == nil && ch.Item != nil && ch.Item.Check != "" {
				err = c.svc.ApproveForPerson(c.folder.ws, ch.Item.Check) // the person gave it here (docs/runtime.md §2.10.4)
			}
			return ch, err == nil && ch.Item != nil, err // Item nil: queued already under its id
		}).personOnly("add a goal to the queue"),
	def[State](protocol.CmdQueueList,
		func(ctx context.Context, c *call, a *protocol.NoArgs) (State, error) {
			s, err := c.folder.ws.View(c.session)
			if err != nil {
				return State{}, err
			}
			return c.stateOf(s), nil
		}),
	userQueue(protocol.CmdQueueRemove,
		func(c *call, a *protocol.QueueIDArgs, g *goal.State) (goal.QueueChange, bool, error) {
			ch, err := g.Dequeue(a.ID)
			return ch, err == nil, err
		}).personOnly("remove a goal the person queued"),
	userQueue(protocol.CmdQueueMove,
		func(c *call, a *protocol.QueueMoveArgs, g *goal.State) (goal.QueueChange, bool, error) {
			return g.MoveQueued(a.ID, a.Index)
		}).personOnly("reorder the person's queue"),
	userQueue(protocol.CmdQueueSetAutoAdvance,
		func(c *call, a *protocol.QueueAutoAdvanceArgs, g *goal.State) (goal.QueueChange, bool, error) {
			ch, ok := g.SetAutoAdvance(a.On)
			return ch, ok, nil
		}).personOnly("turn the queue's advance on or off"),
}
