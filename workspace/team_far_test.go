package workspace

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/agentd/agentd/tests/etcdtest"
)

// TestTeamFarMachineTodoWrites: a machine 100 ms one way from etcd (a
// proxy with that delay each way, its endpoints this machine's override)
// replaces the todo list of a session while the near machine's agent runs
// steps on it (a bookkeeping change every 5 ms, every tenth one a visible
// change): every far write goes through (its time logged against the 2 s
// of docs/team.md, "A far machine", 99th percentile), and both machines'
// changes are kept.
func TestTeamFarMachineTodoWrites(t *testing.T) {
	c := etcdtest.Start(t, 1)
	u, err := url.Parse(c.Endpoints()[0])
	if err != nil {
		t.Fatal(err)
	}
	p := etcdtest.NewProxy(t, u.Host)
	id := NewTeamID()
	nearReg := newRegistry(t, t.TempDir(), func(o *Options) { o.Identity = "near" })
	near := openWorkspace(t, nearReg, accepted(t, nearReg, teamFolder(t, id, c.Endpoints())))
	farReg := newRegistry(t, t.TempDir(), func(o *Options) {
		o.Identity = "far"
		o.Team = TeamOptions{Endpoints: []string{"http://" + p.Addr()}}
	})
	far := openWorkspace(t, farReg, accepted(t, farReg, teamFolder(t, id, c.Endpoints())))
	setTodos(t, near, "s", items("start"))
	p.Delay(etcdtest.ToServer, 100*time.Millisecond)
	p.Delay(etcdtest.ToClient, 100*time.Millisecond)

	const writes = 15
	visible := 0
	etcdtest.BusyWriter(t, writes, func(i int) error {
		_, err := far.Update("s", func(s *Session) (Change, error) {
			s.Todos = items(fmt.Sprintf("far %d", i))
			s.TodoUsage.StepsSinceWrite = 0
			return Change{Kind: "todo.write", Actor: "model", Todos: true}, nil
		})
		return err
	}, func(step int) error { // the near machine's agent: every tenth step a visible change
		quiet := step%10 != 9
		_, err := near.Update("s", func(s *Session) (Change, error) {
			s.TodoUsage.StepsSinceWrite++
			if quiet {
				return Change{Kind: "goal.bookkeeping", Quiet: true}, nil
			}
			return Change{Kind: "goal.progress", Actor: "runtime", Goal: true}, nil
		})
		if err == nil && !quiet {
			visible++
		}
		return err
	})
	s, err := near.View("s")
	if err != nil {
		t.Fatal(err)
	}
	if want := uint64(1 + writes + visible); s.Revision != want || s.Todos[0].Title != fmt.Sprintf("far %d", writes-1) {
		t.Errorf("revision %d, todos %v; want revision %d (1 + %d far writes + %d visible steps), the last far list", s.Revision, s.Todos, want, writes, visible)
	}
}
