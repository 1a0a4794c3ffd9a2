package commands

import (
	"context"

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

type queueAddArgs struct {
	Common
	Objective           string  `json:"objective"`
	CompletionCriterion string  `json:"completionCriterion"`
	Check               *string `json:"check"`
}

type queueIDArgs struct {
	Common
	ID string `json:"id" jsonin:"required"`
}

type queueMoveArgs struct {
	Common
	ID    string `json:"id" jsonin:"required"`
	Index int    `json:"index" jsonin:"required"`
}

type queueAutoAdvanceArgs struct {
	Common
	On bool `json:"on" jsonin:"required"`
}

// userQueue is a host command that changes the session's goal queue as the
// user (service.UpdateQueue) and answers the new State.
func userQueue[A any, PA interface {
	*A
	withCommon
}](id, args, doc string, fn func(c *call, a PA, g *goal.State) (goal.QueueChange, bool, error)) Command {
	return def[State](id, args, doc, true, func(ctx context.Context, c *call, a PA) (any, error) {
		s, err := c.svc.UpdateQueue(c.folder.ws, c.session, func(g *goal.State) (goal.QueueChange, bool, error) { return fn(c, a, g) })
		if err != nil {
			return nil, err
		}
		return c.stateOf(s), nil
	})
}

// queueCommands are the commands of the goal queue (docs/runtime.md §2.9).
var queueCommands = []Command{
	userQueue("agentd.goal.queue.add", "`objective`, `completionCriterion?`, `check?`", "Appends a goal to the session's queue as the user (docs/runtime.md §2.9); its `check` is approved on this machine (§2.10.4); returns `State`.",
		func(c *call, a *queueAddArgs, g *goal.State) (goal.QueueChange, bool, error) {
			ch, err := g.Enqueue(goal.QueueParams{Objective: a.Objective, CompletionCriterion: a.CompletionCriterion, Check: a.Check, CheckSetBy: c.svc.Person()}, c.svc.Now())
			if err == nil && ch.Item.Check != "" {
				err = c.svc.ApproveForPerson(c.folder.ws, ch.Item.Check) // the person gave it here (docs/runtime.md §2.10.4)
			}
			return ch, err == nil, err
		}).personOnly("add a goal to the queue"),
	def[State]("agentd.goal.queue.list", "-", "The session's `State`, whose `queue` lists the upcoming goals.", true,
		func(ctx context.Context, c *call, a *noArgs) (any, error) {
			s, err := c.folder.ws.View(c.session)
			if err != nil {
				return nil, err
			}
			return c.stateOf(s), nil
		}),
	userQueue("agentd.goal.queue.remove", "`id`", "Removes the queued goal `id`; returns `State`.",
		func(c *call, a *queueIDArgs, g *goal.State) (goal.QueueChange, bool, error) {
			ch, err := g.Dequeue(a.ID)
			return ch, err == nil, err
		}).personOnly("remove a goal the person queued"),
	userQueue("agentd.goal.queue.move", "`id`, `index` (0 is first)", "Moves the queued goal `id` to `index`; returns `State`.",
		func(c *call, a *queueMoveArgs, g *goal.State) (goal.QueueChange, bool, error) {
			return g.MoveQueued(a.ID, a.Index)
		}).personOnly("reorder the person's queue"),
	userQueue("agentd.goal.queue.setAutoAdvance", "`on`", "Turns advancing to the first queued goal on completion on or off; returns `State`.",
		func(c *call, a *queueAutoAdvanceArgs, g *goal.State) (goal.QueueChange, bool, error) {
			ch, ok := g.SetAutoAdvance(a.On)
			return ch, ok, nil
		}).personOnly("turn the queue's advance on or off"),
}
