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
	alive := teamAlive(w)
	for _, sess := range sessions {
		// A check marked running that no run of this process will
		// finish, and no live daemon of a team runs, was left by a process
		// that ended (docs/runtime.md §2.10.3).
		leftCheck := sess.Goal.CheckLeft(s.clockID(), s.checks.runs(w.Root(), sess.Name), alive)
		s.armWait(w, sess) // a wait whose time passed wakes now (docs/runtime.md §2.13)
		if sess.Goal.Status() != goal.Active && sess.Goal.Status() != goal.Waiting && !sess.Goal.HasTurnLeftBy(s.clockID(), alive) && !leftCheck {
			continue
		}
		if leftCheck {
			s.killLeft(w, sess)
		}
		committed, err := w.Update(sess.Name, func(st *workspace.Session) (workspace.Change, error) {
			now := s.Now()
			before := st.Goal.Snapshot(now)
			var cs []goal.Change
			if st.Goal.CheckLeft(s.clockID(), s.checks.runs(w.Root(), sess.Name), alive) {
				cs = st.Goal.RecoverCheck(now)
			}
			changed, more := st.Goal.RecoverLeftTurns(now, st.UpdatedAt, alive)
			cs = append(cs, more...)
			if !changed && len(cs) == 0 {
				return workspace.Change{}, nil
			}
			return StoredGoalChange(before, cs), nil
		})
		if err != nil {
			return err
		}
		s.arm(w, committed)
	}
	return nil
}

// recoverChecks runs each time a one-shot process opens a workspace store
// (docs/runtime.md §2.10.3): a check marked running there that CheckLeft
// says no process will finish (in a bbolt folder the file lock keeps every
// other process off the store; in a team folder the daemon that runs it
// holds its lease) has its process group killed and its mark cleared, as
// recoverWorkspace does. Turns and goals are left to the next serving
// process (§2.3.2).
func (s *Service) recoverChecks(w *workspace.Workspace) error {
	sessions, err := w.Sessions()
	if err != nil {
		return err
	}
	alive := teamAlive(w)
	for _, sess := range sessions {
		if !sess.Goal.CheckLeft(s.clockID(), s.checks.runs(w.Root(), sess.Name), alive) {
			continue
		}
		s.killLeft(w, sess)
		if _, err := s.UpdateGoal(w, sess.Name, func(g *goal.State) ([]goal.Change, error) {
			if !g.CheckLeft(s.clockID(), s.checks.runs(w.Root(), sess.Name), alive) {
				return nil, nil
			}
			return g.RecoverCheck(s.Now()), nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// teamAlive says which other processes still hold a team folder
// (workspace.Workspace.Alive); nil for a folder of this machine, where the
// file lock keeps every other serving process off: the rules then take
// what they find left for a process that ended (goal.State.RecoverLeftTurns).
func teamAlive(w *workspace.Workspace) func(owner string) bool {
	if !w.Shared() {
		return nil
	}
	return func(owner string) bool { return w.Alive(owner) }
}

// killLeft kills the process group recorded for the running check of sess,
// which a process that ended left (killLeftCheck).
func (s *Service) killLeft(w *workspace.Workspace, sess workspace.Session) {
	raw, goalID, ok := sess.Goal.RunningCheckProcess()
	if !ok {
		return
	}
	key := checkKey{root: w.Root(), session: sess.Name, goalID: goalID}
	if p, ok := leftProcess(raw); ok && goalID != "" && killLeftCheck(p, key.marks()) {
		s.log.Info("killed the process group of a check an ended agentd left running", "workspace", w.Root(), "session", sess.Name, "pgid", p.Pgid)
	}
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
// budget, set for the sooner of the next warning threshold and the end of
// the budget: when it fires the warning is given (docs/runtime.md §2.4.4)
// or the goal is blocked at once (§2.4), and clients are told; the commit
// arms the timer again (armWallClock). The time left is measured on the monotonic clock, as
// the timer is, so a step of the system clock moves neither.
func (s *Service) arm(w *workspace.Workspace, sess workspace.Session) {
	key := timerKey{w.Root(), sess.Name}
	s.timersMu.Lock()
	defer s.timersMu.Unlock()
	if t, ok := s.timers[key]; ok {
		t.Stop()
		delete(s.timers, key)
	}
	now := s.Now()
	left, ok := sess.Goal.WallClockLeft(now)
	if !ok {
		return
	}
	if warn, ok := sess.Goal.NextWallClockWarning(now); ok {
		left = min(left, warn)
	}
	s.timers[key] = time.AfterFunc(left, func() {
		_, err := w.Update(key.session, func(st *workspace.Session) (workspace.Change, error) {
			now := s.Now()
			before := st.Goal.Snapshot(now)
			cs := st.Goal.CheckWallClock(now)
			if len(cs) == 0 {
				return workspace.Change{}, nil
			}
			return StoredGoalChange(before, cs), nil
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
