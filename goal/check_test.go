package goal

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func strPtr(s string) *string { return &s }

// withCheck returns a state whose active goal has the check command.
func withCheck(t *testing.T, c *clock, command string) *State {
	t.Helper()
	fixedIDs(t)
	s := &State{}
	_, err := s.Create(CreateParams{Objective: "ship it", Check: command}, c.now())
	mustNoErr(t, err)
	return s
}

// updateComplete decodes an UpdateGoal complete call as the commands layer
// does.
func updateComplete(t *testing.T, turnID string) ToolCall {
	t.Helper()
	call, err := NewCall(UpdateGoalTool, raw(`{"status":"complete"}`), "")
	mustNoErr(t, err)
	return ToolCall{Call: call, TurnID: turnID}
}

func TestCreateWithCheck(t *testing.T) {
	c := newClock()
	s := withCheck(t, c, "  go test ./...\t")
	if diff := cmp.Diff(&Check{Command: "go test ./..."}, s.Snapshot(c.now()).Check); diff != "" {
		t.Errorf("snapshot check (-want +got):\n%s", diff)
	}
	for _, tt := range []struct{ command, want string }{
		{"echo \x1b[31m", "control character U+001B"},
		{"make check\nmake lint", "control character U+000A; write it on one line"},
		{"   ", "the check is blank"},
		{strings.Repeat("é", MaxCheckChars+1), "at most 2000"},
	} {
		var st State
		_, err := st.Create(CreateParams{Objective: "o", Check: tt.command}, c.now())
		if codeOf(err) != CodeArgsInvalid || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Create with check %.20q: %v, want args.invalid with %q", tt.command, err, tt.want)
		}
		if st.Goal != nil {
			t.Errorf("a refused create made a goal")
		}
	}
	var st State
	_, err := st.Create(CreateParams{Objective: "o", Check: strings.Repeat("é", MaxCheckChars)}, c.now())
	mustNoErr(t, err) // the bound counts characters
	_, err = st.Create(CreateParams{Objective: "o", Replace: true}, c.now())
	if mustNoErr(t, err); st.Goal.Check != nil {
		t.Errorf("a goal created without a check has one: %+v", st.Goal.Check)
	}
}

func TestSetCheck(t *testing.T) {
	c := newClock()
	var empty State
	if _, err := empty.SetCheck(strPtr("true"), alice, c.now()); codeOf(err) != CodeNotFound {
		t.Errorf("SetCheck without a goal: %v, want goal.not_found", err)
	}
	s := withGoal(t, c)
	cs, err := s.SetCheck(strPtr("make test"), alice, c.advance(time.Second))
	mustNoErr(t, err)
	if diff := cmp.Diff([]string{"check/user/active"}, kinds(cs)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if cs[0].Reason != "check set by alice@laptop: make test" || *cs[0].Goal.Check.SetBy != alice || cs[0].Goal.Check.Command != "make test" {
		t.Errorf("change %+v", cs[0])
	}
	if cs, err := s.SetCheck(strPtr(" make test "), alice, c.now()); err != nil || cs != nil {
		t.Errorf("setting the same command: %v, %v; want a no-op", cs, err)
	}
	s.Goal.Check.LastRun = &CheckRun{ExitCode: 1}
	_, err = s.SetCheck(strPtr("make check"), alice, c.now())
	mustNoErr(t, err)
	if s.Goal.Check.LastRun != nil {
		t.Errorf("a new command kept the old command's last run")
	}
	cs, err = s.SetCheck(nil, alice, c.now())
	mustNoErr(t, err)
	if s.Goal.Check != nil || cs[0].Reason != "check removed by the user" {
		t.Errorf("removing: check %+v, change %+v", s.Goal.Check, cs)
	}
	if cs, err := s.SetCheck(nil, alice, c.now()); err != nil || cs != nil {
		t.Errorf("removing no check: %v, %v; want a no-op", cs, err)
	}
	if _, err := s.SetCheck(strPtr("  "), alice, c.now()); codeOf(err) != CodeArgsInvalid {
		t.Errorf("a blank check: %v, want args.invalid (null removes a check)", err)
	}

	_, _ = s.SetCheck(strPtr("make test"), alice, c.now())
	if _, _, err := s.StartCheck(User, "run-1", c.now()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetCheck(strPtr("other"), alice, c.now()); codeOf(err) != CodeCheckRunning {
		t.Errorf("SetCheck while running: %v, want goal.check_running", err)
	}
	s.Goal.Check.Running = false
	s.Goal.Status = Complete
	if _, err := s.SetCheck(strPtr("other"), alice, c.now()); codeOf(err) != CodeStatusInvalid {
		t.Errorf("SetCheck on a complete goal: %v, want goal.status_invalid", err)
	}
}

func TestStartAndFinishCheck(t *testing.T) {
	c := newClock()
	s := withGoal(t, c)
	if _, _, err := s.StartCheck(User, "run-1", c.now()); codeOf(err) != CodeNoCheck {
		t.Errorf("StartCheck without a check: %v, want goal.no_check", err)
	}
	_, _ = s.SetCheck(strPtr("make test"), alice, c.now())
	start, cs, err := s.StartCheck(User, "run-1", c.now())
	mustNoErr(t, err)
	if start != (CheckStart{GoalID: "goal-1", Command: "make test", RunID: "run-1"}) || !s.CheckRunning() || !cs[0].Goal.Check.Running {
		t.Errorf("start %+v, changes %+v", start, cs)
	}
	if _, _, err := s.StartCheck(Model, "run-1", c.now()); codeOf(err) != CodeCheckRunning {
		t.Errorf("a second StartCheck: %v, want goal.check_running", err)
	}
	run := CheckRun{ExitCode: 2, DurationMs: 1500, At: c.advance(1500 * time.Millisecond).Wall, OutputTail: "FAIL\n"}
	cs, ok := s.FinishCheck(start, run, c.now())
	run.RunID = "run-1"
	if !ok || s.CheckRunning() || *s.Goal.Check.LastRun != run || s.Goal.Status != Active {
		t.Fatalf("FinishCheck: ok %v, check %+v, status %s", ok, s.Goal.Check, s.Goal.Status)
	}
	if diff := cmp.Diff([]string{"check/runtime/active"}, kinds(cs)); diff != "" || cs[0].Reason != "check failed: `make test` exited 2 after 1s" {
		t.Errorf("changes %v (%s), reason %q", kinds(cs), diff, cs[0].Reason)
	}
	if cs, ok := s.FinishCheck(start, run, c.now()); ok || len(cs) != 1 || !strings.Contains(cs[0].Reason, "check run run-1 no longer counts") || s.Goal.Check.LastRun.At != run.At {
		t.Errorf("FinishCheck of a check that is not running: ok %v, changes %v, last run %+v; want it told as a run that no longer counts", ok, cs, s.Goal.Check.LastRun)
	}

	// The goal is replaced while its check runs: the result is dropped.
	_, _, _ = s.StartCheck(User, "run-1", c.now())
	_, err = s.Create(CreateParams{Objective: "next", Replace: true, Check: "make test"}, c.now())
	mustNoErr(t, err)
	if cs, ok := s.FinishCheck(start, run, c.now()); ok || cs != nil || s.Goal.Check.LastRun != nil {
		t.Errorf("the run of a replaced goal was recorded on the new one: %v", s.Goal.Check)
	}
}

func TestCompleteAfterCheck(t *testing.T) {
	c := newClock()
	s := withCheck(t, c, "make test")
	tc := updateComplete(t, "")
	if !s.CompletionCheck(tc) {
		t.Fatal("UpdateGoal complete of an active goal with a check needs no check")
	}
	// No path completes it without the check.
	res, cs := s.CallTool(tc, c.now())
	if res.ErrorCode != CodeCheckFailed || cs != nil || s.Goal.Status != Active {
		t.Errorf("CallTool complete without running the check: %+v, %v", res, cs)
	}

	start, _, err := s.StartCheck(Model, "run-1", c.now())
	mustNoErr(t, err)
	failed := CheckRun{ExitCode: 1, DurationMs: 2000, At: c.advance(2 * time.Second).Wall, OutputTail: "--- FAIL: TestParse\n"}
	_, recorded := s.FinishCheck(start, failed, c.now())
	res, cs = s.CompleteAfterCheck(tc, start, failed, recorded, c.now())
	if !res.IsError || res.ErrorCode != CodeCheckFailed || cs != nil || s.Goal.Status != Active || res.StopTurn {
		t.Errorf("failed check: %+v, %v, status %s", res, cs, s.Goal.Status)
	}
	for _, want := range []string{"`make test` exited 1 after 2s", "--- FAIL: TestParse", "Keep working"} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("output %q lacks %q", res.Output, want)
		}
	}

	// A failed check that printed nothing says so rather than showing an
	// empty output.
	start, _, _ = s.StartCheck(Model, "run-1", c.now())
	silent := CheckRun{ExitCode: 1, DurationMs: 1000, At: c.advance(time.Second).Wall}
	_, recorded = s.FinishCheck(start, silent, c.now())
	res, _ = s.CompleteAfterCheck(tc, start, silent, recorded, c.now())
	if res.ErrorCode != CodeCheckFailed || !strings.Contains(res.Output, "The check printed nothing") || strings.Contains(res.Output, "Output (the last") {
		t.Errorf("failed check with no output: %q", res.Output)
	}

	start, _, _ = s.StartCheck(Model, "run-1", c.now())
	passed := CheckRun{ExitCode: 0, DurationMs: 3000, At: c.advance(3 * time.Second).Wall, OutputTail: "ok\n", RunID: "run-1"}
	recordedCs, recorded := s.FinishCheck(start, passed, c.now())
	res, cs = s.CompleteAfterCheck(tc, start, passed, recorded, c.now())
	if res.IsError || s.Goal.Status != Complete || !res.StopTurn || !strings.HasPrefix(res.Output, "Check passed: `make test` exited 0 after 3s. Goal marked complete.") {
		t.Fatalf("passed check: %+v, status %s", res, s.Goal.Status)
	}
	all := append(recordedCs, cs...)
	if diff := cmp.Diff([]string{"check/runtime/active", "complete/model/complete"}, kinds(all)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	done := cs[len(cs)-1]
	if done.Reason != reasonComplete+"; check passed: `make test` exited 0 after 3s" || s.Goal.TerminalReason != done.Reason {
		t.Errorf("reason %q, terminal reason %q", done.Reason, s.Goal.TerminalReason)
	}
	// The history gets the goal as it completed: command, exit code,
	// duration and output tail.
	if diff := cmp.Diff(&Check{Command: "make test", LastRun: &passed}, done.Goal.Check); diff != "" {
		t.Errorf("completed goal's check (-want +got):\n%s", diff)
	}
	if s.CompletionCheck(tc) {
		t.Errorf("a complete goal needs a check again")
	}
}

func TestCompleteAfterCheckGoalChanged(t *testing.T) {
	c := newClock()
	s := withCheck(t, c, "make test")
	tc := updateComplete(t, "")
	start, _, _ := s.StartCheck(Model, "run-1", c.now())
	_, err := s.Cancel(c.now())
	mustNoErr(t, err)
	run := CheckRun{ExitCode: -1, OutputTail: "agentd: the check was killed: the goal was cancelled or replaced\n"}
	cs, recorded := s.FinishCheck(start, run, c.now())
	res, more := s.CompleteAfterCheck(tc, start, run, recorded, c.now())
	if recorded || cs != nil || more != nil || res.IsError || res.ErrorCode != CodeStaleCall || s.Goal != nil {
		t.Errorf("complete of a cancelled goal: %+v, recorded %v", res, recorded)
	}
}

// TestStaleCheckRunDoesNotComplete: a run whose running mark was cleared
// as left by a process that lost its lease (RecoverCheck), and that another
// run replaced, is recorded as a run that no longer counts and changes
// nothing, even when it passed; the run the goal waits on completes it
// (docs/runtime.md §2.10.5).
func TestStaleCheckRunDoesNotComplete(t *testing.T) {
	c := newClock()
	s := withCheck(t, c, "make test")
	tc := updateComplete(t, "")
	left, _, err := s.StartCheck(Model, "run-a", Instant{Wall: c.wall, Clock: "daemon-a"})
	mustNoErr(t, err)
	s.RecoverCheck(c.advance(10 * time.Second))
	live, _, err := s.StartCheck(Model, "run-b", c.now())
	mustNoErr(t, err)

	passed := CheckRun{ExitCode: 0, DurationMs: 12000, At: c.advance(2 * time.Second).Wall, OutputTail: "ok\n"}
	cs, recorded := s.FinishCheck(left, passed, c.now())
	res, more := s.CompleteAfterCheck(tc, left, passed, recorded, c.now())
	if recorded || len(cs) != 1 || cs[0].Kind != ChangeCheck || cs[0].Actor != Runtime || more != nil {
		t.Fatalf("the stale run: recorded %v, changes %v %v; want one check change and no other", recorded, cs, more)
	}
	if want := "check run run-a no longer counts, so its result changes nothing: `make test` exited 0 after 12s"; cs[0].Reason != want {
		t.Errorf("reason %q, want %q", cs[0].Reason, want)
	}
	if res.ErrorCode != CodeStaleCall || res.IsError || !strings.Contains(res.Output, "stopped counting") {
		t.Errorf("the stale run's answer: %+v", res)
	}
	if s.Goal.Status != Active || !s.CheckRunning() || s.Goal.Check.RunID != "run-b" || s.Goal.Check.LastRun != nil {
		t.Fatalf("the goal after the stale run: %+v, check %+v", s.Goal.Status, s.Goal.Check)
	}

	failed := CheckRun{ExitCode: 1, DurationMs: 3000, At: c.advance(time.Second).Wall, OutputTail: "FAIL\n"}
	cs, recorded = s.FinishCheck(live, failed, c.now())
	res, _ = s.CompleteAfterCheck(tc, live, failed, recorded, c.now())
	if !recorded || res.ErrorCode != CodeCheckFailed || s.Goal.Status != Active || s.Goal.Check.LastRun.RunID != "run-b" || len(cs) != 1 {
		t.Fatalf("the live run's result: recorded %v, %+v, status %s, last run %+v", recorded, res, s.Goal.Status, s.Goal.Check.LastRun)
	}
}

func TestCompletionCheckOnlyForAnActiveGoalWithACheck(t *testing.T) {
	c := newClock()
	plain := withGoal(t, c)
	if plain.CompletionCheck(updateComplete(t, "")) {
		t.Errorf("a goal without a check needs one")
	}
	s := withCheck(t, c, "make test")
	blocked, err := NewCall(UpdateGoalTool, raw(`{"status":"blocked"}`), "")
	mustNoErr(t, err)
	if s.CompletionCheck(ToolCall{Call: blocked}) {
		t.Errorf("UpdateGoal blocked needs the check")
	}
	_, _ = s.Pause("", c.now())
	if s.CompletionCheck(updateComplete(t, "")) {
		t.Errorf("a paused goal's complete runs the check (it is refused as it is)")
	}
	_, _ = s.Resume(c.now())
	beginTurn(t, s, "t1", c.now())
	_, err = s.Create(CreateParams{Objective: "other", Replace: true, Check: "make test"}, c.now())
	mustNoErr(t, err)
	if s.CompletionCheck(updateComplete(t, "t1")) {
		t.Errorf("a stale call runs the new goal's check")
	}
}

// TestModelCannotSetACheck: the goal tools' schemas have no check, and a
// model call that passes one is refused by the strict decoder, changing
// nothing.
func TestModelCannotSetACheck(t *testing.T) {
	for _, tool := range Tools() {
		props, _ := tool.InputSchema["properties"].(map[string]any)
		if _, ok := props["check"]; ok {
			b, _ := json.Marshal(tool.InputSchema)
			t.Errorf("%s's schema has a check: %s", tool.Name, b)
		}
	}
	c := newClock()
	s := withGoal(t, c)
	for _, call := range []modelCall{
		{Name: CreateGoalTool, Input: raw(`{"objective":"x","replace":true,"check":"true"}`)},
		{Name: UpdateGoalTool, Input: raw(`{"status":"complete","check":"true"}`)},
		{Name: UpdateGoalTool, Input: raw(`{"status":"active","check":null}`)},
	} {
		before := s.Clone()
		res, cs := s.callTool(t, call, c.now())
		if !res.IsError || res.ErrorCode != CodeArgsInvalid || !strings.Contains(res.Output, `Unknown field "check"`) || cs != nil {
			t.Errorf("%s %s: %+v, %v; want args.invalid naming check", call.Name, call.Input, res, cs)
		}
		if diff := cmp.Diff(before, *s); diff != "" {
			t.Errorf("a refused call changed the state:\n%s", diff)
		}
	}
}

func TestRecoverCheck(t *testing.T) {
	c := newClock()
	s := withCheck(t, c, "make test")
	if s.RecoverCheck(c.now()) != nil {
		t.Errorf("recovered a check that is not running")
	}
	_, _, _ = s.StartCheck(Model, "run-1", c.now())
	cs := s.RecoverCheck(c.now())
	if s.CheckRunning() || len(cs) != 1 || cs[0].Kind != ChangeCheck || cs[0].Actor != Runtime || s.Goal.Status != Active {
		t.Errorf("RecoverCheck: %+v, running %v", cs, s.CheckRunning())
	}
}

// TestCheckProcess: the process group of a running check is recorded for
// that goal's run only, kept until the run ends or the mark is cleared, and
// never shown in the snapshot.
func TestCheckProcess(t *testing.T) {
	c := newClock()
	s := withCheck(t, c, "make test")
	p := []byte(`{"pgid":4242,"start":99,"boot":"boot-1"}`)
	if s.CheckStarted(CheckStart{GoalID: s.Goal.ID, RunID: "run-1"}, p) {
		t.Error("recorded a process of a check that is not running")
	}
	start, _, _ := s.StartCheck(Model, "run-1", c.now())
	if s.CheckStarted(CheckStart{GoalID: "other", RunID: "run-1"}, p) {
		t.Error("recorded a process for another goal")
	}
	if s.CheckStarted(CheckStart{GoalID: s.Goal.ID, RunID: "run-0"}, p) {
		t.Error("recorded the process of another run on the running one")
	}
	if _, _, ok := s.RunningCheckProcess(); ok {
		t.Error("a left check before any process was recorded")
	}
	if !s.CheckStarted(start, p) {
		t.Fatal("did not record the process of the running check")
	}
	if got, id, ok := s.RunningCheckProcess(); !ok || !bytes.Equal(got, p) || id != start.GoalID {
		t.Errorf("RunningCheckProcess = %s %q %v", got, id, ok)
	}
	if b, _ := json.Marshal(s.Snapshot(c.now())); strings.Contains(string(b), "4242") {
		t.Errorf("the snapshot shows the process: %s", b)
	}
	s.RecoverCheck(c.now())
	if _, _, ok := s.RunningCheckProcess(); ok || s.Goal.Check.Process != nil {
		t.Error("the process outlived the running mark RecoverCheck cleared")
	}
	start, _, _ = s.StartCheck(Model, "run-1", c.now())
	s.CheckStarted(start, p)
	s.FinishCheck(start, CheckRun{ExitCode: 0}, c.now())
	if s.Goal.Check.Process != nil {
		t.Error("the process outlived the run FinishCheck recorded")
	}
}

// TestCheckLeft: a running mark is left when its own process runs no check,
// or when another process holds no lease (team folders); never while the
// process that runs it is alive (docs/runtime.md §2.10.3).
func TestCheckLeft(t *testing.T) {
	c := newClock()
	s := withCheck(t, c, "make test")
	if s.CheckLeft(c.id, false, nil) {
		t.Errorf("a check that is not running is left")
	}
	_, _, _ = s.StartCheck(Model, "run-1", c.now())
	if s.Goal.Check.RunBy != c.id {
		t.Fatalf("RunBy = %q, want the running process %q", s.Goal.Check.RunBy, c.id)
	}
	alive := map[string]bool{c.id: true}
	isAlive := func(owner string) bool { return alive[owner] }
	for _, tc := range []struct {
		name    string
		clock   string
		running bool
		alive   func(string) bool
		want    bool
	}{
		{"its own process runs it", c.id, true, nil, false},
		{"its own process runs none", c.id, false, isAlive, true},
		{"another process, one machine", "next-process", false, nil, true},
		{"another daemon holding its lease", "other-daemon", false, isAlive, false},
		{"another daemon whose lease is gone", "other-daemon", false, func(string) bool { return false }, true},
		// The mark copied from this process's run under a gone daemon's
		// name (an etcd writer): this process runs the check.
		{"this process runs it, the mark names a gone daemon", "next-process", true, func(string) bool { return false }, false},
	} {
		if got := s.CheckLeft(tc.clock, tc.running, tc.alive); got != tc.want {
			t.Errorf("%s: CheckLeft = %v, want %v", tc.name, got, tc.want)
		}
	}
	s.RecoverCheck(c.now())
	if s.Goal.Check.RunBy != "" {
		t.Errorf("RunBy after the recovery = %q", s.Goal.Check.RunBy)
	}
}

func TestCheckRunSummary(t *testing.T) {
	if got := (CheckRun{ExitCode: -1, DurationMs: 600000}).Summary("make"); got != "`make` did not finish (ran 10m00s)" {
		t.Errorf("summary %q", got)
	}
	s := withCheck(t, newClock(), "make")
	s.Goal.Check.LastRun = &CheckRun{OutputTail: "x"}
	cl := s.Clone()
	cl.Goal.Check.LastRun.OutputTail = "y"
	if s.Goal.Check.LastRun.OutputTail != "x" {
		t.Errorf("Clone shares the check's last run")
	}
}

// TestAdvanceAfterACheckPasses: a goal completed through its check
// advances to the first queued goal, which takes the queued check (not
// run yet).
func TestAdvanceAfterACheckPasses(t *testing.T) {
	c := newClock()
	s := withCheck(t, c, "make test")
	docs := "make docs"
	_, err := s.Enqueue(QueueParams{Objective: "document it", Check: &docs, CheckSetBy: alice}, c.now())
	mustNoErr(t, err)
	tc := updateComplete(t, "")
	start, _, err := s.StartCheck(Model, "run-1", c.now())
	mustNoErr(t, err)
	run := CheckRun{ExitCode: 0, DurationMs: 1000, At: c.advance(time.Second).Wall, OutputTail: "ok\n", RunID: "run-1"}
	recorded, ok := s.FinishCheck(start, run, c.now())
	res, cs := s.CompleteAfterCheck(tc, start, run, ok, c.now())
	if res.IsError || !strings.Contains(res.Output, "The next goal of the queue is now active") {
		t.Fatalf("complete after the check: %+v", res)
	}
	if diff := cmp.Diff([]string{"check/runtime/active", "complete/model/complete", "advance/runtime/active"}, kinds(append(recorded, cs...))); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if done := cs[0].Goal; done.Check.LastRun == nil || *done.Check.LastRun != run || !strings.Contains(done.TerminalReason, "check passed") {
		t.Errorf("the completed goal as recorded: %+v", done)
	}
	if diff := cmp.Diff(&Check{Command: "make docs", SetBy: &alice}, s.Goal.Check); diff != "" || s.Goal.Objective != "document it" {
		t.Errorf("the next goal's check (-want +got):\n%s", diff)
	}
}
