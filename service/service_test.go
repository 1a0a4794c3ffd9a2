package service_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/service"
	"github.com/agentd/agentd/workspace"
)

// folder makes a workspace folder and returns the options of a state
// directory beside it, and the folder's path.
func folder(t *testing.T) (workspace.Options, string) {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "work")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	return workspace.Options{StateDir: filepath.Join(dir, "state")}, root
}

// open opens root on a new service of role, closed with the test.
func open(t *testing.T, opts workspace.Options, role service.Role, root string) (*service.Service, *workspace.Workspace) {
	t.Helper()
	svc := service.New(opts, role)
	ws, err := svc.Registry().Open(root)
	if err != nil {
		svc.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ws.Release()
		svc.Close()
	})
	return svc, ws
}

func update(t *testing.T, svc *service.Service, ws *workspace.Workspace, fn func(g *goal.State) ([]goal.Change, error)) workspace.Session {
	t.Helper()
	s, err := svc.UpdateGoal(ws, workspace.DefaultSession, fn)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func view(t *testing.T, ws *workspace.Workspace) workspace.Session {
	t.Helper()
	s, err := ws.View(workspace.DefaultSession)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRestartRule: a turn left live by a process that is gone is ended,
// and the goal it drove paused, when a serving process opens the folder; a
// one-shot process opening it changes nothing (docs/runtime.md §2.3).
func TestRestartRule(t *testing.T) {
	opts, root := folder(t)
	gone := service.New(opts, service.Daemon)
	ws, err := gone.Registry().Open(root)
	if err != nil {
		t.Fatal(err)
	}
	update(t, gone, ws, func(g *goal.State) ([]goal.Change, error) {
		return g.Create(goal.CreateParams{Objective: "keep going"}, gone.Now())
	})
	update(t, gone, ws, func(g *goal.State) ([]goal.Change, error) {
		res, err := g.BeginTurn("t1", goal.OriginUser, goal.MainAgent, gone.Now())
		return res.Changes, err
	})
	ws.Release()
	gone.Close() // the turn is never ended: as if the process died

	_, ws = open(t, opts, service.OneShot, root)
	if s := view(t, ws); s.Goal.Status() != goal.Active || s.Goal.OpenTurn(goal.MainAgent) != "t1" {
		t.Fatalf("after a one-shot open: goal %s, open turn %q; want active with t1 live", s.Goal.Status(), s.Goal.OpenTurn(goal.MainAgent))
	}
	ws.Release() // lets the serving process below take the folder's lock

	_, ws = open(t, opts, service.Daemon, root)
	if s := view(t, ws); s.Goal.Status() != goal.Paused || s.Goal.OpenTurn(goal.MainAgent) != "" {
		t.Fatalf("after a serving open: goal %s, open turn %q; want paused with no live turn", s.Goal.Status(), s.Goal.OpenTurn(goal.MainAgent))
	}
}

// TestWallClockTimer: an active goal whose wall-clock budget runs out is
// blocked by the service's timer, without any command (docs/runtime.md
// §2.4).
func TestWallClockTimer(t *testing.T) {
	opts, root := folder(t)
	svc, ws := open(t, opts, service.Daemon, root)
	blocked := make(chan struct{}, 1)
	cancel := svc.Registry().Subscribe(func(n workspace.Notice) {
		if n.Session.Goal.Status() == goal.Blocked {
			select {
			case blocked <- struct{}{}:
			default:
			}
		}
	})
	defer cancel()
	update(t, svc, ws, func(g *goal.State) ([]goal.Change, error) {
		return g.Create(goal.CreateParams{Objective: "be quick"}, svc.Now())
	})
	second := float64(goal.MinWallClockBudgetMs)
	update(t, svc, ws, func(g *goal.State) ([]goal.Change, error) {
		return g.SetBudget(goal.BudgetUpdate{WallClockMs: goal.LimitUpdate{Set: true, Value: &second}}, svc.Now())
	})
	select {
	case <-blocked:
	case <-time.After(10 * time.Second):
		s := view(t, ws)
		t.Fatalf("goal still %s 10 s after a %v ms budget", s.Goal.Status(), second)
	}
	if s := view(t, ws); s.Goal.Goal.LastActor != goal.Runtime {
		t.Errorf("blocked by %q, want the runtime", s.Goal.Goal.LastActor)
	}
}

// TestAwaitChange: a wait ends with the session at a newer revision, at
// its timeout or stop with the session as it is, and with ctx.Err() when
// ctx ends.
func TestAwaitChange(t *testing.T) {
	opts, root := folder(t)
	svc, ws := open(t, opts, service.OneShot, root)
	ctx := context.Background()

	done := make(chan workspace.Session, 1)
	go func() {
		s, err := svc.AwaitChange(ctx, ws, workspace.DefaultSession, 0, time.Minute, nil)
		if err != nil {
			t.Error(err)
		}
		done <- s
	}()
	time.Sleep(20 * time.Millisecond) // let the wait subscribe; a change before it is answered at once anyway
	update(t, svc, ws, func(g *goal.State) ([]goal.Change, error) {
		return g.Create(goal.CreateParams{Objective: "x"}, svc.Now())
	})
	select {
	case s := <-done:
		if s.Revision != 1 {
			t.Errorf("woken at revision %d, want 1", s.Revision)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a change did not end the wait")
	}

	if s, err := svc.AwaitChange(ctx, ws, workspace.DefaultSession, 1, time.Millisecond, nil); err != nil || s.Revision != 1 {
		t.Errorf("at the timeout: %d, %v; want revision 1", s.Revision, err)
	}
	stop := make(chan struct{})
	close(stop)
	if s, err := svc.AwaitChange(ctx, ws, workspace.DefaultSession, 1, time.Minute, stop); err != nil || s.Revision != 1 {
		t.Errorf("after stop: %d, %v; want revision 1", s.Revision, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := svc.AwaitChange(cctx, ws, workspace.DefaultSession, 1, time.Minute, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("after ctx ended: %v, want context.Canceled", err)
	}
}
