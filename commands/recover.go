package commands

import (
	"time"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/workspace"
)

// recoverWorkspace runs when a workspace store is opened: the first time
// this process opens the folder, a goal left active by a previous daemon run
// is paused, its wall clock settled at the last time the session was
// written, so down time is not counted (RUNTIME.md §2.3, [agentd]). A later
// reopen by the same process (the folder was released by its last client
// meanwhile) is no restart and changes nothing.
func (s *Service) recoverWorkspace(w *workspace.Workspace) error {
	s.timersMu.Lock()
	done := s.recovered[w.Root()]
	s.recovered[w.Root()] = true
	s.timersMu.Unlock()
	if done {
		return nil
	}
	sessions, err := w.Sessions()
	if err != nil {
		return err
	}
	for _, sess := range sessions {
		if sess.Goal.Status() != goal.Active && len(sess.Goal.Turns) == 0 {
			continue
		}
		_, err := w.Update(sess.Name, func(st *workspace.Session) (workspace.Change, error) {
			return storedGoalChange(st.Goal.RecoverAfterRestart(s.now(), st.UpdatedAt)), nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// armWallClock keeps one timer per session whose goal is active with a
// wall-clock budget: when it fires the goal is blocked at once and clients
// are told (RUNTIME.md §2.4). It runs on every committed goal change.
func (s *Service) armWallClock(n workspace.Notice) {
	if !n.Change.Goal {
		return
	}
	key := timerKey{n.Workspace, n.Session.Name}
	s.timersMu.Lock()
	defer s.timersMu.Unlock()
	if t, ok := s.timers[key]; ok {
		t.Stop()
		delete(s.timers, key)
	}
	g := n.Session.Goal
	deadline, ok := g.WallClockDeadline(s.now())
	if !ok {
		return
	}
	s.timers[key] = time.AfterFunc(deadline.Sub(s.now()), func() {
		_, err := n.Workspace.Update(key.session, func(st *workspace.Session) (workspace.Change, error) {
			cs := st.Goal.CheckWallClock(s.now())
			if len(cs) == 0 {
				return workspace.Change{}, nil
			}
			return storedGoalChange(cs), nil
		})
		if err != nil {
			s.log.Warn("wall-clock budget check failed", "workspace", n.Workspace.Root(), "session", key.session, "err", err)
		}
	})
}

type timerKey struct {
	ws      *workspace.Workspace
	session string
}
