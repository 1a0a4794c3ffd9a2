package tests

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentd/agentd/tests/etcdtest"
	"github.com/agentd/agentd/tests/lsptest"
)

// TestTeamQueueAddRetriedOnce: etcd applies a queue add whose replies are
// held past the write's bound: the add answers workspace.outcome_unknown,
// saying it may have been applied, not "nothing was written". The add
// reaches the other daemon once the link is back; the client sends the
// same add again, with the same id, and the goal is queued once (docs/
// team.md, "What a write acknowledges"). Before, the add answered
// workspace.unavailable and a second add queued the goal twice.
func TestTeamQueueAddRetriedOnce(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 1)
	_, c1, _, c2 := teamClients(t, c.Endpoints())
	c1.MustExec("agentd.goal.create", map[string]any{"objective": "first"}, nil)
	add := map[string]any{"id": "add-7f3a", "objective": "second"}
	proxy := c.Members[0].Proxy()
	proxy.Cut(etcdtest.ToClient)
	err := c1.Exec("agentd.goal.queue.add", add, nil)
	var we *lsptest.Error
	if !errors.As(err, &we) || we.DataCode() != "workspace.outcome_unknown" || !strings.Contains(we.Message, "the write may have been applied: agentd will show it if it was") {
		t.Fatalf("a queue add whose replies were held: %v, want workspace.outcome_unknown saying it may have been applied", err)
	}
	proxy.Restore()
	c2.Await("agentd/queueChanged", func(raw json.RawMessage) bool {
		var q queueChanged
		return json.Unmarshal(raw, &q) == nil && len(q.Items) == 1
	})
	_, q := c1.queueCall("agentd.goal.queue.add", add)
	if len(q.Items) != 1 || q.Items[0].ID != "add-7f3a" {
		t.Fatalf("the queue after the add sent again: %+v, want the goal once", q)
	}
	_, q = c2.queueCall("agentd.goal.queue.list", nil)
	if len(q.Items) != 1 {
		t.Fatalf("the other daemon's queue: %+v, want the goal once", q)
	}
}

// TestTeamGoalCreateRetriedOnce: a goal create that replaces the goal,
// whose replies are held past the write's bound, answers
// workspace.outcome_unknown though etcd applied it; sent again with the
// same requestId it is applied once: the goal the first copy made stays
// (same goal id on both daemons), and the history holds one create. Sent
// again without one, it would replace that goal with a new one (docs/
// team.md, "What a write acknowledges").
func TestTeamGoalCreateRetriedOnce(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 1)
	_, c1, _, c2 := teamClients(t, c.Endpoints())
	c1.MustExec("agentd.goal.create", map[string]any{"objective": "first"}, nil)
	create := map[string]any{"requestId": "create-5c1e", "objective": "second", "replace": true}
	proxy := c.Members[0].Proxy()
	proxy.Cut(etcdtest.ToClient)
	err := c1.Exec("agentd.goal.create", create, nil)
	var we *lsptest.Error
	if !errors.As(err, &we) || we.DataCode() != "workspace.outcome_unknown" {
		t.Fatalf("a goal create whose replies were held: %v, want workspace.outcome_unknown", err)
	}
	proxy.Restore()
	var applied goalChanged
	c2.Await("agentd/goalChanged", func(raw json.RawMessage) bool {
		return json.Unmarshal(raw, &applied) == nil && applied.Goal != nil && applied.Goal.Objective == "second"
	})
	var st struct {
		Revision uint64   `json:"revision"`
		Goal     goalSnap `json:"goal"`
	}
	c1.MustExec("agentd.goal.create", create, &st)
	if st.Goal.GoalID != applied.Goal.GoalID || st.Revision != applied.Revision {
		t.Fatalf("the create sent again answers goal %s at revision %d, want the one applied, %s at %d", st.Goal.GoalID, st.Revision, applied.Goal.GoalID, applied.Revision)
	}
	var h struct {
		Events []struct{ Kind string }
	}
	c2.MustExec("agentd.history", map[string]any{"limit": 10}, &h)
	creates := 0
	for _, e := range h.Events {
		if e.Kind == "goal.create" {
			creates++
		}
	}
	if creates != 2 || h.Events[0].Kind != "goal.create" {
		t.Fatalf("history %+v: want the two creates (first, second) and nothing after", h.Events)
	}
	if g := c2.goal(); g.GoalID != applied.Goal.GoalID {
		t.Fatalf("the other daemon's goal %s, want %s", g.GoalID, applied.Goal.GoalID)
	}
}
