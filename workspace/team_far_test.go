package workspace

import (
	"errors"
	"fmt"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd/agentd/tests/etcdtest"
	"github.com/agentd/agentd/workspace/storage"
)

// TestTeamFarMachineTodoWrites: a machine 100 ms one way from etcd (a
// proxy with that delay each way, its endpoints this machine's override)
// replaces the todo list of a session while the near machine's agent runs
// steps on it (a bookkeeping change every 5 ms, every tenth one a visible
// change): every far write goes through (its time logged against the 2 s
// of docs/team.md, "A far machine", 99th percentile), and both machines'
// changes are kept. It runs with every change reading the whole session
// and the write resetting the step counters, as before the session was
// kept in parts, and with the write reading its list only and counting
// itself there (docs/team.md, "A session in parts"); each also with the
// near steps all quiet. It logs the compare-and-set conflicts the far
// writes met.
func TestTeamFarMachineTodoWrites(t *testing.T) {
	for _, tc := range []struct {
		name           string
		parts, visible bool
		writes         int // fewer for the whole session's: they only measure
	}{{"Parts", true, true, 15}, {"PartsQuietSteps", true, false, 15}, {"WholeSession", false, true, 5}, {"WholeSessionQuietSteps", false, false, 5}} {
		t.Run(tc.name, func(t *testing.T) { farTodoWrites(t, tc.parts, tc.visible, tc.writes) })
	}
}

func farTodoWrites(t *testing.T, parts, visibleSteps bool, writes int) {
	c := etcdtest.Start(t, 1)
	u, err := url.Parse(c.Endpoints()[0])
	if err != nil {
		t.Fatal(err)
	}
	p := etcdtest.NewProxy(t, u.Host)
	id := NewTeamID()
	nearReg := newRegistry(t, t.TempDir(), func(o *Options) { o.Identity = "near" })
	near := openWorkspace(t, nearReg, accepted(t, nearReg, teamFolder(t, id, c.Endpoints())))
	var conflicts atomic.Int64
	farReg := newRegistry(t, t.TempDir(), func(o *Options) {
		o.Identity = "far"
		o.Team = TeamOptions{Endpoints: []string{"http://" + p.Addr()}}
		o.WrapStore = func(s storage.Interface) storage.Interface { return conflictCount{s, &conflicts} }
	})
	far := openWorkspace(t, farReg, accepted(t, farReg, teamFolder(t, id, c.Endpoints())))
	setTodos(t, near, "s", items("start"))
	p.Delay(etcdtest.ToServer, 100*time.Millisecond)
	p.Delay(etcdtest.ToClient, 100*time.Millisecond)

	visible := 0
	etcdtest.BusyWriter(t, writes, func(i int) error {
		_, err := far.Update("s", func(s *Session) (Change, error) {
			s.Todos = items(fmt.Sprintf("far %d", i))
			if !parts {
				s.TodoUsage.StepsSinceWrite = 0
				return Change{Kind: "todo.write", Actor: "model", Todos: true}, nil
			}
			s.TodoUsage.CountWrite()
			return Change{Kind: "todo.write", Actor: "model", Todos: true, Reads: PartTodo}, nil
		})
		return err
	}, func(step int) error { // the near machine's agent: every tenth step a visible change
		quiet := step%10 != 9 || !visibleSteps
		_, err := near.Update("s", func(s *Session) (Change, error) {
			if parts {
				s.TodoUsage.EndStep()
			} else {
				s.TodoUsage.StepsSinceWrite++
			}
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
	t.Logf("the %d far writes met %d compare-and-set conflicts", writes, conflicts.Load())
	s, err := near.View("s")
	if err != nil {
		t.Fatal(err)
	}
	if want := uint64(1 + writes + visible); s.Revision != want || s.Todos[0].Title != fmt.Sprintf("far %d", writes-1) {
		t.Errorf("revision %d, todos %v; want revision %d (1 + %d far writes + %d visible steps), the last far list", s.Revision, s.Todos, want, writes, visible)
	}
}

// conflictCount is a store that counts the commits refused as conflicts.
type conflictCount struct {
	storage.Interface
	n *atomic.Int64
}

func (c conflictCount) Unwrap() storage.Interface { return c.Interface }

func (c conflictCount) Commit(p *storage.Commit) error {
	err := c.Interface.Commit(p)
	if errors.Is(err, storage.ErrConflict) {
		c.n.Add(1)
	}
	return err
}
