package tests

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/agentd/agentd/tests/etcdtest"
)

// TestTeamEveryChangeNotifiedOnce: two daemons write one session under
// contention, one pausing and resuming a goal, both writing todo lists.
// Each client gets every change, its own daemon's and the other's, as one
// agentd/todoChanged or agentd/goalChanged per revision, exactly once and
// in revision order (docs/team.md, "How notifications flow"). Before the
// watch was the one source of notifications, a change of the other
// daemon cached by this one's compare-and-set was never told.
func TestTeamEveryChangeNotifiedOnce(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 1)
	_, c1, _, c2 := teamClients(t, c.Endpoints())
	c1.MustExec("agentd.goal.create", map[string]any{"objective": "shared work"}, nil)
	const rounds = 20
	var wg sync.WaitGroup
	write := func(cl *client, name string) {
		defer wg.Done()
		for i := range rounds {
			if err := cl.Exec("agentd.todo.set", map[string]any{"items": []map[string]string{{"title": fmt.Sprintf("%s %d", name, i), "status": "pending"}}}, nil); err != nil {
				t.Errorf("%s: todo.set %d: %v", name, i, err)
				return
			}
		}
	}
	wg.Add(3)
	go write(c1, "one")
	go write(c2, "two")
	go func() {
		defer wg.Done()
		for i := range rounds {
			cmd, args := "agentd.goal.pause", map[string]any{"reason": fmt.Sprintf("pause %d", i)}
			if i%2 == 1 {
				cmd, args = "agentd.goal.resume", nil
			}
			if err := c1.Exec(cmd, args, nil); err != nil {
				t.Errorf("%s %d: %v", cmd, i, err)
				return
			}
		}
	}()
	wg.Wait()
	if t.Failed() {
		return
	}
	// A last write, once both daemons hold every change: its notification
	// comes after every other on each client.
	total := uint64(1 + 3*rounds)
	for _, cl := range []*client{c1, c2} {
		cl.MustExec("agentd.awaitChange", map[string]any{"afterRevision": total - 1, "timeoutMs": 10000}, nil)
	}
	c2.MustExec("agentd.todo.set", map[string]any{"items": []map[string]string{{"title": "last", "status": "pending"}}}, nil)
	total++
	for i, cl := range []*client{c1, c2} {
		cl.Await("agentd/todoChanged", revisionAtLeast(total))
		revs := changeRevisions(t, cl)
		want := make([]uint64, total)
		for r := range want {
			want[r] = uint64(r + 1)
		}
		if fmt.Sprint(revs) != fmt.Sprint(want) {
			t.Errorf("client of daemon %d: the revisions of its todoChanged and goalChanged, in arrival order:\n got %v\nwant %v", i+1, revs, want)
		}
	}
}

// changeRevisions lists the revision of every agentd/todoChanged and
// agentd/goalChanged cl received, in arrival order; a goalChanged of kind
// complete that an advance sends before its own is not counted.
func changeRevisions(t *testing.T, cl *client) []uint64 {
	t.Helper()
	notes := map[string][]json.RawMessage{}
	for _, m := range []string{"agentd/todoChanged", "agentd/goalChanged"} {
		notes[m] = cl.Conn.NotesOf(m)
	}
	next := map[string]int{}
	var revs []uint64
	for _, m := range cl.Conn.Methods() {
		list, ok := notes[m]
		if !ok {
			continue
		}
		var p struct {
			Revision uint64
			Change   struct{ Kind string }
		}
		if err := json.Unmarshal(list[next[m]], &p); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		next[m]++
		if p.Change.Kind != "complete" {
			revs = append(revs, p.Revision)
		}
	}
	return revs
}
