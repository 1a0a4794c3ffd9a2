package commands

import (
	"fmt"
	"github.com/agentd/agentd/commands/protocol"
	"strings"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/service"
	"github.com/agentd/agentd/todo"
	"github.com/agentd/agentd/workspace"
)

// Notification is one server→client notification (docs/protocol.md §4).
type Notification struct {
	Method string
	Params any
}

// Consent fills in what this machine says of the checks of a goal snapshot
// and of queued goals (service.Service.ShowConsent, docs/runtime.md
// §2.10.4).
type Consent func(snap *goal.Snapshot, queue []goal.QueuedGoal)

// NoticeConsent is the Consent of the session of n on the machine of svc.
func NoticeConsent(svc *service.Service, n workspace.Notice) Consent {
	return func(snap *goal.Snapshot, queue []goal.QueuedGoal) {
		svc.ShowConsent(n.Workspace, n.Session.Name, snap, queue)
	}
}

// Notifications returns what a client that has n's workspace folder open as
// folderURI must be sent about n, in order; now is the service's clock
// (service.Service.Now), which the goal snapshot is taken at; consent, when
// not nil, fills in the approval of the checks of the goal and the queue
// sent.
func Notifications(n workspace.Notice, folderURI string, now goal.Instant, consent Consent) []Notification {
	if n.Store != nil {
		return []Notification{{Method: protocol.MethodStoreChanged, Params: protocol.StoreChanged{Workspace: folderURI, Stale: n.Store.Stale}}}
	}
	var out []Notification
	if n.Change.Todos {
		items := todo.Clone(n.Session.Todos)
		if items == nil {
			items = []todo.Item{}
		}
		out = append(out, Notification{Method: protocol.MethodTodoChanged, Params: protocol.TodoChanged{
			Workspace: folderURI, Session: n.Session.Name, Revision: n.Session.Revision, Items: items, Actor: protocol.Actor(n.Change.Actor),
			SubagentLists: todo.CloneSubagentLists(n.Session.SubagentLists)}})
	}
	if n.Change.Goal {
		snap := n.Session.Goal.Snapshot(now).WithPlan(n.Session.Todos)
		if consent != nil {
			consent(snap, nil)
		}
		kind := n.Change.GoalKind
		if kind == "" {
			kind = goal.ChangeKind(n.Change.Kind.GoalChange())
		}
		gc := protocol.GoalChange{Kind: protocol.GoalChangeKind(kind), Reason: n.Change.Reason, Actor: protocol.Actor(n.Change.Actor), Percent: n.Change.Percent}
		if snap != nil {
			gc.Status = protocol.GoalStatus(snap.Status)
		}
		if note, ok := taskFileNotification(n, snap, folderURI); ok {
			out = append(out, note)
		}
		if done := n.Change.Completed; done != nil {
			// An advance: first the completion, as it ended (docs/runtime.md §2.9).
			wdone := wireGoal(done)
			out = append(out, Notification{Method: protocol.MethodGoalChanged, Params: protocol.GoalChanged{
				Workspace: folderURI, Session: n.Session.Name, Revision: n.Session.Revision, Goal: wdone,
				Change: protocol.GoalChange{Kind: protocol.GoalChangeKind(goal.ChangeComplete), Status: wdone.Status, Reason: wdone.TerminalReason, Actor: wdone.LastActor}}})
		}
		out = append(out, Notification{Method: protocol.MethodGoalChanged, Params: protocol.GoalChanged{
			Workspace: folderURI, Session: n.Session.Name, Revision: n.Session.Revision, Goal: wireGoal(snap), Change: gc}})
	}
	if n.Change.Queue {
		items := n.Session.Goal.QueueItems()
		if consent != nil {
			consent(nil, items)
		}
		q := queueOf(&n.Session.Goal, items)
		out = append(out, Notification{Method: protocol.MethodQueueChanged, Params: protocol.QueueChanged{
			Workspace: folderURI, Session: n.Session.Name, Revision: n.Session.Revision, Items: q.Items, AutoAdvance: q.AutoAdvance, Actor: protocol.Actor(n.Change.Actor)}})
	}
	return out
}

// FormatProgress is a goal's progress in one line, with limits where set:
// "3/20 turns · 1.2k tokens · 4m05s" (the work-done progress message of
// docs/protocol.md §4, and the shell's status line). The noun agrees with the
// limit where one is set ("0/1 turn"), else with the count ("1 token").
func FormatProgress(g *protocol.GoalSnapshot) string {
	turns := goal.Plural(g.TurnsUsed, "turn")
	if b := g.Budget.TurnBudget; b != nil {
		turns = goal.PluralShown(fmt.Sprintf("%d/%d", g.TurnsUsed, *b), *b, "turn")
	}
	tokens := goal.PluralShown(goal.FormatTokens(g.TokensUsed), g.TokensUsed, "token")
	if b := g.Budget.TokenBudget; b != nil {
		tokens = goal.PluralShown(goal.FormatTokens(g.TokensUsed)+"/"+goal.FormatTokens(*b), *b, "token")
	}
	elapsed := goal.FormatElapsed(g.WallClockMs)
	if g.Budget.WallClockBudgetMs != nil {
		elapsed += "/" + goal.FormatElapsed(*g.Budget.WallClockBudgetMs)
	}
	return turns + " · " + tokens + " · " + elapsed
}

// GoalNews is what a client without a panel is shown of a goal change
// (docs/protocol.md §4): work-done progress while the goal is active, and a
// message when it completes or is blocked.
type GoalNews struct {
	Active   bool   // the goal is active: begin or report progress; else end it
	Progress string // "Goal: 3/20 turns · 1.2k tokens · 4m05s"
	Message  string // for window/showMessage; "" when there is nothing to say
	Warning  bool   // Message is a warning (blocked), not information
}

// News says what n means for progress and messages, with the goal
// snapshot taken at now (service.Service.Now); ok is false when n did not
// change the goal.
func News(n workspace.Notice, now goal.Instant) (news GoalNews, ok bool) {
	if !n.Change.Goal {
		return GoalNews{}, false
	}
	snap := n.Session.Goal.Snapshot(now)
	if snap == nil {
		return GoalNews{}, true
	}
	news.Active = snap.Status == goal.Active
	news.Progress = "Goal: " + FormatProgress(wireGoal(snap))
	switch goal.ChangeKind(n.Change.Kind.GoalChange()) {
	case goal.ChangeComplete:
		news.Message = fmt.Sprintf("agentd: goal complete: %s (%s)", oneLine(snap.Objective), FormatProgress(wireGoal(snap)))
	case goal.ChangeAdvance:
		if done := n.Change.Completed; done != nil {
			news.Message = fmt.Sprintf("agentd: goal complete: %s; next goal: %s", oneLine(done.Objective), oneLine(snap.Objective))
		}
	case goal.ChangeBlock:
		news.Message = fmt.Sprintf("agentd: goal blocked: %s: %s", oneLine(snap.Objective), snap.TerminalReason)
		news.Warning = true
	}
	return news, true
}

// oneLine shortens text to one line of at most 80 characters for messages.
func oneLine(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if r := []rune(text); len(r) > 80 {
		return string(r[:79]) + "…"
	}
	return text
}

// taskFileNotification is the agentd/taskFileChanged of a committed task
// file change, sent before its agentd/goalChanged.
func taskFileNotification(n workspace.Notice, snap *goal.Snapshot, folderURI string) (Notification, bool) {
	if !n.Change.TaskFile || snap == nil || snap.TaskFile == nil {
		return Notification{}, false
	}
	tf := snap.TaskFile
	return Notification{Method: protocol.MethodTaskFileChanged, Params: protocol.TaskFileChanged{
		Workspace: folderURI, Session: n.Session.Name, Revision: n.Session.Revision,
		Path: tf.Path, Exists: tf.Exists, SHA256: tf.SHA256, Checkboxes: (*protocol.Checkboxes)(tf.Checkboxes), ChangedAt: n.Session.UpdatedAt,
	}}, true
}
