package commands

import (
	"context"
	"github.com/agentd/agentd/commands/protocol"

	"github.com/agentd/agentd/goal"
)

// queueOf is the queue of g for the client (protocol.QueueState): items
// are g.QueueItems() with what this machine says of their checks filled in
// (service.Service.ShowConsent).
func queueOf(g *goal.State, items []goal.QueuedGoal) protocol.QueueState {
	return protocol.QueueState{Items: wireQueue(items), AutoAdvance: g.AutoAdvance()}
}

// userQueue is a host command that changes the session's goal queue as the
// user (service.UpdateQueue) and answers the new State.
func userQueue[A any, PA interface {
	*A
	withCommon
}](id protocol.CommandID, fn func(c *call, a PA, g *goal.State) (goal.QueueChange, bool, error)) Command {
	return def[protocol.State, A](id, func(ctx context.Context, c *call, a PA) (protocol.State, error) {
		s, err := c.svc.UpdateQueue(c.folder.ws, c.session, func(g *goal.State) (goal.QueueChange, bool, error) { return fn(c, a, g) })
		if err != nil {
			return protocol.State{}, err
		}
		return c.stateOf(s), nil
	})
}

// queueCommands are the commands of the goal queue (docs/runtime.md §2.9).
var queueCommands = []Command{
	userQueue(protocol.CmdQueueAdd,
		func(c *call, a *protocol.QueueAddArgs, g *goal.State) (goal.QueueChange, bool, error) {
			ch, err := g.Enqueue(goal.QueueParams{ID: a.ID, Objective: a.Objective, CompletionCriterion: a.CompletionCriterion, Check: a.Check, CheckSetBy: c.svc.Person(), Budget: a.BudgetUpdate}, c.svc.Now())
			if err == nil && ch.Item != nil && ch.Item.Check != "" {
				err = c.svc.ApproveForPerson(c.folder.ws, ch.Item.Check) // the person gave it here (docs/runtime.md §2.10.4)
			}
			return ch, err == nil && ch.Item != nil, err // Item nil: queued already under its id
		}).personOnly("add a goal to the queue"),
	def[protocol.State](protocol.CmdQueueList,
		func(ctx context.Context, c *call, a *protocol.NoArgs) (protocol.State, error) {
			s, err := c.folder.ws.View(c.session)
			if err != nil {
				return protocol.State{}, err
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
