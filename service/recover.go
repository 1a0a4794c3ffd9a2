package service

import (
	"errors"
	"time"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/workspace"
)

// recoverWorkspace runs each time a serving process opens a workspace store
// (docs/runtime.md §2.3.2, §2.4.1): every session with an
// active goal or a live turn this process does not hold goes through
// goal.State.RecoverAfterRestart. The turns a process that is gone left
// live are ended, and an active goal one of them was driving is paused;
// this process's own turns are left alone (a client that removed the folder
// with a live turn holds it open, so there are none at a reopen, but a turn
// is never taken for a dead one by its own process). The clock of an active
// goal is taken over, as a one-shot command may have stamped it, and its
// wall-clock timer is armed. A pause is published like any change; the
// clients opening the folder are told too (commands.Client.FolderURI).
//
// In a team folder (docs/team.md) other daemons serve the same sessions at
// once: the turns of a daemon that holds its lease (workspace.Workspace.Alive)
// are not left, and the goal clock it runs is not taken over
// (goal.State.RecoverLeftTurns). The same recovery runs again when a
// daemon's lease is gone (peerGone).
func (s *Service) recoverWorkspace(w *workspace.Workspace) error {
	sessions, err := w.Sessions()
	if err != nil {
		return err
	}
	alive := func(owner string) bool { return w.Alive(owner) }
	for _, sess := range sessions {
		if sess.Goal.Status() != goal.Active && !sess.Goal.HasTurnLeftBy(s.clock, alive) {
			continue
		}
		committed, err := w.Update(sess.Name, func(st *workspace.Session) (workspace.Change, error) {
			changed, cs := st.Goal.RecoverLeftTurns(s.Now(), st.UpdatedAt, alive)
			if !changed {
				return workspace.Change{}, nil
			}
			return StoredGoalChange(cs), nil
		})
		if err != nil {
			return err
		}
		s.arm(w, committed)
	}
	return nil
}

// peerGone applies the restart rule to the turns another daemon of w's
// team left live when its lease went (workspace.Options.OnPeerGone): every
// daemon still serving the folder tries, and compare-and-set lets the first
// pause the goal; the others then find nothing left to end.
func (s *Service) peerGone(w *workspace.Workspace, identity string) {
	if err := s.recoverWorkspace(w); err != nil && !errors.Is(err, workspace.ErrClosed) {
		s.log.Warn("cannot recover the turns of a daemon that is gone", "workspace", w.Root(), "daemon", identity, "err", err)
	}
}

// armWallClock re-arms a session's wall-clock timer on every committed goal
// change.
func (s *Service) armWallClock(n workspace.Notice) {
	if n.Change.Goal {
		s.arm(n.Workspace, n.Session)
	}
}

// arm keeps one timer per session whose goal is active with a wall-clock
// budget: when it fires the goal is blocked at once and clients are told
// (docs/runtime.md §2.4). The time left is measured on the monotonic clock, as
// the timer is, so a step of the system clock moves neither.
func (s *Service) arm(w *workspace.Workspace, sess workspace.Session) {
	key := timerKey{w.Root(), sess.Name}
	s.timersMu.Lock()
	defer s.timersMu.Unlock()
	if t, ok := s.timers[key]; ok {
		t.Stop()
		delete(s.timers, key)
	}
	left, ok := sess.Goal.WallClockLeft(s.Now())
	if !ok {
		return
	}
	s.timers[key] = time.AfterFunc(left, func() {
		_, err := w.Update(key.session, func(st *workspace.Session) (workspace.Change, error) {
			cs := st.Goal.CheckWallClock(s.Now())
			if len(cs) == 0 {
				return workspace.Change{}, nil
			}
			return StoredGoalChange(cs), nil
		})
		if err != nil {
			s.log.Warn("wall-clock budget check failed", "workspace", w.Root(), "session", key.session, "err", err)
		}
	})
}

// timerKey names a session of a folder; a folder reopened by the process
// keeps its sessions' keys, so its timers are replaced, not doubled.
type timerKey struct {
	root    string
	session string
}
