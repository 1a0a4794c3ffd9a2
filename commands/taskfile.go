package commands

import (
	"errors"
	"time"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/workspace"
)

// Task files (RUNTIME.md §4; docs/task-files.md). The workspace watches
// the task files of the current goals and calls taskFileChanged
// (Options.OnTaskFile) when one really changed on disk: seen by an event,
// by the verification every 2 s (what events miss: a mount over the
// folder, a renamed ancestor), or when a folder is opened (a change made
// while no daemon had it open). Every session whose goal references that
// path records it, and clients with the folder open are told with
// agentd/taskFileChanged followed by agentd/goalChanged. The next turn's
// goal reminder tells the model once.

// TaskFileChanged is the params of agentd/taskFileChanged (PROTOCOL.md §4).
type TaskFileChanged struct {
	Workspace string    `json:"workspace"`
	Session   string    `json:"session"`
	Revision  uint64    `json:"revision"`
	Path      string    `json:"path"`   // relative to the workspace folder, with forward slashes
	Exists    bool      `json:"exists"` // false: missing (deleted, moved, not created yet)
	SHA256    string    `json:"sha256,omitempty"`
	ChangedAt time.Time `json:"changedAt"` // when agentd recorded the change
}

// taskFileChanged records that the task file rel of w now reads as info, in
// every session whose unfinished goal references it. It runs on a
// goroutine of the watcher, or, for the check made when the folder is
// opened, inside workspace.Registry.Open before it returns; never under a
// lock.
func (s *Service) taskFileChanged(w *workspace.Workspace, rel string, info goal.TaskFileInfo) {
	sessions, err := w.Sessions()
	if err != nil {
		if !errors.Is(err, workspace.ErrClosed) {
			s.log.Warn("cannot record a task file change", "workspace", w.Root(), "taskFile", rel, "err", err)
		}
		return
	}
	for _, sess := range sessions {
		g := sess.Goal.Goal
		if g == nil || g.TaskFile == nil || g.TaskFile.Path != rel || g.Status == goal.Complete {
			continue
		}
		_, err := w.Update(sess.Name, func(st *workspace.Session) (workspace.Change, error) {
			cs := st.Goal.UpdateTaskFile(info, s.now())
			if len(cs) == 0 {
				return workspace.Change{}, nil
			}
			ch := storedGoalChange(cs)
			ch.TaskFile = true
			return ch, nil
		})
		if err != nil && !errors.Is(err, workspace.ErrClosed) {
			s.log.Warn("cannot record a task file change", "workspace", w.Root(), "session", sess.Name, "taskFile", rel, "err", err)
		}
	}
}

// taskFileNotification is the agentd/taskFileChanged of a committed task
// file change, sent before its agentd/goalChanged.
func taskFileNotification(n workspace.Notice, snap *goal.Snapshot, folderURI string) (Notification, bool) {
	if !n.Change.TaskFile || snap == nil || snap.TaskFile == nil {
		return Notification{}, false
	}
	tf := snap.TaskFile
	return Notification{Method: MethodTaskFileChanged, Params: TaskFileChanged{
		Workspace: folderURI, Session: n.Session.Name, Revision: n.Session.Revision,
		Path: tf.Path, Exists: tf.Exists, SHA256: tf.SHA256, ChangedAt: n.Session.UpdatedAt,
	}}, true
}
