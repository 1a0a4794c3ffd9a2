package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// End-to-end tests of waiting (docs/runtime.md §2.13) over the real
// binary.

// waitSnap is the wait part of a goal snapshot.
type waitSnap struct {
	Status string `json:"status"`
	Wait   *struct {
		Since, By, Note, Until, WallClock string
		Paths                             []string
	} `json:"wait"`
}

// waitOf reads the goal's status and wait from agentd.state.
func (c *client) waitOf() waitSnap {
	c.T.Helper()
	var st struct{ Goal waitSnap }
	c.MustExec("agentd.state", nil, &st)
	return st.Goal
}

// modelWaits begins turn id, opens its first step and has the model ask to
// wait with wait; it returns the tool's answer.
func (c *client) modelWaits(id string, wait map[string]any) toolResult {
	c.T.Helper()
	c.MustExec("agentd.turn.begin", map[string]any{"turnId": id, "origin": "user"}, nil)
	c.MustExec("agentd.step.begin", map[string]any{"turnId": id}, nil)
	return c.toolIn(id, "UpdateGoal", map[string]any{"status": "waiting", "wait": wait})
}

// TestGoalWaitWokenByAFileChange: the model waits for a file that does not
// exist yet; its turn is told to stop and ends with no continuation; the
// file appearing wakes the goal with a goalChanged wake naming it, and the
// next goal turn's reminder says what woke it.
func TestGoalWaitWokenByAFileChange(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "ship the release", "requireTodos": false}, nil)
	res := c.modelWaits("t1", map[string]any{"paths": []string{"ci/result.txt"}, "note": "the CI run"})
	if res.IsError || !res.StopTurn || !strings.Contains(res.Output, "ci/result.txt") {
		t.Fatalf("UpdateGoal waiting = %+v", res)
	}
	if gc := c.awaitGoal("wait"); gc.Change.Status != "waiting" || gc.Change.Actor != "model" {
		t.Fatalf("goalChanged wait = %+v", gc)
	}
	var end struct{ StopTurn bool }
	c.MustExec("agentd.step.end", map[string]any{"turnId": "t1", "outputTokens": 5, "finishReason": "tool_calls"}, &end)
	if !end.StopTurn {
		t.Fatalf("the step after the wait does not stop the turn")
	}
	var te struct{ Continuation any }
	c.MustExec("agentd.turn.end", map[string]any{"turnId": "t1", "outcome": "completed"}, &te)
	if te.Continuation != nil {
		t.Fatalf("a waiting goal's turn ended with a continuation: %v", te.Continuation)
	}
	if w := c.waitOf(); w.Status != "waiting" || w.Wait == nil || w.Wait.By != "model" || w.Wait.WallClock != "counts" || len(w.Wait.Paths) != 1 {
		t.Fatalf("goal while waiting = %+v", w)
	}
	if err := os.MkdirAll(filepath.Join(e.ws, "ci"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.ws, "ci", "result.txt"), []byte("green\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gc := c.awaitGoal("wake")
	if gc.Change.Status != "active" || gc.Change.Actor != "runtime" || !strings.Contains(gc.Change.Reason, "ci/result.txt changed") {
		t.Fatalf("goalChanged wake = %+v", gc)
	}
	if w := c.waitOf(); w.Status != "active" || w.Wait != nil {
		t.Fatalf("goal after the wake = %+v", w)
	}
	var begun struct{ GoalDriven bool }
	c.MustExec("agentd.turn.begin", map[string]any{"turnId": "t2", "origin": "continuation"}, &begun)
	var sb struct {
		Injections []struct{ Variant, Text string }
	}
	c.MustExec("agentd.step.begin", map[string]any{"turnId": "t2"}, &sb)
	if !begun.GoalDriven || len(sb.Injections) == 0 || !strings.Contains(sb.Injections[0].Text, "ci/result.txt changed") {
		t.Fatalf("the turn after the wake: driven %v, injections %+v", begun.GoalDriven, sb.Injections)
	}
}

// TestGoalWaitWokenByTime: a person's wait set from a shell (no daemon
// runs, so nothing is armed) is armed by the daemon that opens the folder
// next, and its time wakes the goal, whether it passed while no daemon ran
// or passes after.
func TestGoalWaitWokenByTime(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, errOut, code := e.cli("goal", "create", "nightly build", "--workspace", e.ws); code != 0 {
		t.Fatalf("goal create: %d %s", code, errOut)
	}
	if _, errOut, code := e.cli("goal", "wait", "--for", "1s", "--note", "the build", "--workspace", e.ws); code != 0 {
		t.Fatalf("goal wait: %d %s", code, errOut)
	}
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	gc := c.awaitGoal("wake")
	if gc.Change.Status != "active" || !strings.Contains(gc.Change.Reason, "arrived") {
		t.Fatalf("goalChanged wake = %+v", gc)
	}
}

// TestGoalWaitResumedByThePerson: `agentd goal wait` and `agentd goal
// status`: the status prints what the goal waits for and since when,
// --exit-code exits 7; a wait outside the workspace or with no condition
// is refused; `agentd goal resume` ends the wait.
func TestGoalWaitResumedByThePerson(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws := []string{"--workspace", e.ws}
	if _, errOut, code := e.cli(append([]string{"goal", "create", "port the parser"}, ws...)...); code != 0 {
		t.Fatalf("goal create: %d %s", code, errOut)
	}
	for _, bad := range [][]string{{"--note", "soon"}, {"--path", "../elsewhere"}, {"--until", "2020-01-01T00:00:00Z"}} {
		if _, errOut, code := e.cli(append(append([]string{"goal", "wait"}, bad...), ws...)...); code == 0 || errOut == "" {
			t.Errorf("goal wait %v: exit %d, stderr %q; want a refusal", bad, code, errOut)
		}
	}
	if _, errOut, code := e.cli(append([]string{"goal", "wait", "--for", "2h", "--path", "build", "--wall-clock", "stops", "--note", "review"}, ws...)...); code != 0 {
		t.Fatalf("goal wait: %d %s", code, errOut)
	}
	out, _, code := e.cli(append([]string{"goal", "status", "--exit-code"}, ws...)...)
	if code != 7 || !strings.Contains(out, "Waiting since") || !strings.Contains(out, "for a change of build") || !strings.Contains(out, "the wall clock stops") {
		t.Fatalf("goal status while waiting: exit %d\n%s", code, out)
	}
	out, errOut, code := e.cli(append([]string{"goal", "resume"}, ws...)...)
	if code != 0 || !strings.Contains(out, "Goal (active)") {
		t.Fatalf("goal resume: %d %s %s", code, out, errOut)
	}
}

// TestGoalStatusOfAPassedWaitTime: with no daemon, nothing wakes a goal
// whose wait time has passed; `agentd goal status` says the time passed
// and what wakes it, rather than a past time as if it were ahead.
func TestGoalStatusOfAPassedWaitTime(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws := []string{"--workspace", e.ws}
	if _, errOut, code := e.cli(append([]string{"goal", "create", "port the parser"}, ws...)...); code != 0 {
		t.Fatalf("goal create: %d %s", code, errOut)
	}
	if out, errOut, code := e.cli(append([]string{"goal", "wait", "--for", "1s"}, ws...)...); code != 0 || strings.Contains(out, "passed") {
		t.Fatalf("goal wait --for 1s: %d %s %s", code, out, errOut)
	}
	var out string
	waitFor(t, "goal status to say the wait time passed", func() bool {
		out, _, _ = e.cli(append([]string{"goal", "status"}, ws...)...)
		return strings.Contains(out, "(passed: the goal wakes when an agentd daemon serves this folder)")
	})
	if !strings.Contains(out, "Goal (waiting)") {
		t.Fatalf("goal status after the wait time: %s", out)
	}
}

// TestGoalWaitCountsAgainstTheWallClock: the model's wait counts against
// the wall-clock budget, so a goal that waits an hour under a one-second
// budget is blocked by the budget and waits no more.
func TestGoalWaitCountsAgainstTheWallClock(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "wait out the queue"}, nil)
	if res := c.modelWaits("t1", map[string]any{"for": "1h"}); res.IsError {
		t.Fatalf("UpdateGoal waiting = %+v", res)
	}
	// The time the goal has run already may exceed the budget: then the
	// budget change blocks it at once, else the timer does.
	c.MustExec("agentd.goal.setBudget", map[string]any{"wallClockMs": 1000}, nil)
	gc := c.awaitGoal("block")
	if gc.Change.Actor != "runtime" || !strings.HasPrefix(gc.Change.Reason, "budget reached") {
		t.Fatalf("goalChanged block = %+v", gc)
	}
	if w := c.waitOf(); w.Status != "blocked" || w.Wait != nil {
		t.Fatalf("goal after the budget = %+v", w)
	}
	expectRefused(t, "a wait of a blocked goal", c.toolIn("t1", "UpdateGoal", map[string]any{"status": "waiting", "wait": map[string]any{"for": "1h"}}), "goal.status_invalid")
}

// TestGoalWaitRepeatedInParallel: a model that asks for the same wait
// twice at once gets one wait: one goal.wait event, both answers telling
// it to stop. A subagent's wait and a wait outside the workspace are
// refused and change nothing.
func TestGoalWaitRepeatedInParallel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "merge the branch"}, nil)
	c.MustExec("agentd.turn.begin", map[string]any{"turnId": "t1", "origin": "user"}, nil)
	c.MustExec("agentd.step.begin", map[string]any{"turnId": "t1"}, nil)
	wait := map[string]any{"status": "waiting", "wait": map[string]any{"until": "23:59", "note": "the review"}}
	var sub toolResult
	c.MustExec("agentd.callTool", map[string]any{"name": "UpdateGoal", "agent": "explorer", "input": wait}, &sub)
	expectRefused(t, "a subagent's wait", sub, "goal.unsupported_agent")
	expectRefused(t, "a wait outside the workspace", c.toolIn("t1", "UpdateGoal", map[string]any{"status": "waiting", "wait": map[string]any{"paths": []string{"/etc/passwd"}}}), "goal.task_file_outside")
	var wg sync.WaitGroup
	results := make([]toolResult, 2)
	errs := make([]error, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.Exec("agentd.callTool", map[string]any{"name": "UpdateGoal", "turnId": "t1", "input": wait}, &results[i])
		}()
	}
	wg.Wait()
	for i, r := range results {
		if errs[i] != nil || r.IsError || !r.StopTurn {
			t.Fatalf("call %d: %v %+v", i, errs[i], r)
		}
	}
	if kinds := c.historyKinds(); count(kinds, "goal.wait") != 1 {
		t.Fatalf("history %v, want one goal.wait", kinds)
	}
	raw, _ := json.Marshal(c.waitOf())
	if w := c.waitOf(); w.Status != "waiting" || w.Wait.Note != "the review" {
		t.Fatalf("goal = %s", raw)
	}
}
