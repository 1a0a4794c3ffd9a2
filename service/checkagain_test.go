package service_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/service"
	"github.com/agentd/agentd/workspace"
)

// markStarted stores what a check's start with request id leaves when its
// answer was lost: the goal's check marked running as run by the process
// of clock, and the request, in one write, as the start's transaction does.
func markStarted(t *testing.T, svc *service.Service, ws *workspace.Workspace, id, run, clock string) {
	t.Helper()
	_, err := ws.Update(workspace.DefaultSession, func(st *workspace.Session) (workspace.Change, error) {
		now := svc.Now()
		before := st.Goal.Snapshot(now)
		now.Clock = clock
		_, cs, err := st.Goal.StartCheck(goal.User, run, now)
		st.RecordRequest(workspace.Request{ID: id, RunID: run}, now.Wall)
		return service.StoredGoalChange(before, cs), err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// ranTimes is how many times the check of TestCheckStartSentAgain ran.
func ranTimes(t *testing.T, root string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "runs"))
	if os.IsNotExist(err) {
		return 0
	} else if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "\n")
}

// TestCheckStartSentAgain: a check's start sent again with the requestId
// the session holds starts no second run (docs/team.md, "What a write
// acknowledges"): it answers the run the first copy started once it has
// ended; runs it when its mark names this process and nothing runs it;
// refuses clearly, running nothing, when the mark names another process;
// and answers a run that says so when the first copy's run left no result.
func TestCheckStartSentAgain(t *testing.T) {
	opts, root := folder(t)
	svc, ws := open(t, opts, service.Daemon, root)
	command := "echo ran >> runs"
	update(t, svc, ws, func(g *goal.State) ([]goal.Change, error) {
		return g.Create(goal.CreateParams{Objective: "ship it", Check: command}, svc.Now())
	})
	if err := svc.ApproveForPerson(ws, command); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	run, st, err := svc.RunCheck(ctx, ws, workspace.DefaultSession, "start-1", func() {})
	if err != nil || !run.Passed() {
		t.Fatalf("the first start: %+v %v", run, err)
	}
	first := *st.Goal.Goal.Check.LastRun
	again, st, err := svc.RunCheck(ctx, ws, workspace.DefaultSession, "start-1", func() {})
	if err != nil || again != first || first.RunID == "" || ranTimes(t, root) != 1 || st.Goal.Goal.Check.Running {
		t.Fatalf("the start sent again: %+v %v, ran %d times; want the first run %+v, once", again, err, ranTimes(t, root), first)
	}

	markStarted(t, svc, ws, "start-2", "RUNOTHER01", "another-process")
	_, _, err = svc.RunCheck(ctx, ws, workspace.DefaultSession, "start-2", func() {})
	if protocol.ErrorCode(err) != goal.CodeCheckRunning || !strings.Contains(err.Error(), "RUNOTHER01") || !strings.Contains(err.Error(), "another agentd process") || ranTimes(t, root) != 1 {
		t.Fatalf("a start whose run another process holds: %v, ran %d times; want goal.check_running naming it, nothing run", err, ranTimes(t, root))
	}
	update(t, svc, ws, func(g *goal.State) ([]goal.Change, error) { return g.RecoverCheck(svc.Now()), nil })

	markStarted(t, svc, ws, "start-3", "RUNLEFT001", svc.Now().Clock)
	left, st, err := svc.RunCheck(ctx, ws, workspace.DefaultSession, "start-3", func() {})
	if err != nil || !left.Passed() || left.RunID != "RUNLEFT001" || ranTimes(t, root) != 2 || st.Goal.Goal.Check.Running || st.Goal.Goal.Check.LastRun.RunID != "RUNLEFT001" {
		t.Fatalf("a start whose run nothing runs here: %+v %v, ran %d times; want that run run once and recorded", left, err, ranTimes(t, root))
	}

	_, err = ws.Update(workspace.DefaultSession, func(st *workspace.Session) (workspace.Change, error) {
		st.RecordRequest(workspace.Request{ID: "start-4", RunID: "RUNGONE001"}, svc.Now().Wall)
		return workspace.Change{Kind: protocol.EventGoalCheckProcess, Quiet: true}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	lost, _, err := svc.RunCheck(ctx, ws, workspace.DefaultSession, "start-4", func() {})
	if err != nil || lost.ExitCode != -1 || !strings.Contains(lost.OutputTail, "run RUNGONE001) left no result that counts") || ranTimes(t, root) != 2 {
		t.Fatalf("a start whose run left no result: %+v %v, ran %d times", lost, err, ranTimes(t, root))
	}
}

// TestCheckStartSentAgainUnapproved: the run a lost start left marked on
// this process does not run when the check is not approved here
// (docs/runtime.md §2.10.4): it is recorded as not run, and the start sent
// again is refused goal.check_unapproved.
func TestCheckStartSentAgainUnapproved(t *testing.T) {
	opts, root := folder(t)
	svc, ws := open(t, opts, service.Daemon, root)
	bob := goal.CheckSetter{User: "bob", Host: "elsewhere"}
	update(t, svc, ws, func(g *goal.State) ([]goal.Change, error) {
		return g.Create(goal.CreateParams{Objective: "ship it", Check: "echo ran >> runs", CheckSetBy: &bob}, svc.Now())
	})
	markStarted(t, svc, ws, "start-1", "RUNLEFT001", svc.Now().Clock)
	_, st, err := svc.RunCheck(context.Background(), ws, workspace.DefaultSession, "start-1", func() {})
	if protocol.ErrorCode(err) != goal.CodeCheckUnapproved || ranTimes(t, root) != 0 {
		t.Fatalf("the start sent again: %v, ran %d times; want goal.check_unapproved, nothing run", err, ranTimes(t, root))
	}
	c := view(t, ws).Goal.Goal.Check
	if c.Running || c.LastRun == nil || c.LastRun.ExitCode != -1 || !strings.Contains(c.LastRun.OutputTail, "not approved on this machine") {
		t.Fatalf("the check after the refusal: %+v (session %d)", c, st.Revision)
	}
}

// TestCheckStartSentAgainWhileRunning: a start sent again while the first
// copy's run still runs in this process waits for that run and answers
// it; the check runs once.
func TestCheckStartSentAgainWhileRunning(t *testing.T) {
	opts, root := folder(t)
	svc, ws := open(t, opts, service.Daemon, root)
	command := "echo ran >> runs; while [ ! -e go ]; do sleep 0.01; done"
	update(t, svc, ws, func(g *goal.State) ([]goal.Change, error) {
		return g.Create(goal.CreateParams{Objective: "ship it", Check: command}, svc.Now())
	})
	if err := svc.ApproveForPerson(ws, command); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		run goal.CheckRun
		err error
	}
	started := make(chan struct{})
	answers := make(chan answer, 2)
	start := func(started func()) {
		run, _, err := svc.RunCheck(context.Background(), ws, workspace.DefaultSession, "start-1", started)
		answers <- answer{run, err}
	}
	go start(func() { close(started) })
	<-started
	go start(func() {})
	if err := os.WriteFile(filepath.Join(root, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	a, b := <-answers, <-answers
	if a.err != nil || b.err != nil || a.run != b.run || !a.run.Passed() || ranTimes(t, root) != 1 {
		t.Fatalf("the two copies answered %+v and %+v; ran %d times; want one run, passed, for both", a, b, ranTimes(t, root))
	}
}
