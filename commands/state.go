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

// State is what clients read of a session (docs/protocol.md §3).
type State struct {
	Workspace string         `json:"workspace"` // folder URI
	Session   string         `json:"session"`
	Revision  uint64         `json:"revision"` // the session's revision, bumped by every change
	Todos     TodosState     `json:"todos"`
	Goal      *goal.Snapshot `json:"goal"`  // null when there is no goal
	Queue     QueueState     `json:"queue"` // the upcoming goals (docs/runtime.md §2.9)
	// Stale: the folder's team store (docs/team.md) does not answer; this is
	// the last state this daemon saw. Absent otherwise.
	Stale bool `json:"stale,omitempty"`
	// TeamFile: the folder has a .agentd/team.json that this machine does
	// not use (not accepted, or unusable): this machine's own state serves
	// it (docs/team.md). Absent otherwise. agentd.state only.
	TeamFile *workspace.TeamFileNotice `json:"teamFile,omitempty"`
}

// TodosState is the todo list and the session revision of its last change,
// which agentd.todo.set compares expectedRevision with.
type TodosState struct {
	Items    []todo.Item `json:"items"`
	Revision uint64      `json:"revision"`
}

// stateOf renders a stored session for the client, with what this
// machine says of its checks (service.Service.ShowConsent).
func (c *call) stateOf(s workspace.Session) State {
	items := todo.Clone(s.Todos)
	if items == nil {
		items = []todo.Item{}
	}
	st := State{
		Workspace: c.folder.uri,
		Session:   s.Name,
		Revision:  s.Revision,
		Todos:     TodosState{Items: items, Revision: s.TodosRevision},
		Goal:      s.Goal.Snapshot(c.svc.Now()).WithPlan(s.Todos),
		Queue:     queueOf(&s.Goal),
		Stale:     c.folder.ws.Stale(),
	}
	c.svc.ShowConsent(c.folder.ws, s.Name, st.Goal, st.Queue.Items)
	return st
}

// FreshState answers agentd.state for the folder at path (absolute) when
// it has no state file under stateDir yet: the State of a session never
// written (empty list, no goal, revision 0), built without creating
// anything, so that reading a folder from a shell leaves no state behind
// (docs/protocol.md §1.2.2). ok is false when the folder has a state file (or
// it cannot be told): then run the command as usual. session "" is the
// default session; a bad name is args.invalid.
func FreshState(stateDir, path, session string) (st State, ok bool, err error) {
	if session == "" {
		session = workspace.DefaultSession
	} else if err := checkName("session", session); err != nil {
		return State{}, false, err
	}
	real, err := folderPath(path)
	if err != nil {
		return State{}, false, err
	}
	if _, err := os.Stat(wsfolder.StateFile(stateDir, real)); !errors.Is(err, fs.ErrNotExist) {
		return State{}, false, nil
	}
	team, notice, err := workspace.TeamFileStatus(stateDir, real)
	if team || err != nil {
		return State{}, false, nil // an accepted team folder's state is in etcd (docs/team.md)
	}
	return State{Workspace: wsfolder.URIFromPath(real), Session: session, Todos: TodosState{Items: []todo.Item{}}, Queue: queueOf(&goal.State{}), TeamFile: notice}, true, nil
}

// SessionInfo is one row of agentd.sessions.
type SessionInfo struct {
	Session    string      `json:"session"`
	UpdatedAt  time.Time   `json:"updatedAt"`
	TodoCount  int         `json:"todoCount"`
	GoalStatus goal.Status `json:"goalStatus,omitempty"` // "" when there is no goal
}

// SessionsResult is the answer of agentd.sessions: every session of the
// workspace folder.
type SessionsResult struct {
	Sessions []SessionInfo `json:"sessions"`
}

// HistoryResult is the answer of agentd.history: events newest first, and
// whether older ones exist (ask again with before = the last Seq).
type HistoryResult struct {
	Events []workspace.Event `json:"events"`
	More   bool              `json:"more"`
}

var stateCommands = []Command{
	def[State](protocol.CmdState,
		func(ctx context.Context, c *call, a *protocol.NoArgs) (State, error) {
			s, err := c.folder.ws.View(c.session)
			if err != nil {
				return State{}, err
			}
			st := c.stateOf(s)
			if st.TeamFile, err = c.svc.Registry().TeamFileNotice(c.folder.path); err != nil {
				return State{}, err
			}
			return st, nil
		}),
	def[SessionsResult](protocol.CmdSessions,
		func(ctx context.Context, c *call, a *protocol.NoArgs) (SessionsResult, error) {
			list, err := c.folder.ws.Sessions()
			if err != nil {
				return SessionsResult{}, err
			}
			out := make([]SessionInfo, 0, len(list))
			for _, s := range list {
				info := SessionInfo{Session: s.Name, UpdatedAt: s.UpdatedAt, TodoCount: len(s.Todos)}
				if snap := s.Goal.Snapshot(c.svc.Now()); snap != nil {
					info.GoalStatus = snap.Status
				}
				out = append(out, info)
			}
			return SessionsResult{Sessions: out}, nil
		}),
	def[HistoryResult](protocol.CmdHistory,
		func(ctx context.Context, c *call, a *protocol.HistoryArgs) (HistoryResult, error) {
			if a.Limit < 0 {
				return HistoryResult{}, argsErrorf("agentd.history: limit must be 0 or more, got %d", a.Limit)
			}
			page, err := c.folder.ws.History(c.session, a.Limit, a.Before)
			if err != nil {
				return HistoryResult{}, err
			}
			return HistoryResult{Events: page.Events, More: page.More}, nil
		}),
	def[State](protocol.CmdTodoSet,
		func(ctx context.Context, c *call, a *protocol.TodoSetArgs) (State, error) {
			if a.Items == nil {
				return State{}, argsErrorf("agentd.todo.set: field \"items\" is required (an array of {title, status}; [] clears the list)")
			}
			items, err := todo.Normalize(*a.Items)
			if err != nil {
				return State{}, err
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
				return service.TodoChange(s, "todo.set", goal.User, workspace.TodoPayload{Items: items}, before, c.svc.Now()), nil
			})
			if err != nil {
				return State{}, err
			}
			if conflict != nil {
				st := c.stateOf(*conflict)
				return State{}, &Error{Code: todo.CodeConflict,
					Msg:  fmt.Sprintf("the todo list changed since you read it (expected revision %d, current %d): nothing was written; re-read the list and apply your edit again", *a.ExpectedRevision, conflict.TodosRevision),
					Data: map[string]any{"state": st}}
			}
			return c.stateOf(s), nil
		}),
	def[State](protocol.CmdAwaitChange,
		func(ctx context.Context, c *call, a *protocol.AwaitChangeArgs) (State, error) {
			timeout := a.TimeoutMs
			switch {
			case timeout == 0:
				timeout = protocol.DefaultAwaitMs
			case timeout < 0 || timeout > protocol.MaxAwaitMs:
				return State{}, argsErrorf("agentd.awaitChange: timeoutMs must be between 1 and %d (absent or 0: the default %d), got %d", protocol.MaxAwaitMs, protocol.DefaultAwaitMs, timeout)
			}
			return c.stateOrErr(c.svc.AwaitChange(ctx, c.folder.ws, c.session, a.AfterRevision, time.Duration(timeout)*time.Millisecond, c.client.waitsEnd))
		}),
}

func (c *call) stateOrErr(s workspace.Session, err error) (State, error) {
	if err != nil {
		return State{}, err
	}
	return c.stateOf(s), nil
}
