package commands

import (
	"context"
	"errors"
	"fmt"
	"github.com/agentd/agentd/commands/protocol"
	"io/fs"
	"os"
	"time"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/service"
	"github.com/agentd/agentd/todo"
	"github.com/agentd/agentd/workspace"
	"github.com/agentd/agentd/workspace/wsfolder"
)

// stateOf renders a stored session for the client, with what this
// machine says of its checks (service.Service.ShowConsent).
func (c *call) stateOf(s workspace.Session) protocol.State {
	items := todo.Clone(s.Todos)
	if items == nil {
		items = []todo.Item{}
	}
	snap, queue := s.Goal.Snapshot(c.svc.Now()).WithPlan(s.Todos), s.Goal.QueueItems()
	c.svc.ShowConsent(c.folder.ws, s.Name, snap, queue)
	return protocol.State{
		Workspace: c.folder.uri,
		Session:   s.Name,
		Revision:  s.Revision,
		Todos:     protocol.TodosState{Items: items, Revision: s.TodosRevision, SubagentLists: todo.CloneSubagentLists(s.SubagentLists)},
		Goal:      wireGoal(snap),
		Queue:     queueOf(&s.Goal, queue),
		Stale:     c.folder.ws.Stale(),
	}
}

// FreshState answers agentd.state for the folder at path (absolute) when
// it has no state file under stateDir yet: the State of a session never
// written (empty list, no goal, revision 0), built without creating
// anything, so that reading a folder from a shell leaves no state behind
// (docs/protocol.md §1.2.2). ok is false when the folder has a state file (or
// it cannot be told): then run the command as usual. session "" is the
// default session; a bad name is args.invalid.
func FreshState(stateDir, path, session string) (st protocol.State, ok bool, err error) {
	if session == "" {
		session = workspace.DefaultSession
	} else if err := checkName("session", session); err != nil {
		return protocol.State{}, false, err
	}
	real, err := folderPath(path)
	if err != nil {
		return protocol.State{}, false, err
	}
	if _, err := os.Stat(wsfolder.StateFile(stateDir, real)); !errors.Is(err, fs.ErrNotExist) {
		return protocol.State{}, false, nil
	}
	team, notice, err := workspace.TeamFileStatus(stateDir, real)
	if team || err != nil {
		return protocol.State{}, false, nil // an accepted team folder's state is in etcd (docs/team.md)
	}
	return protocol.State{Workspace: wsfolder.URIFromPath(real), Session: session, Todos: protocol.TodosState{Items: []todo.Item{}}, Queue: queueOf(&goal.State{}, nil), TeamFile: wireTeamFile(notice)}, true, nil
}

var stateCommands = []Command{
	def[protocol.State](protocol.CmdState,
		func(ctx context.Context, c *call, a *protocol.NoArgs) (protocol.State, error) {
			s, err := c.folder.ws.View(c.session)
			if err != nil {
				return protocol.State{}, err
			}
			st := c.stateOf(s)
			notice, err := c.svc.Registry().TeamFileNotice(c.folder.path)
			if err != nil {
				return protocol.State{}, err
			}
			st.TeamFile = wireTeamFile(notice)
			return st, nil
		}),
	def[protocol.SessionsResult](protocol.CmdSessions,
		func(ctx context.Context, c *call, a *protocol.NoArgs) (protocol.SessionsResult, error) {
			list, err := c.folder.ws.Sessions()
			if err != nil {
				return protocol.SessionsResult{}, err
			}
			out := make([]protocol.SessionInfo, 0, len(list))
			for _, s := range list {
				info := protocol.SessionInfo{Session: s.Name, UpdatedAt: s.UpdatedAt, TodoCount: len(s.Todos)}
				if snap := s.Goal.Snapshot(c.svc.Now()); snap != nil {
					info.GoalStatus = protocol.GoalStatus(snap.Status)
				}
				out = append(out, info)
			}
			return protocol.SessionsResult{Sessions: out}, nil
		}),
	def[protocol.HistoryResult](protocol.CmdHistory,
		func(ctx context.Context, c *call, a *protocol.HistoryArgs) (protocol.HistoryResult, error) {
			if a.Limit < 0 {
				return protocol.HistoryResult{}, argsErrorf("agentd.history: limit must be 0 or more, got %d", a.Limit)
			}
			page, err := c.folder.ws.History(c.session, a.Limit, a.Before)
			if err != nil {
				return protocol.HistoryResult{}, err
			}
			events := make([]protocol.HistoryEvent, len(page.Events))
			for i, e := range page.Events {
				events[i] = wireEvent(e)
			}
			return protocol.HistoryResult{Events: events, More: page.More}, nil
		}),
	def[protocol.State](protocol.CmdTodoSet,
		func(ctx context.Context, c *call, a *protocol.TodoSetArgs) (protocol.State, error) {
			if a.Items == nil {
				return protocol.State{}, argsErrorf("agentd.todo.set: field \"items\" is required (an array of {title, status}; [] clears the list)")
			}
			items, err := todo.Normalize(*a.Items)
			if err != nil {
				return protocol.State{}, err
			}
			var conflict *workspace.Session
			s, err := c.folder.ws.Update(c.session, func(s *workspace.Session) (workspace.Change, error) {
				conflict = nil // a team store may run this again on a newer state
				if a.ExpectedRevision != nil && *a.ExpectedRevision != s.TodosRevision {
					cp := *s
					conflict = &cp
					return workspace.Change{}, nil
				}
				if c.caller.IsAgent() { // an agent's shell acts as the model: it drops no item the goal requires (docs/runtime.md §2.12)
					if err := s.Goal.DroppedRequired(s.Todos, items); err != nil {
						return workspace.Change{}, err
					}
				}
				before := workspace.TodosBefore{Items: s.Todos}
				s.Todos = items
				ch := service.TodoChange(s, protocol.EventTodoSet, goal.User, workspace.TodoPayload{Items: items}, before, c.svc.Now())
				ch.Reads = service.TodoReads(s) // a person's edit changes no counter of the steps: it does not conflict with them (docs/team.md, "A session in parts")
				return ch, nil
			})
			if err != nil {
				return protocol.State{}, err
			}
			if conflict != nil {
				st := c.stateOf(*conflict)
				return protocol.State{}, &Error{Code: todo.CodeConflict,
					Msg:  fmt.Sprintf("the todo list changed since you read it (expected revision %d, current %d): nothing was written; re-read the list and apply your edit again", *a.ExpectedRevision, conflict.TodosRevision),
					Data: map[string]any{"state": st}}
			}
			return c.stateOf(s), nil
		}),
	def[protocol.State](protocol.CmdAwaitChange,
		func(ctx context.Context, c *call, a *protocol.AwaitChangeArgs) (protocol.State, error) {
			timeout := a.TimeoutMs
			switch {
			case timeout == 0:
				timeout = protocol.DefaultAwaitMs
			case timeout < 0 || timeout > protocol.MaxAwaitMs:
				return protocol.State{}, argsErrorf("agentd.awaitChange: timeoutMs must be between 1 and %d (absent or 0: the default %d), got %d", protocol.MaxAwaitMs, protocol.DefaultAwaitMs, timeout)
			}
			return c.stateOrErr(c.svc.AwaitChange(ctx, c.folder.ws, c.session, a.AfterRevision, time.Duration(timeout)*time.Millisecond, c.client.waitsEnd))
		}),
}

func (c *call) stateOrErr(s workspace.Session, err error) (protocol.State, error) {
	if err != nil {
		return protocol.State{}, err
	}
	return c.stateOf(s), nil
}
