package service

import (
	"context"
	"fmt"
	"time"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/workspace"
)

// A check's start sent again (agentd.goal.runCheck with a requestId the
// session holds; docs/team.md, "What a write acknowledges") starts no
// second run: it answers the run the first copy started. That run may
// have ended (its result is the goal's last run), or still be marked
// running: by a call of this process that runs it (the copy sent again
// waits for its result), by this process with nothing running it (the
// first copy's start was applied but its answer lost, so that call ran
// nothing: the copy sent again runs it, if the check is still approved
// here), or by another agentd process (it is that one's to run; the copy
// sent again says so). A run that left no result that counts is said to.

// awaitRunEvery bounds one wait for a change of a run being waited on; the
// run is looked at again after it, whatever woke the wait.
const awaitRunEvery = time.Minute

// claim claims run id for the calling run of this process: release, to
// call once it is recorded or will not run, and busy nil; or, when another
// call holds it, release nil and busy, closed once that call released it.
func (c *checks) claim(runID string) (release func(), busy <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, held := c.claimed[runID]; held {
		return nil, ch
	}
	ch := make(chan struct{})
	c.claimed[runID] = ch
	return func() {
		c.mu.Lock()
		delete(c.claimed, runID)
		c.mu.Unlock()
		close(ch)
	}, nil
}

// checkRunAgain answers a check's start sent again, whose first copy the
// session applied as the request r (see above).
func (s *Service) checkRunAgain(ctx context.Context, ws *workspace.Workspace, session string, r workspace.Request) (goal.CheckRun, workspace.Session, error) {
	for {
		st, err := ws.View(session)
		if err != nil {
			return goal.CheckRun{}, workspace.Session{}, err
		}
		var c goal.Check
		if g := st.Goal.Goal; g != nil && g.Check != nil {
			c = *g.Check
		}
		running := r.RunID != "" && c.Running && c.RunID == r.RunID
		var busy <-chan struct{}
		switch {
		case r.RunID != "" && c.LastRun != nil && c.LastRun.RunID == r.RunID:
			return *c.LastRun, st, nil
		case !running:
			return s.runLost(r), st, nil
		case c.RunBy != s.clockID():
			return goal.CheckRun{}, workspace.Session{}, &goal.Error{Code: goal.CodeCheckRunning, Msg: fmt.Sprintf(
				"the run this request started (run %s) is marked running by another agentd process, whose result reaches this one once it has run; wait for it (agentd.awaitChange) rather than sending the request again", r.RunID)}
		default:
			var release func()
			if release, busy = s.checks.claim(r.RunID); release != nil {
				defer release()
				return s.runLeft(ctx, ws, session, st)
			}
		}
		if _, err := s.AwaitChange(ctx, ws, session, st.Revision, awaitRunEvery, busy); err != nil {
			return goal.CheckRun{}, workspace.Session{}, err
		}
	}
}

// runLeft runs the check run that st marks running by this process, which
// nothing runs (its start's answer was lost, so the call that made it ran
// nothing), once the check is still approved here (docs/runtime.md
// §2.10.4); a check no longer approved does not run: its run is recorded
// as not run, and the start refused with goal.check_unapproved.
func (s *Service) runLeft(ctx context.Context, ws *workspace.Workspace, session string, st workspace.Session) (goal.CheckRun, workspace.Session, error) {
	g := st.Goal.Goal
	start := goal.CheckStart{GoalID: g.ID, Command: g.Check.Command, RunID: g.Check.RunID}
	if ok, outside := s.checkConsented(ws, session, g.Check); !ok {
		c := *g.Check
		c.SetOutsideAgentd = outside
		run := goal.CheckRun{ExitCode: -1, At: s.wall(), OutputTail: "agentd: the check did not run: it is not approved on this machine\n"}
		if _, err := s.UpdateGoal(ws, session, func(g *goal.State) ([]goal.Change, error) {
			cs, _ := g.FinishCheck(start, run, s.Now())
			return cs, nil
		}); err != nil {
			return goal.CheckRun{}, workspace.Session{}, err
		}
		return goal.CheckRun{}, workspace.Session{}, goal.UnapprovedError(&c)
	}
	s.log.Info("running the check run whose start's answer was lost", "workspace", ws.Root(), "session", session, "run", start.RunID)
	return s.runStarted(ctx, ws, session, start, st)
}

// runLost is the answer for the run of request r that left no result that
// counts; it is not stored.
func (s *Service) runLost(r workspace.Request) goal.CheckRun {
	return goal.CheckRun{ExitCode: -1, At: s.wall(), RunID: r.RunID,
		OutputTail: fmt.Sprintf("agentd: the run this request started (run %s) left no result that counts: the goal was cancelled or replaced, the run was taken for left by an agentd process that ended, or the check ran again since; the goal's history says which\n", r.RunID)}
}
