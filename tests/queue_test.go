package tests

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"
)

// queued is one queued goal as clients read it (docs/protocol.md §3).
type queued struct {
	ID                  string `json:"id"`
	Objective           string `json:"objective"`
	CompletionCriterion string `json:"completionCriterion"`
	Check               string `json:"check"`
	AddedAt             string `json:"addedAt"`
	TurnBudget          *int64 `json:"turnBudget"`
	TokenBudget         *int64 `json:"tokenBudget"`
	WallClockBudgetMs   *int64 `json:"wallClockBudgetMs"`
}

type queueState struct {
	Items       []queued `json:"items"`
	AutoAdvance bool     `json:"autoAdvance"`
}

// queueChanged is the params of agentd/queueChanged (docs/protocol.md §4).
type queueChanged struct {
	Session     string   `json:"session"`
	Revision    uint64   `json:"revision"`
	Items       []queued `json:"items"`
	AutoAdvance bool     `json:"autoAdvance"`
	Actor       string   `json:"actor"`
}

// queueCall runs a queue command and returns the State's revision and
// queue.
func (c *client) queueCall(cmd string, args map[string]any) (uint64, queueState) {
	c.T.Helper()
	var st struct {
		Revision uint64     `json:"revision"`
		Queue    queueState `json:"queue"`
	}
	c.MustExec(cmd, args, &st)
	return st.Revision, st.Queue
}

// awaitQueue waits for the agentd/queueChanged of revision rev.
func (c *client) awaitQueue(rev uint64) queueChanged {
	c.T.Helper()
	var qc queueChanged
	raw := c.Await("agentd/queueChanged", func(raw json.RawMessage) bool {
		var q queueChanged
		return json.Unmarshal(raw, &q) == nil && q.Revision == rev
	})
	json.Unmarshal(raw, &qc)
	return qc
}

func queueObjectives(items []queued) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Objective)
	}
	return out
}

// TestGoalQueueCommands: every queue command over the real binary
// (docs/runtime.md §2.9): the State answers the queue, every change is an
// agentd/queueChanged of its revision with actor user, refusals are
// args.invalid and change nothing, and the queue survives a restart.
func TestGoalQueueCommands(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)

	var fresh struct{ Queue queueState }
	c.MustExec("agentd.state", nil, &fresh)
	if len(fresh.Queue.Items) != 0 || !fresh.Queue.AutoAdvance || fresh.Queue.Items == nil {
		t.Fatalf("a fresh session's queue = %+v, want [] with auto-advance on", fresh.Queue)
	}

	rev, q := c.queueCall("agentd.goal.queue.add", map[string]any{"objective": " write the docs ", "completionCriterion": "docs build", "check": "make docs"})
	if len(q.Items) != 1 || q.Items[0].Objective != "write the docs" || q.Items[0].Check != "make docs" || q.Items[0].CompletionCriterion != "docs build" || len(q.Items[0].ID) != 36 || q.Items[0].AddedAt == "" {
		t.Fatalf("after add: %+v", q)
	}
	if qc := c.awaitQueue(rev); qc.Actor != "user" || len(qc.Items) != 1 || qc.Items[0].ID != q.Items[0].ID || !qc.AutoAdvance {
		t.Fatalf("queueChanged of the add = %+v", qc)
	}
	c.queueCall("agentd.goal.queue.add", map[string]any{"objective": "second"})
	_, q = c.queueCall("agentd.goal.queue.add", map[string]any{"objective": "third"})
	first, third := q.Items[0].ID, q.Items[2].ID

	rev, q = c.queueCall("agentd.goal.queue.move", map[string]any{"id": third, "index": 0})
	if got := queueObjectives(q.Items); !slices.Equal(got, []string{"third", "write the docs", "second"}) {
		t.Fatalf("after move: %v", got)
	}
	if qc := c.awaitQueue(rev); !slices.Equal(queueObjectives(qc.Items), []string{"third", "write the docs", "second"}) {
		t.Fatalf("queueChanged of the move = %+v", qc)
	}
	rev, q = c.queueCall("agentd.goal.queue.remove", map[string]any{"id": first})
	if got := queueObjectives(q.Items); !slices.Equal(got, []string{"third", "second"}) {
		t.Fatalf("after remove: %v", got)
	}
	c.awaitQueue(rev)
	rev, q = c.queueCall("agentd.goal.queue.setAutoAdvance", map[string]any{"on": false})
	if q.AutoAdvance {
		t.Fatal("auto-advance still on")
	}
	if qc := c.awaitQueue(rev); qc.AutoAdvance || len(qc.Items) != 2 {
		t.Fatalf("queueChanged of setAutoAdvance = %+v", qc)
	}
	if again, _ := c.queueCall("agentd.goal.queue.setAutoAdvance", map[string]any{"on": false}); again != rev {
		t.Fatalf("turning auto-advance off twice moved the revision %d → %d", rev, again)
	}
	if _, l := c.queueCall("agentd.goal.queue.list", nil); !slices.Equal(queueObjectives(l.Items), []string{"third", "second"}) || l.AutoAdvance {
		t.Fatalf("list = %+v", l)
	}

	for _, bad := range []struct {
		cmd  string
		args map[string]any
		msg  string
	}{
		{"agentd.goal.queue.remove", map[string]any{"id": first}, "no queued goal has the id"},
		{"agentd.goal.queue.move", map[string]any{"id": third, "index": 2}, "index 2 is outside the queue; use 0 to 1"},
		{"agentd.goal.queue.move", map[string]any{"id": third}, "index"},
		{"agentd.goal.queue.add", map[string]any{"objective": "x", "check": " "}, "the check is blank"},
		{"agentd.goal.queue.add", map[string]any{"objective": "x", "check": strings.Repeat("y", 2001)}, "at most 2000"},
		{"agentd.goal.queue.add", map[string]any{"objective": "x", "priority": 1}, "priority"},
	} {
		err := c.Exec(bad.cmd, bad.args, nil)
		if err == nil || !strings.Contains(err.Error(), bad.msg) || !strings.Contains(err.Error(), "-32602") {
			t.Errorf("%s %v: %v, want args.invalid (-32602) saying %q", bad.cmd, bad.args, err, bad.msg)
		}
	}
	for range 48 {
		c.queueCall("agentd.goal.queue.add", map[string]any{"objective": "filler"})
	}
	if err := c.Exec("agentd.goal.queue.add", map[string]any{"objective": "one too many"}, nil); err == nil || !strings.Contains(err.Error(), "already holds 50 goals") {
		t.Fatalf("the 51st add: %v", err)
	}

	// The queue is stored with the session: a new process reads it back.
	c.shutdown()
	c2 := e.start().connect()
	c2.Initialize(nil, e.ws)
	_, l := c2.queueCall("agentd.goal.queue.list", nil)
	if len(l.Items) != 50 || l.Items[0].ID != third || l.Items[0].Objective != "third" || l.AutoAdvance {
		t.Fatalf("after a restart: %d items, first %+v, auto-advance %v", len(l.Items), l.Items[0], l.AutoAdvance)
	}
}

// TestGoalQueueAdvance: the model's UpdateGoal complete makes the first
// queued goal active in the same write: goalChanged complete (the old goal),
// then goalChanged advance (the new one, fresh, actor runtime), then
// queueChanged, all of one revision; the turn ends with a continuation for
// the new goal (docs/runtime.md §2.9).
func TestGoalQueueAdvance(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "first goal"}, nil)
	c.MustExec("agentd.goal.setBudget", map[string]any{"turns": 5}, nil)
	c.queueCall("agentd.goal.queue.add", map[string]any{"objective": "second goal", "completionCriterion": "it works", "check": "true"})
	c.queueCall("agentd.goal.queue.add", map[string]any{"objective": "third goal"})

	c.MustExec("agentd.turn.begin", map[string]any{"turnId": "t1", "origin": "user"}, nil)
	c.MustExec("agentd.step.begin", map[string]any{"turnId": "t1"}, nil)
	var res toolResult
	c.MustExec("agentd.callTool", map[string]any{"name": "UpdateGoal", "turnId": "t1", "input": map[string]any{"status": "complete"}}, &res)
	if res.IsError || !res.StopTurn || !strings.Contains(res.Output, `The next goal of the queue is now active and starts with the next turn: "second goal".`) {
		t.Fatalf("UpdateGoal complete = %+v", res)
	}
	adv := c.awaitGoal("advance")
	qc := c.awaitQueue(adv.Revision)
	if !slices.Equal(queueObjectives(qc.Items), []string{"third goal"}) || qc.Actor != "runtime" {
		t.Fatalf("queueChanged of the advance = %+v", qc)
	}

	// The notifications of that revision, in order.
	var kinds []string
	for _, raw := range c.Conn.NotesOf("agentd/goalChanged") {
		var gc goalChanged
		json.Unmarshal(raw, &gc)
		if gc.Revision == adv.Revision {
			kinds = append(kinds, gc.Change.Kind+"/"+gc.Change.Actor+"/"+gc.Goal.Objective+"/"+gc.Goal.Status)
		}
	}
	if want := []string{"complete/model/first goal/complete", "advance/runtime/second goal/active"}; !slices.Equal(kinds, want) {
		t.Fatalf("goalChanged of revision %d = %v, want %v", adv.Revision, kinds, want)
	}
	methods := c.Conn.Methods()
	last := slices.Index(methods, "agentd/queueChanged")
	for i, m := range methods {
		if m == "agentd/queueChanged" {
			last = i
		}
	}
	if last < 2 || methods[last-1] != "agentd/goalChanged" || methods[last-2] != "agentd/goalChanged" {
		t.Fatalf("notifications %v: want goalChanged, goalChanged, queueChanged at the end", methods)
	}

	if msg := c.Await("window/showMessage", func(raw json.RawMessage) bool { return strings.Contains(string(raw), "next goal") }); !strings.Contains(string(msg), "goal complete: first goal; next goal: second goal") {
		t.Errorf("showMessage = %s", msg)
	}
	g := adv.Goal
	if g.CompletionCriterion != "it works" || g.TurnsUsed != 0 || g.TokensUsed != 0 || g.Budget.TurnBudget != nil || g.LastActor != "runtime" || g.GoalID == "" {
		t.Fatalf("the advanced goal = %+v", g)
	}
	c.MustExec("agentd.step.end", map[string]any{"turnId": "t1", "outputTokens": 10, "finishReason": "stop"}, nil)
	var end struct {
		Continuation *struct{ Variant, Prompt string } `json:"continuation"`
		Goal         *goalSnap                         `json:"goal"`
	}
	c.MustExec("agentd.turn.end", map[string]any{"turnId": "t1", "outcome": "completed"}, &end)
	if end.Continuation == nil || end.Goal.Objective != "second goal" || end.Goal.Status != "active" {
		t.Fatalf("turn end after the advance = %+v %+v", end.Continuation, end.Goal)
	}

	var hist struct {
		Events []struct {
			Kind, Actor string
			Payload     json.RawMessage
		}
	}
	c.MustExec("agentd.history", map[string]any{"limit": 10}, &hist)
	found := false
	for _, ev := range hist.Events {
		if ev.Kind == "goal.advance" {
			found = ev.Actor == "runtime" && strings.Contains(string(ev.Payload), `"kind":"complete"`) && strings.Contains(string(ev.Payload), `"first goal"`)
		}
	}
	if !found {
		t.Fatalf("no goal.advance event recording the completion in the history: %+v", hist.Events)
	}
}

// TestGoalQueueNoAdvance: with auto-advance off a complete goal stays
// current; a cancelled or blocked goal never advances (docs/runtime.md §2.9).
func TestGoalQueueNoAdvance(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	c.queueCall("agentd.goal.queue.add", map[string]any{"objective": "queued"})

	c.MustExec("agentd.goal.create", map[string]any{"objective": "cancel me"}, nil)
	c.MustExec("agentd.goal.cancel", nil, nil)
	if g := c.goal(); g != nil {
		t.Fatalf("after a cancel the goal is %+v, want none", g)
	}
	c.MustExec("agentd.goal.create", map[string]any{"objective": "block me"}, nil)
	if res := c.tool("UpdateGoal", map[string]any{"status": "blocked"}); res.IsError {
		t.Fatalf("UpdateGoal blocked = %+v", res)
	}
	if g := c.goal(); g.Objective != "block me" || g.Status != "blocked" {
		t.Fatalf("after a block the goal is %+v", g)
	}
	c.MustExec("agentd.goal.create", map[string]any{"objective": "complete me", "replace": true}, nil)
	c.queueCall("agentd.goal.queue.setAutoAdvance", map[string]any{"on": false})
	if res := c.tool("UpdateGoal", map[string]any{"status": "complete"}); res.IsError || strings.Contains(res.Output, "queue") {
		t.Fatalf("UpdateGoal complete = %+v", res)
	}
	if g := c.goal(); g.Objective != "complete me" || g.Status != "complete" {
		t.Fatalf("with auto-advance off the goal is %+v", g)
	}
	if _, l := c.queueCall("agentd.goal.queue.list", nil); !slices.Equal(queueObjectives(l.Items), []string{"queued"}) {
		t.Fatalf("the queue changed: %+v", l)
	}
	for _, raw := range c.Conn.NotesOf("agentd/goalChanged") {
		if strings.Contains(string(raw), `"kind":"advance"`) {
			t.Fatalf("an advance was notified: %s", raw)
		}
	}
}

// TestGoalQueueEveryClient: through the shared daemon, a queue change and an
// advance made by one editor reach another editor of the folder, in the
// same order (docs/protocol.md §4.2).
func TestGoalQueueEveryClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, a := e.forwarder()
	a.Initialize(nil, e.ws)
	_, b := e.forwarder()
	b.Initialize(nil, e.ws)
	e.oneDaemon()
	a.MustExec("agentd.goal.create", map[string]any{"objective": "first goal"}, nil)
	rev, _ := a.queueCall("agentd.goal.queue.add", map[string]any{"objective": "next goal"})
	if qc := b.awaitQueue(rev); qc.Actor != "user" || !slices.Equal(queueObjectives(qc.Items), []string{"next goal"}) {
		t.Fatalf("the other editor's queueChanged = %+v", qc)
	}
	if res := a.tool("UpdateGoal", map[string]any{"status": "complete"}); res.IsError {
		t.Fatalf("UpdateGoal complete = %+v", res)
	}
	adv := b.awaitGoal("advance")
	if qc := b.awaitQueue(adv.Revision); len(qc.Items) != 0 || qc.Actor != "runtime" {
		t.Fatalf("the other editor's queueChanged of the advance = %+v", qc)
	}
	var kinds []string
	for _, raw := range b.Conn.NotesOf("agentd/goalChanged") {
		var gc goalChanged
		json.Unmarshal(raw, &gc)
		if gc.Revision == adv.Revision {
			kinds = append(kinds, gc.Change.Kind+"/"+gc.Goal.Objective)
		}
	}
	if want := []string{"complete/first goal", "advance/next goal"}; !slices.Equal(kinds, want) {
		t.Fatalf("the other editor's goalChanged of revision %d = %v, want %v", adv.Revision, kinds, want)
	}
	if g := b.goal(); g.Objective != "next goal" || g.Status != "active" {
		t.Fatalf("the other editor reads the goal %+v", g)
	}
}

// TestGoalQueueShell: `agentd goal queue add|list|rm|mv|auto-advance` from a
// shell (docs/commands.md), with --json, refusals on stderr with exit 1,
// usage errors exit 2, and `agentd state` showing the queue.
func TestGoalQueueShell(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// A read creates nothing (docs/protocol.md §1.2.2).
	out, _, code := e.cli("goal", "queue", "list", "--workspace", e.ws)
	if code != 0 || out != "Up next: nothing queued (auto-advance on).\n" {
		t.Fatalf("queue list on a fresh folder: %d %q", code, out)
	}
	if _, err := os.Stat(e.stateDir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("queue list created the state directory: %v", err)
	}
	out, errOut, code := e.cli("goal", "queue", "add", "write", "the", "docs", "--criterion", "docs build", "--check", "make docs", "--workspace", e.ws)
	if code != 0 || !strings.Contains(out, "Up next (auto-advance on):\n  1. write the docs\n") || !strings.Contains(out, "Check: make docs") || !strings.Contains(errOut, "agentd: workspace ") {
		t.Fatalf("queue add: %d %q %q", code, out, errOut)
	}
	e.cli("goal", "queue", "add", "second", "--workspace", e.ws)
	out, _, code = e.cli("goal", "queue", "list", "--json", "--workspace", e.ws)
	var q queueState
	if code != 0 || json.Unmarshal([]byte(out), &q) != nil || !slices.Equal(queueObjectives(q.Items), []string{"write the docs", "second"}) || !q.AutoAdvance {
		t.Fatalf("queue list --json: %d %q", code, out)
	}
	if out, _, _ = e.cli("goal", "status", "--workspace", e.ws); !strings.Contains(out, "Up next (auto-advance on):\n  1. write the docs\n") {
		t.Fatalf("agentd goal status does not show the queue: %q", out)
	}
	if out, errOut, code = e.cli("goal", "queue", "mv", q.Items[1].ID, "1", "--workspace", e.ws); code != 0 || !strings.Contains(out, "  1. second\n") {
		t.Fatalf("queue mv: %d %q %q", code, out, errOut)
	}
	if out, errOut, code = e.cli("goal", "queue", "rm", q.Items[0].ID, "--workspace", e.ws); code != 0 || strings.Contains(out, "write the docs") {
		t.Fatalf("queue rm: %d %q %q", code, out, errOut)
	}
	if out, errOut, code = e.cli("goal", "queue", "auto-advance", "off", "--workspace", e.ws); code != 0 || !strings.Contains(out, "auto-advance off") {
		t.Fatalf("queue auto-advance off: %d %q %q", code, out, errOut)
	}
	if out, _, _ = e.cli("state", "--workspace", e.ws); !strings.Contains(out, "Up next (auto-advance off):\n  1. second\n") {
		t.Fatalf("agentd state does not show the queue: %q", out)
	}
	if _, errOut, code = e.cli("goal", "queue", "rm", q.Items[0].ID, "--workspace", e.ws); code != 1 || !strings.Contains(errOut, "no queued goal has the id") {
		t.Fatalf("rm of a removed id: %d %q", code, errOut)
	}
	if _, errOut, code = e.cli("goal", "queue", "add", "x", "--check", "", "--workspace", e.ws); code != 1 || !strings.Contains(errOut, "the check is blank") {
		t.Fatalf("add --check \"\": %d %q", code, errOut)
	}
	for _, bad := range [][]string{{"goal", "queue", "mv", "id", "first"}, {"goal", "queue", "mv", "id", "0"}, {"goal", "queue", "auto-advance", "maybe"}, {"goal", "queue", "shuffle"}, {"goal", "queue"}} {
		if _, errOut, code = e.cli(append(bad, "--workspace", e.ws)...); code != 2 || !strings.Contains(errOut, "usage:") {
			t.Errorf("agentd %v: %d %q, want a usage error", bad, code, errOut)
		}
	}
	if _, errOut, code = e.cli("goal", "pause", "--check", "x", "--workspace", e.ws); code != 2 || !strings.Contains(errOut, "--check is a flag of: goal create, goal queue") {
		t.Errorf("goal pause --check: %d %q", code, errOut)
	}
}
