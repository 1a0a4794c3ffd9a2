package service

import (
	"context"
	"errors"
	"time"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/workspace"
	"github.com/agentd/agentd/workspace/taskfile"
)

// Waiting goals (docs/runtime.md §2.13): a Daemon arms each waiting
// goal's wake conditions, at every commit of its session and each time it
// opens the folder (so a time that passed while no daemon ran wakes the
// goal at start, and path watches are made again): a timer for until, a
// watch of the paths, a poll of the check with back-off. The first that
// holds wakes the goal (goal.State.Wake); the commit disarms the rest.

// Back-off of the check a wait polls: the first run after waitCheckFirst,
// each next one twice as late, at most waitCheckMax apart. Tests change
// them.
var (
	waitCheckFirst = 5 * time.Second
	waitCheckMax   = 10 * time.Minute
)

// armedWait is what is armed for one session's wait.
type armedWait struct {
	goalID string
	since  time.Time
	stop   []func()
}

func (a *armedWait) disarm() {
	for _, f := range a.stop {
		f()
	}
}

// armWaitNotice re-arms a session's wait on every committed goal change.
// It runs under the session's lock, so it only starts and stops timers
// and goroutines.
func (s *Service) armWaitNotice(n workspace.Notice) {
	if n.Change.Goal {
		s.armWait(n.Workspace, n.Session)
	}
}

// armWait arms the wake conditions of sess's goal when it waits, unless
// that very wait is armed already, and disarms a wait it no longer has.
func (s *Service) armWait(w *workspace.Workspace, sess workspace.Session) {
	key := timerKey{w.Root(), sess.Name}
	wait, marks, goalID, ok := sess.Goal.WaitingFor()
	s.timersMu.Lock()
	defer s.timersMu.Unlock()
	if old, had := s.waits[key]; had {
		if ok && old.goalID == goalID && old.since.Equal(wait.Since) {
			return
		}
		old.disarm()
		delete(s.waits, key)
	}
	if !ok {
		return
	}
	a := &armedWait{goalID: goalID, since: wait.Since}
	wake := func(reason string) { go s.wake(w, sess.Name, goalID, wait.Since, reason) }
	if wait.Until != nil {
		until := *wait.Until
		t := time.AfterFunc(max(0, until.Sub(s.wall())), func() { wake("the time " + until.Format(time.RFC3339) + " arrived") })
		a.stop = append(a.stop, func() { t.Stop() })
	}
	if len(wait.Paths) > 0 {
		a.stop = append(a.stop, taskfile.WatchPaths(w.Root(), wait.Paths, marks, func(rel string) { wake(rel + " changed") }))
	}
	if wait.CheckPasses {
		ctx, cancel := context.WithCancel(context.Background())
		go s.pollCheck(ctx, w, sess.Name, waitCheckFirst, waitCheckMax, wake)
		a.stop = append(a.stop, cancel)
	}
	s.waits[key] = a
}

// wake wakes the goal of session in ws, if it still waits the wait begun
// at since (goal.State.Wake).
func (s *Service) wake(w *workspace.Workspace, session, goalID string, since time.Time, reason string) {
	_, err := s.UpdateGoal(w, session, func(g *goal.State) ([]goal.Change, error) {
		return g.Wake(goalID, since, reason, s.Now()), nil
	})
	if err != nil && !errors.Is(err, workspace.ErrClosed) {
		s.log.Warn("cannot wake a waiting goal", "workspace", w.Root(), "session", session, "reason", reason, "err", err)
	}
}

// pollCheck runs the goal's check, as the runtime, with back-off (first
// after first, then twice as late each time, at most most apart) until
// it passes (then wake) or ctx ends. A run refused (the check changed,
// lost its approval or runs already) is tried again at the next turn of
// the back-off: the person may approve it meanwhile. The polls of every
// wait run one check at a time (s.polls): a team's etcd may hold any
// number of sessions waiting on an approved check, and each would
// otherwise run it at once with the others.
func (s *Service) pollCheck(ctx context.Context, w *workspace.Workspace, session string, first, most time.Duration, wake func(reason string)) {
	delay := first
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		select {
		case <-ctx.Done():
			return
		case s.polls <- struct{}{}:
		}
		run, _, err := s.runCheck(ctx, w, session, goal.Runtime, "", func() {})
		<-s.polls
		if ctx.Err() != nil {
			return
		}
		if err == nil && run.Passed() {
			wake("the check passed")
			return
		}
		delay = min(2*delay, most)
	}
}

// stopWaits disarms every wait (Close).
func (s *Service) stopWaits() {
	s.timersMu.Lock()
	defer s.timersMu.Unlock()
	for k, a := range s.waits {
		a.disarm()
		delete(s.waits, k)
	}
}

// WaitParams resolves a wait c (goal.ParseWait) for session of ws at
// the service's clock: its paths inside the workspace (taskfile.WaitPath)
// with their marks, and whether the goal's check may run on this machine.
// mode is the wall-clock mode ("" counts). Errors: args.invalid and
// goal.task_file_outside naming the problem.
func (s *Service) WaitParams(ws *workspace.Workspace, session string, c goal.WaitConditions, mode string) (goal.WaitParams, error) {
	p, err := goal.ParseWait(c, mode, s.wall())
	if err != nil {
		return p, err
	}
	for i, path := range p.Paths {
		if p.Paths[i], err = taskfile.WaitPath(ws.Root(), path); err != nil {
			return p, err
		}
	}
	p.Marks = taskfile.Marks(ws.Root(), p.Paths)
	if p.CheckPasses {
		st, err := ws.View(session)
		if err != nil {
			return p, err
		}
		if g := st.Goal.Goal; g != nil && g.Check != nil {
			p.CheckApproved, _ = s.checkConsented(ws, session, g.Check)
		}
	}
	return p, nil
}
