package tests

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
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
	execOutcomeUnknown(t, c, c1, "agentd.goal.queue.add", add)
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
	execOutcomeUnknown(t, c, c1, "agentd.goal.create", create)
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
	kinds := c2.historyKinds()
	creates := count(kinds, "goal.create")
	if creates != 2 || kinds[0] != "goal.create" {
		t.Fatalf("history %v: want the two creates (first, second) and nothing after", kinds)
	}
	if g := c2.goal(); g.GoalID != applied.Goal.GoalID {
		t.Fatalf("the other daemon's goal %s, want %s", g.GoalID, applied.Goal.GoalID)
	}
}

// TestTeamCheckRunRetriedOnce: a check's start (agentd.goal.runCheck)
// whose replies are held past the write's bound answers
// workspace.outcome_unknown though etcd applied it: the goal's check is
// marked running by this daemon, and nothing runs it. Sent again with the
// same requestId, it is neither refused goal.check_running for its own run
// nor starts a second: this daemon runs the run the first copy started,
// once, and answers its result; both daemons see it (docs/team.md, "What
// a write acknowledges"). Sent again once more, it answers that run again
// and runs nothing.
func TestTeamCheckRunRetriedOnce(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 1)
	_, c1, _, c2 := teamClients(t, c.Endpoints())
	runs := filepath.Join(t.TempDir(), "runs")
	check := "echo ran >> " + runs
	c1.MustExec("agentd.goal.create", map[string]any{"objective": "checked", "check": check}, nil)
	start := map[string]any{"requestId": "check-41d0"}
	execOutcomeUnknown(t, c, c1, "agentd.goal.runCheck", start)
	if !c2.awaitCheck(true).Running {
		t.Fatal("the other daemon does not see the check marked running")
	}
	var res struct {
		Run    checkRun `json:"run"`
		Passed bool     `json:"passed"`
	}
	c1.MustExec("agentd.goal.runCheck", start, &res)
	if !res.Passed || res.Run.ExitCode != 0 {
		t.Fatalf("the start sent again answers %+v, want the first copy's run, passed", res)
	}
	if got := c2.awaitCheck(false); got.LastRun == nil || got.LastRun.ExitCode != 0 {
		t.Fatalf("the other daemon's check after the run: %+v", got)
	}
	c1.MustExec("agentd.goal.runCheck", start, &res)
	if !res.Passed {
		t.Fatalf("the start sent once more answers %+v, want the same run", res)
	}
	if data, err := os.ReadFile(runs); err != nil || string(data) != "ran\n" {
		t.Fatalf("the check ran %q (%v), want once", data, err)
	}
	var h struct {
		Events []struct{ Kind, Reason string }
	}
	c2.MustExec("agentd.history", map[string]any{"limit": 20}, &h)
	started := 0
	for _, e := range h.Events {
		if strings.HasPrefix(e.Reason, "check started") {
			started++
		}
	}
	if started != 1 {
		t.Fatalf("history %+v: want one check started", h.Events)
	}
}

// TestTeamUndoRetriedOnce: an undo whose answer the client did not get
// (lost, or workspace.outcome_unknown) sent again with the same requestId,
// to the same daemon or the other, undoes nothing more (without one it
// would undo the change before) and answers the change the first copy
// reverted (docs/team.md, "What a write acknowledges"). The replies are
// not held here as in the tests above: the undo reads the history before
// it writes, and a held reply fails that read (workspace.unavailable).
func TestTeamUndoRetriedOnce(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 1)
	_, c1, _, c2 := teamClients(t, c.Endpoints())
	for _, titles := range [][]string{{"a"}, {"a", "b"}} {
		items := []map[string]string{}
		for _, title := range titles {
			items = append(items, map[string]string{"title": title, "status": "pending"})
		}
		c1.MustExec("agentd.todo.set", map[string]any{"items": items}, nil)
	}
	undo := map[string]any{"scope": "todo", "requestId": "undo-9b2f"}
	type undone struct {
		teamState
		Undone struct {
			Seq  uint64 `json:"seq"`
			Kind string `json:"kind"`
		} `json:"undone"`
	}
	var first undone
	c1.MustExec("agentd.undo", undo, &first)
	c2.Await("agentd/todoChanged", revisionAtLeast(first.Revision))
	for _, cl := range []*client{c1, c2} {
		var res undone
		cl.MustExec("agentd.undo", undo, &res)
		if len(res.Todos.Items) != 1 || res.Todos.Items[0].Title != "a" || res.Revision != first.Revision || res.Undone != first.Undone || res.Undone.Kind != "todo.set" {
			t.Fatalf("the undo sent again answers %+v, want the list a at revision %d and %+v undone", res, first.Revision, first.Undone)
		}
	}
	var h struct {
		Events []struct{ Kind string }
	}
	c2.MustExec("agentd.history", map[string]any{"limit": 10}, &h)
	if len(h.Events) != 3 || h.Events[0].Kind != "todo.undo" {
		t.Fatalf("history %+v: want the two sets and one undo", h.Events)
	}
}

// TestTeamCLIResendsOnce: `agentd goal create --replace` through the
// shared daemon, whose replies from etcd are held past the write's bound,
// is answered workspace.outcome_unknown; the command says so on stderr
// and sends the same create once more, with the same requestId, which
// answers the goal the first copy made: exit 0, one create of it in the
// history (docs/commands.md, "Team folders: `agentd team`").
func TestTeamCLIResendsOnce(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 1)
	e1, e2 := newEnv(t), newEnv(t)
	writeTeamFile(t, testTeamID, c.Endpoints(), e1, e2)
	e1.useDaemon()
	c1 := e1.start().connect()
	c1.Initialize(nil, e1.ws)
	c2 := e2.start().connect()
	c2.Initialize(nil, e2.ws)
	c1.MustExec("agentd.goal.create", map[string]any{"objective": "first"}, nil)
	proxy := c.Members[0].Proxy()
	proxy.Cut(etcdtest.ToClient)
	cmd := e1.command("goal", "create", "--replace", "--workspace", e1.ws, "second")
	var stdout strings.Builder
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var said strings.Builder
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		said.WriteString(lines.Text() + "\n")
		if strings.Contains(lines.Text(), "sending the same request once more, with the same id") {
			proxy.Restore()
		}
	}
	proxy.Restore()
	if err := cmd.Wait(); err != nil || !strings.Contains(said.String(), "may have been applied") || !strings.Contains(said.String(), "sending the same request once more") {
		t.Fatalf("agentd goal create: %v, stdout %q, stderr %q; want exit 0 after one resend", err, stdout.String(), said.String())
	}
	if !strings.Contains(stdout.String(), "second") {
		t.Fatalf("agentd goal create printed %q, want the goal second", stdout.String())
	}
	c2.Await("agentd/goalChanged", func(raw json.RawMessage) bool {
		var g goalChanged
		return json.Unmarshal(raw, &g) == nil && g.Goal != nil && g.Goal.Objective == "second"
	})
	kinds := c2.historyKinds()
	creates := count(kinds, "goal.create")
	if creates != 2 {
		t.Fatalf("history %v: want the two creates (first, second)", kinds)
	}
}

// execOutcomeUnknown sends command with args through cl while the only
// member's replies are held past the write's bound: it must answer
// workspace.outcome_unknown, saying the write may have been applied
// (docs/team.md, "What a write acknowledges"); the replies flow again
// after it.
func execOutcomeUnknown(t *testing.T, c *etcdtest.Cluster, cl *client, command string, args map[string]any) {
	t.Helper()
	proxy := c.Members[0].Proxy()
	proxy.Cut(etcdtest.ToClient)
	err := cl.Exec(command, args, nil)
	proxy.Restore()
	var we *lsptest.Error
	if !errors.As(err, &we) || we.DataCode() != "workspace.outcome_unknown" || !strings.Contains(we.Message, "the write may have been applied: agentd will show it if it was") {
		t.Fatalf("%s whose replies were held: %v, want workspace.outcome_unknown saying it may have been applied", command, err)
	}
}
