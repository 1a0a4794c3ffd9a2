package commands

import (
	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/todo"
	"github.com/agentd/agentd/workspace"
)

// Notification is one server→client notification (PROTOCOL.md §4).
type Notification struct {
	Method string
	Params any
}

// TodoChanged is the params of agentd/todoChanged.
type TodoChanged struct {
	Workspace string      `json:"workspace"`
	Session   string      `json:"session"`
	Revision  uint64      `json:"revision"`
	Items     []todo.Item `json:"items"`
	Actor     string      `json:"actor"`
}

// GoalChanged is the params of agentd/goalChanged.
type GoalChanged struct {
	Workspace string         `json:"workspace"`
	Session   string         `json:"session"`
	Revision  uint64         `json:"revision"`
	Goal      *goal.Snapshot `json:"goal"`
	Change    GoalChange     `json:"change"`
}

// GoalChange says what happened to the goal.
type GoalChange struct {
	Kind   string      `json:"kind"`
	Status goal.Status `json:"status,omitempty"`
	Reason string      `json:"reason,omitempty"`
	Actor  string      `json:"actor"`
}

// Notifications returns what a client that has n's workspace folder open as
// folderURI must be sent about n, in order.
func (s *Service) Notifications(n workspace.Notice, folderURI string) []Notification {
	var out []Notification
	if n.Change.Todos {
		items := todo.Clone(n.Session.Todos)
		if items == nil {
			items = []todo.Item{}
		}
		out = append(out, Notification{Method: "agentd/todoChanged", Params: TodoChanged{
			Workspace: folderURI, Session: n.Session.Name, Revision: n.Session.Revision, Items: items, Actor: n.Change.Actor}})
	}
	if n.Change.Goal {
		snap := n.Session.Goal.Snapshot(s.now())
		gc := GoalChange{Kind: n.Change.Kind, Reason: n.Change.Reason, Actor: n.Change.Actor}
		if snap != nil {
			gc.Status = snap.Status
		}
		out = append(out, Notification{Method: "agentd/goalChanged", Params: GoalChanged{
			Workspace: folderURI, Session: n.Session.Name, Revision: n.Session.Revision, Goal: snap, Change: gc}})
	}
	return out
}
