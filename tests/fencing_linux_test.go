package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentd/agentd/tests/etcdtest"
)

// liveDaemons lists the identities of the team's live keys.
func liveDaemons(t *testing.T, eps []string) []string {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	prefix := "/agentd/" + testTeamID + "/live/"
	resp, err := cli.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, kv := range resp.Kvs {
		ids = append(ids, strings.TrimPrefix(string(kv.Key), prefix))
	}
	return ids
}

// Fencing in a team folder (docs/team.md, "Fencing"), over the real binary
// and a real etcd member: a daemon paused (SIGSTOP) past its lease and
// resumed (SIGCONT) acts on what it believed before.

// awaitProcessState waits until /proc says process pid is in state (T:
// stopped, S or R: running again).
func awaitProcessState(t *testing.T, pid int, states string) {
	t.Helper()
	waitFor(t, fmt.Sprintf("process %d in state %s", pid, states), func() bool {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return false
		}
		// pid (comm) state ...: the state follows the last ')'.
		rest := string(data[strings.LastIndexByte(string(data), ')')+1:])
		f := strings.Fields(rest)
		return len(f) > 0 && strings.Contains(states, f[0])
	})
}

// TestTeamFencingPausedDaemon: daemon A drives the goal (a turn, its todo
// list, an UpdateGoal complete whose check runs); A is stopped past its
// lease, its check ends passing meanwhile. Daemon B ends A's turn and
// clears A's check (the restart rule), its person approves the check and
// resumes the goal, and B's agent writes its own list and completes, its
// check running. A is resumed: its agent's TodoList on the ended turn is
// refused and B's list stays; A's passing run no longer counts (recorded,
// the goal not completed); B's run is the one whose result counts.
func TestTeamFencingPausedDaemon(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 1)
	e1, e2 := newEnv(t), newEnv(t)
	writeTeamFile(t, testTeamID, c.Endpoints(), e1, e2)
	// Each machine's check waits for its folder's release file, then passes
	// where a pass file is: on A's machine, not on B's.
	check := "while [ ! -e release ]; do sleep 0.05; done; test -e pass"
	if err := os.WriteFile(filepath.Join(e1.ws, "pass"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	releaseA, releaseB := filepath.Join(e1.ws, "release"), filepath.Join(e2.ws, "release")
	t.Cleanup(func() { _ = os.WriteFile(releaseA, nil, 0o600); _ = os.WriteFile(releaseB, nil, 0o600) })

	pA := e1.start()
	a := pA.connect()
	a.Initialize(nil, e1.ws)
	// The lists stay open while the goals complete: the goal does not wait
	// for its items (docs/runtime.md §2.12), only for its check.
	a.MustExec("agentd.goal.create", map[string]any{"objective": "fenced work", "check": check, "requireTodos": false}, nil)
	ha := newHost(a)
	turnA, _ := ha.beginTurn("user")
	ha.beginStep(turnA)
	if res := a.toolIn(turnA, "TodoList", map[string]any{"todos": []item{{Title: "A's plan", Status: "in_progress"}}}); res.IsError {
		t.Fatalf("A's list: %+v", res)
	}
	completeA := a.asyncTool("UpdateGoal", map[string]any{"status": "complete"}) // in A's open turn
	a.awaitCheck(true)

	aOnly := liveDaemons(t, c.Endpoints())
	b := e2.start().connect()
	b.Initialize(nil, e2.ws)
	if len(aOnly) != 1 {
		t.Fatalf("live daemons before B: %v, want A's", aOnly)
	}
	pid := pA.Cmd.Process.Pid
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })
	awaitProcessState(t, pid, "T")
	// A's check passes while A is stopped: A has not seen it end.
	if err := os.WriteFile(releaseA, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	if gc := b.awaitGoal("pause"); gc.Change.Reason != leaseLostReason {
		t.Fatalf("B's pause of the goal A drove: %+v", gc)
	}
	if chk := b.checkOf(); chk == nil || chk.Running {
		t.Fatalf("A's check on B after A's lease went: %+v, want not running", chk)
	}
	b.MustExec("agentd.goal.approveCheck", map[string]any{"command": check}, nil)
	b.MustExec("agentd.goal.resume", nil, nil)
	hb := newHost(b)
	hb.h.TurnPrefix = "b-" // B's host numbers its turns too
	turnB, driven := hb.beginTurn("user")
	if !driven {
		t.Fatal("B's turn is not goal-driven")
	}
	hb.beginStep(turnB)
	if res := b.toolIn(turnB, "TodoList", map[string]any{"todos": []item{{Title: "B's plan", Status: "in_progress"}}}); res.IsError {
		t.Fatalf("B's list: %+v", res)
	}
	completeB := b.asyncTool("UpdateGoal", map[string]any{"status": "complete"})
	b.awaitCheck(true)

	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	awaitProcessState(t, pid, "SRD")
	if res := a.toolIn(turnA, "TodoList", map[string]any{"todos": []item{{Title: "A's stale plan", Status: "in_progress"}}}); res.ErrorCode != "turn.ended" {
		t.Fatalf("A's TodoList on its ended turn = %+v, want turn.ended", res)
	}
	resA := a.awaitAsync(completeA, "A's complete")
	if resA.ErrorCode != "goal.stale_call" || !strings.Contains(resA.Output, "stopped counting") {
		t.Fatalf("A's complete after its run stopped counting = %+v, want goal.stale_call", resA)
	}
	// A's complete was recorded by a commit, made after A registered again
	// under a new identity: A's old one is gone, B's is there, and A's new.
	if live := liveDaemons(t, c.Endpoints()); len(live) != 2 || slices.Contains(live, aOnly[0]) {
		t.Fatalf("live daemons after A resumed: %v, want B's and a new one of A's (not %s)", live, aOnly[0])
	}
	stale := b.awaitGoalWhere("A's run recorded as not counting", func(gc goalChanged) bool {
		return gc.Change.Kind == "check" && strings.Contains(gc.Change.Reason, "no longer counts")
	})
	if g := stale.Goal; g == nil || g.Status != "active" {
		t.Fatalf("the goal after A's stale run: %+v, want active", g)
	}
	if chk := b.checkOf(); !chk.Running || chk.LastRun != nil {
		t.Fatalf("B's run after A's stale one: %+v, want still running with no result yet", chk)
	}

	if err := os.WriteFile(releaseB, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	resB := b.awaitAsync(completeB, "B's complete")
	if resB.ErrorCode != "goal.check_failed" {
		t.Fatalf("B's complete = %+v, want its own run's failure", resB)
	}
	if chk := b.checkOf(); chk.Running || chk.LastRun == nil || chk.LastRun.ExitCode != 1 {
		t.Fatalf("the check after B's run: %+v, want B's result (exit 1)", chk)
	}
	if g := b.goal(); g.Status != "active" {
		t.Fatalf("goal: %+v, want active (A's passing run did not complete it)", g)
	}
	if got := b.state().Todos.Items; len(got) != 1 || got[0].Title != "B's plan" {
		t.Fatalf("todo list = %+v, want B's plan", got)
	}
}
