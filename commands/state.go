package commands

import (
	"context"
	"errors"
	"fmt"
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
		Goal:      s.Goal.Snapshot(c.svc.Now()),
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

type noArgs struct{ Common }

type historyArgs struct {
	Common
	Limit  int    `json:"limit"`
	Before uint64 `json:"before"`
}

type todoSetArgs struct {
	Common
	Items            *[]todo.Item `json:"items"`
	ExpectedRevision *uint64      `json:"expectedRevision"`
}

type awaitArgs struct {
	Common
	AfterRevision uint64 `json:"afterRevision"`
	TimeoutMs     int64  `json:"timeoutMs"`
}

// Bounds of agentd.awaitChange's timeoutMs.
const (
	defaultAwaitMs = 30_000
	maxAwaitMs     = 300_000
)

var stateCommands = []Command{
	def[State]("agentd.state", "-", "The session's `State`: todo list, goal snapshot, revision.", true,
		func(ctx context.Context, c *call, a *noArgs) (any, error) {
			s, err := c.folder.ws.View(c.session)
			if err != nil {
				return nil, err
			}
			st := c.stateOf(s)
			if st.TeamFile, err = c.svc.Registry().TeamFileNotice(c.folder.path); err != nil {
				return nil, err
			}
			return st, nil
		}),
	def[SessionsResult]("agentd.sessions", "-", "`{sessions: [{session, updatedAt, todoCount, goalStatus}]}` of the workspace folder.", true,
		func(ctx context.Context, c *call, a *noArgs) (any, error) {
			list, err := c.folder.ws.Sessions()
			if err != nil {
				return nil, err
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
	def[HistoryResult]("agentd.history", "`limit?` (default 50), `before?` (a `seq`)", "`{events: [{seq, at, actor, kind, reason?, revision, before?, payload?}], more}`, newest first, only events older than `before` when given; at most 1 MiB of events per reply (at least one event); `more`: older events exist, ask again with `before` = the last `seq`.", true,
		func(ctx context.Context, c *call, a *historyArgs) (any, error) {
			if a.Limit < 0 {
				return nil, argsErrorf("agentd.history: limit must be 0 or more, got %d", a.Limit)
			}
			page, err := c.folder.ws.History(c.session, a.Limit, a.Before)
			if err != nil {
				return nil, err
			}
			return HistoryResult{Events: page.Events, More: page.More}, nil
		}),
	def[State]("agentd.todo.set", "`items`, `expectedRevision?`", "Replaces the todo list as the user (compare-and-set on `todos.revision`); returns `State`; a stale revision answers `todo.conflict` with `data.state`.", true,
		func(ctx context.Context, c *call, a *todoSetArgs) (any, error) {
			if a.Items == nil {
				return nil, argsErrorf("agentd.todo.set: field \"items\" is required (an array of {title, status}; [] clears the list)")
			}
			items, err := todo.Normalize(*a.Items)
			if err != nil {
				return nil, err
			}
			var conflict *workspace.Session
			s, err := c.folder.ws.Update(c.session, func(s *workspace.Session) (workspace.Change, error) {
				conflict = nil // a team store may run this again on a newer state
				if a.ExpectedRevision != nil && *a.ExpectedRevision != s.TodosRevision {
					cp := *s
					conflict = &cp
					return workspace.Change{}, nil
				}
				before := service.TodosBefore{Items: s.Todos}
				s.Todos = items
				return service.TodoChange(s, "todo.set", goal.User, map[string]any{"items": items}, before, c.svc.Now()), nil
			})
			if err != nil {
				return nil, err
			}
			if conflict != nil {
				st := c.stateOf(*conflict)
				return nil, &Error{Code: todo.CodeConflict,
					Msg:  fmt.Sprintf("the todo list changed since you read it (expected revision %d, current %d): nothing was written; re-read the list and apply your edit again", *a.ExpectedRevision, conflict.TodosRevision),
					Data: map[string]any{"state": st}}
			}
			return c.stateOf(s), nil
		}),
	def[State]("agentd.awaitChange", "`afterRevision`, `timeoutMs?` (absent or 0: the default 30000; at most 300000)", "Waits until the session's revision is above `afterRevision`, the timeout passes, the connection is shut down, or the request is cancelled; returns `State`.", true,
		func(ctx context.Context, c *call, a *awaitArgs) (any, error) {
			timeout := a.TimeoutMs
			switch {
			case timeout == 0:
				timeout = defaultAwaitMs
			case timeout < 0 || timeout > maxAwaitMs:
				return nil, argsErrorf("agentd.awaitChange: timeoutMs must be between 1 and %d (absent or 0: the default %d), got %d", maxAwaitMs, defaultAwaitMs, timeout)
			}
			return c.stateOrErr(c.svc.AwaitChange(ctx, c.folder.ws, c.session, a.AfterRevision, time.Duration(timeout)*time.Millisecond, c.client.waitsEnd))
		}),
}

func (c *call) stateOrErr(s workspace.Session, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return c.stateOf(s), nil
}
