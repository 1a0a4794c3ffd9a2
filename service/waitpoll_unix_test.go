//go:build unix

package service

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/workspace"
)

// TestWaitPollsRunOneCheckAtATime: waits on the check are armed per
// session, and a team's etcd may hold any number of sessions whose goals
// wait on a check this machine's person approved (whoever writes etcd
// writes them, history events included). Each wait polled the check on its
// own, so N such sessions ran the approved command N times at once, again
// and again (the project's test suite, a build: the machine's load at a
// writer's choice). The polls of a process run one check at a time
// (docs/runtime.md §2.13).
func TestWaitPollsRunOneCheckAtATime(t *testing.T) {
	setPoll := func(v *time.Duration, to time.Duration) {
		old := *v
		*v = to
		t.Cleanup(func() { *v = old })
	}
	setPoll(&waitCheckFirst, 10*time.Millisecond) // restored after the service closes
	setPoll(&waitCheckMax, 20*time.Millisecond)
	dir := t.TempDir()
	root := filepath.Join(dir, "work")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	s := New(workspace.Options{StateDir: filepath.Join(dir, "state")}, Daemon)
	ws, err := s.Registry().Open(root)
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ws.Release()
		s.Close()
	})
	const check = `mkdir running || echo overlap >> overlaps; echo run >> "runs.$AGENTD_SESSION"; sleep 0.1; rmdir running; exit 1`
	if err := s.ApproveForPerson(ws, check); err != nil {
		t.Fatal(err)
	}
	sessions := []string{"s0", "s1", "s2", "s3"}
	for _, name := range sessions {
		_, err := s.UpdateGoal(ws, name, func(g *goal.State) ([]goal.Change, error) {
			p := s.Person()
			cs, err := g.Create(goal.CreateParams{Objective: "wait for green", Check: check, CheckSetBy: &p}, s.Now())
			if err != nil {
				return nil, err
			}
			more, err := g.Wait(goal.WaitParams{CheckPasses: true, CheckApproved: true, WallClock: goal.WallClockCounts}, goal.Model, s.Now())
			return append(cs, more...), err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	ranTwice := func() bool {
		for _, name := range sessions {
			b, _ := os.ReadFile(filepath.Join(root, "runs."+name))
			if strings.Count(string(b), "run\n") < 2 {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(2 * time.Minute); !ranTwice(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the waits did not each poll the check twice")
		}
	}
	if b, err := os.ReadFile(filepath.Join(root, "overlaps")); err == nil {
		t.Fatalf("the polls ran the check at once %d times; want one at a time", strings.Count(string(b), "overlap"))
	}
}
