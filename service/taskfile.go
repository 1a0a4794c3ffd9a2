package service

import (
	"errors"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/workspace"
)

// Task files (docs/runtime.md §4; docs/task-files.md). A daemon's watcher
// (workspace/taskfile) watches the task files of the current goals and
// calls taskFileChanged (taskfile.Options.OnChange) when one really changed
// on disk: seen by an event, by the verification every 2 s (what events
// miss: a mount over the folder, a renamed ancestor), or when a folder is
// opened (a change made while no daemon had it open). Every session whose goal references that
// path records it, and clients with the folder open are told with
// agentd/taskFileChanged followed by agentd/goalChanged. The next turn's
// goal reminder tells the model once.

// taskFileChanged records that the task file rel of w now reads as info, in
// every session whose goal references it (goal.State.ReferencedTaskFile).
// It runs on a goroutine of the watcher, or, for the check made when the
// folder is opened, inside workspace.Registry.Open before it returns (the
// commit feed's FeedOpened); never under a lock.
func (s *Service) taskFileChanged(w *workspace.Workspace, rel string, info goal.TaskFileInfo) {
	sessions, err := w.Sessions()
	if err != nil {
		if !errors.Is(err, workspace.ErrClosed) {
			s.log.Warn("cannot record a task file change", "workspace", w.Root(), "taskFile", rel, "err", err)
		}
		return
	}
	for _, sess := range sessions {
		if tf := sess.Goal.ReferencedTaskFile(); tf == nil || tf.Path != rel {
			continue
		}
		_, err := w.Update(sess.Name, func(st *workspace.Session) (workspace.Change, error) {
			now := s.Now()
			before := st.Goal.Snapshot(now)
			cs := st.Goal.UpdateTaskFile(info, now)
			if len(cs) == 0 {
				return workspace.Change{}, nil
			}
			ch := StoredGoalChange(before, cs)
			ch.TaskFile = true
			return ch, nil
		})
		if err != nil && !errors.Is(err, workspace.ErrClosed) {
			s.log.Warn("cannot record a task file change", "workspace", w.Root(), "session", sess.Name, "taskFile", rel, "err", err)
		}
	}
}
