package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The goal check (docs/runtime.md §2.10) over the real binary.

type checkRun struct {
	ExitCode   int       `json:"exitCode"`
	DurationMs int64     `json:"durationMs"`
	At         time.Time `json:"at"`
	OutputTail string    `json:"outputTail"`
}

type checkSnap struct {
	Command string    `json:"command"`
	Running bool      `json:"running"`
	LastRun *checkRun `json:"lastRun"`
}

// checkOf reads the goal's check from agentd.state.
func (c *client) checkOf() *checkSnap {
	c.T.Helper()
	var st struct {
		Goal *struct {
			Status string     `json:"status"`
			Check  *checkSnap `json:"check"`
		} `json:"goal"`
	}
	c.MustExec("agentd.state", nil, &st)
	if st.Goal == nil {
		c.T.Fatal("no goal")
	}
	return st.Goal.Check
}

// awaitCheck waits for a goalChanged of kind check whose goal's check is
// running (or not) and returns its check.
func (c *client) awaitCheck(running bool) *checkSnap {
	c.T.Helper()
	var out *checkSnap
	c.Await("agentd/goalChanged", func(raw json.RawMessage) bool {
		var g struct {
			Goal *struct {
				Check *checkSnap `json:"check"`
			} `json:"goal"`
			Change struct{ Kind string } `json:"change"`
		}
		if json.Unmarshal(raw, &g) != nil || g.Change.Kind != "check" || g.Goal == nil || g.Goal.Check == nil || g.Goal.Check.Running != running {
			return false
		}
		out = g.Goal.Check
		return true
	})
	return out
}

// asyncTool runs a tool call in the background; the channel gets its
// result or error.
type asyncResult struct {
	res toolResult
	err error
}

func (c *client) asyncTool(name string, input any) <-chan asyncResult {
	ch := make(chan asyncResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		var r asyncResult
		r.err = c.Conn.Exec(ctx, "agentd.callTool", map[string]any{"name": name, "input": input}, &r.res)
		ch <- r
	}()
	return ch
}

func (c *client) awaitAsync(ch <-chan asyncResult, what string) toolResult {
	c.T.Helper()
	select {
	case r := <-ch:
		if r.err != nil {
			c.T.Fatalf("%s: %v", what, r.err)
		}
		return r.res
	case <-time.After(waitLimit):
		c.T.Fatalf("%s: no answer within %v", what, waitLimit)
	}
	return toolResult{}
}

// startWithCheckTimeout starts a stdio agentd whose checks get limit.
func (e *env) startWithCheckTimeout(limit string) *proc {
	e.t.Helper()
	cmd := e.command()
	cmd.Env = append(cmd.Env, "AGENTD_CHECK_TIMEOUT="+limit)
	return e.run(cmd)
}

// readPid reads a pid a check wrote, waiting for the file.
func readPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("%s: %q", path, b)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("the check did not write %s within %v", path, waitLimit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// processGone says whether pid no longer runs: no such process, or a
// zombie waiting for init to reap it.
func processGone(pid int) bool {
	if err := kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// pid (comm) S ...: the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// awaitGone fails the test unless every pid is gone within waitLimit.
func awaitGone(t *testing.T, what string, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for _, pid := range pids {
		for !processGone(pid) {
			if time.Now().After(deadline) {
				kill(pid, syscall.SIGKILL)
				t.Fatalf("%s: process %d of the check still runs", what, pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// sleeperCheck is a check that records its shell's pid and a child's,
// then waits for the child, which sleeps far beyond any test.
func sleeperCheck(dir string) string {
	return fmt.Sprintf(`sleep 300 & echo $! > %q; echo $$ > %q; echo sleeping; wait`, filepath.Join(dir, "child.pid"), filepath.Join(dir, "shell.pid"))
}

// TestGoalCheckPasses: UpdateGoal complete runs the check in the
// workspace folder with AGENTD_GOAL_ID; exit 0 completes the goal, the
// running check is notified, and the history keeps command, exit code,
// duration and output tail.
func TestGoalCheckPasses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	var st struct{ Goal goalSnap }
	c.MustExec("agentd.goal.create", map[string]any{"objective": "ship it", "check": `echo "in $(pwd) for $AGENTD_GOAL_ID"`}, &st)
	if c.checkOf().Command != `echo "in $(pwd) for $AGENTD_GOAL_ID"` {
		t.Fatalf("check after create: %+v", c.checkOf())
	}
	res := c.tool("UpdateGoal", map[string]any{"status": "complete"})
	want := fmt.Sprintf("in %s for %s\n", e.ws, st.Goal.GoalID)
	if res.IsError || !res.StopTurn || !strings.HasPrefix(res.Output, "Check passed: `echo") || !strings.Contains(res.Output, "exited 0") {
		t.Fatalf("UpdateGoal complete = %+v", res)
	}
	if running := c.awaitCheck(true); running.LastRun != nil {
		t.Errorf("running check already has a run: %+v", running)
	}
	gc := c.awaitGoal("complete")
	if gc.Goal.Status != "complete" || !strings.Contains(gc.Change.Reason, "check passed") {
		t.Fatalf("goalChanged complete = %+v", gc)
	}
	chk := c.checkOf()
	if chk.Running || chk.LastRun == nil || chk.LastRun.ExitCode != 0 || chk.LastRun.OutputTail != want || chk.LastRun.At.IsZero() {
		t.Fatalf("check after completion = %+v, want the tail %q", chk, want)
	}
	var h struct {
		Events []struct {
			Kind    string
			Payload []struct {
				Kind string
				Goal struct{ Check checkSnap }
			}
		}
	}
	c.MustExec("agentd.history", map[string]any{"limit": 1}, &h)
	if len(h.Events) != 1 || h.Events[0].Kind != "goal.complete" {
		t.Fatalf("newest history event = %+v", h.Events)
	}
	last := h.Events[0].Payload[len(h.Events[0].Payload)-1].Goal.Check
	if last.Command != chk.Command || last.LastRun == nil || last.LastRun.ExitCode != 0 || last.LastRun.OutputTail != want || last.LastRun.DurationMs != chk.LastRun.DurationMs {
		t.Errorf("history of the completion: %+v", last)
	}
}

// TestGoalCheckFails: a check that exits non-zero refuses completion with
// goal.check_failed and the output tail; the goal stays active, lastRun
// is stored.
func TestGoalCheckFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "ship it", "check": "echo compiling; echo 'parser_test.go:12: want 3, got 4' >&2; exit 7"}, nil)
	res := c.tool("UpdateGoal", map[string]any{"status": "complete"})
	if !res.IsError || res.ErrorCode != "goal.check_failed" || res.StopTurn || !strings.Contains(res.Output, "exited 7") || !strings.Contains(res.Output, "compiling\nparser_test.go:12: want 3, got 4\n") {
		t.Fatalf("UpdateGoal complete = %+v", res)
	}
	done := c.awaitCheck(false)
	if done.LastRun == nil || done.LastRun.ExitCode != 7 {
		t.Fatalf("goalChanged check after the run = %+v", done)
	}
	if g := c.goal(); g.Status != "active" {
		t.Fatalf("goal after a failed check: %+v", g)
	}
	if chk := c.checkOf(); chk.LastRun == nil || chk.LastRun.ExitCode != 7 || chk.LastRun.OutputTail != "compiling\nparser_test.go:12: want 3, got 4\n" {
		t.Fatalf("check = %+v", chk)
	}
}

// TestGoalCheckTimesOut: a check that outlives the time limit is killed
// with its process group: completion is refused, the tail says why, and
// neither the shell nor its child is left.
func TestGoalCheckTimesOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.startWithCheckTimeout("1s").connect()
	c.Initialize(nil, e.ws)
	dir := t.TempDir()
	c.MustExec("agentd.goal.create", map[string]any{"objective": "ship it", "check": sleeperCheck(dir)}, nil)
	began := time.Now()
	res := c.tool("UpdateGoal", map[string]any{"status": "complete"})
	if !res.IsError || res.ErrorCode != "goal.check_failed" || !strings.Contains(res.Output, "did not finish") ||
		!strings.Contains(res.Output, "sleeping\nagentd: the check was killed: it ran out of its time limit of 1s\n") {
		t.Fatalf("UpdateGoal complete = %+v", res)
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("the 1 s check took %v to answer", took)
	}
	awaitGone(t, "after the time limit", readPid(t, filepath.Join(dir, "shell.pid")), readPid(t, filepath.Join(dir, "child.pid")))
	if chk := c.checkOf(); chk.Running || chk.LastRun == nil || chk.LastRun.ExitCode != -1 || chk.LastRun.DurationMs < 1000 {
		t.Fatalf("check = %+v", chk)
	}
}

// TestGoalCheckPrintsMegabytes: a check that prints 64 MB keeps only the
// tail, and the daemon's memory does not grow with the output.
func TestGoalCheckPrintsMegabytes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.start()
	c := p.connect()
	c.Initialize(nil, e.ws)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "ship it", "check": "yes 0123456789abcdef 2>/dev/null | head -c 67108864; echo; echo THE-END; exit 1"}, nil)
	res := c.tool("UpdateGoal", map[string]any{"status": "complete"})
	if res.ErrorCode != "goal.check_failed" || !strings.HasSuffix(res.Output, "\nTHE-END\n") || !strings.Contains(res.Output, "0123456789abcdef\n0123456789abcdef\n") {
		t.Fatalf("UpdateGoal complete: %s, output ends %q", res.ErrorCode, res.Output[max(0, len(res.Output)-80):])
	}
	chk := c.checkOf()
	if tail := chk.LastRun.OutputTail; len(tail) > 4096 || len(tail) < 4000 || !strings.HasSuffix(tail, "\nTHE-END\n") {
		t.Fatalf("tail of %d bytes, ends %q", len(tail), tail[max(0, len(tail)-40):])
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if kb == 0 || kb > 48*1024 {
				t.Errorf("agentd's peak memory is %d kB after a check printed 64 MB", kb)
			}
		}
	}
}

// TestGoalCheckCancelledMidRun: while UpdateGoal waits for the check,
// the same connection keeps working (state, TodoList, a second complete
// is refused with goal.check_running), the snapshot shows it running,
// and a cancel kills the check's process group; the call answers
// goal.stale_call and no process is left.
func TestGoalCheckCancelledMidRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	dir := t.TempDir()
	c.MustExec("agentd.goal.create", map[string]any{"objective": "ship it", "check": sleeperCheck(dir)}, nil)
	pending := c.asyncTool("UpdateGoal", map[string]any{"status": "complete"})
	c.awaitCheck(true)
	shell, child := readPid(t, filepath.Join(dir, "shell.pid")), readPid(t, filepath.Join(dir, "child.pid"))

	if chk := c.checkOf(); !chk.Running {
		t.Fatalf("check while it runs = %+v", chk)
	}
	if res := c.tool("TodoList", map[string]any{"todos": []map[string]any{{"title": "wait for the check", "status": "done"}}}); res.IsError {
		t.Fatalf("TodoList during the check = %+v", res)
	}
	if res := c.tool("UpdateGoal", map[string]any{"status": "complete"}); res.ErrorCode != "goal.check_running" || !res.IsError {
		t.Fatalf("a second complete during the check = %+v", res)
	}
	if err := c.Exec("agentd.goal.runCheck", nil, nil); refusalCode(err) != "goal.check_running" {
		t.Fatalf("runCheck during the check: %v", err)
	}
	if err := c.Exec("agentd.goal.setCheck", map[string]any{"command": "true"}, nil); refusalCode(err) != "goal.check_running" {
		t.Fatalf("setCheck during the check: %v", err)
	}

	c.MustExec("agentd.goal.cancel", nil, nil)
	res := c.awaitAsync(pending, "UpdateGoal complete")
	if res.IsError || res.ErrorCode != "goal.stale_call" || !strings.Contains(res.Output, "changed while its check ran") {
		t.Fatalf("UpdateGoal after the cancel = %+v", res)
	}
	awaitGone(t, "after the cancel", shell, child)
	if c.goal() != nil {
		t.Fatal("the cancelled goal came back")
	}
}

// TestGoalCheckKilledAtShutdown: a check running on demand is killed
// with its group when agentd stops, and the process exits.
func TestGoalCheckKilledAtShutdown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.start()
	c := p.connect()
	c.Initialize(nil, e.ws)
	dir := t.TempDir()
	c.MustExec("agentd.goal.create", map[string]any{"objective": "ship it", "check": sleeperCheck(dir)}, nil)
	if err := c.SendBody(`{"jsonrpc":"2.0","id":9001,"method":"workspace/executeCommand","params":{"command":"agentd.goal.runCheck","arguments":[{}]}}`); err != nil {
		t.Fatal(err)
	}
	c.awaitCheck(true)
	shell, child := readPid(t, filepath.Join(dir, "shell.pid")), readPid(t, filepath.Join(dir, "child.pid"))
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.waitExit()
	awaitGone(t, "after agentd stopped", shell, child)

	// The next agentd finds the check not running.
	c2 := e.start().connect()
	c2.Initialize(nil, e.ws)
	if chk := c2.checkOf(); chk.Running {
		t.Errorf("check after a restart = %+v", chk)
	}
}

// TestModelCannotSetACheck: the model's tools have no check, and a
// CreateGoal or UpdateGoal that passes one is refused and changes nothing.
func TestModelCannotSetACheck(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	var tools struct {
		Tools []struct {
			Name        string
			InputSchema struct{ Properties map[string]any }
		}
	}
	c.MustExec("agentd.tools", nil, &tools)
	for _, tl := range tools.Tools {
		if _, ok := tl.InputSchema.Properties["check"]; ok {
			t.Errorf("%s's schema has check", tl.Name)
		}
	}
	if res := c.tool("CreateGoal", map[string]any{"objective": "x", "check": "true"}); !res.IsError || res.ErrorCode != "args.invalid" || !strings.Contains(res.Output, `"check"`) {
		t.Fatalf("CreateGoal with a check = %+v", res)
	}
	if c.goal() != nil {
		t.Fatal("a refused CreateGoal made a goal")
	}
	c.MustExec("agentd.goal.create", map[string]any{"objective": "x", "check": "exit 1"}, nil)
	if res := c.tool("UpdateGoal", map[string]any{"status": "complete", "check": "true"}); !res.IsError || res.ErrorCode != "args.invalid" {
		t.Fatalf("UpdateGoal with a check = %+v", res)
	}
	if chk := c.checkOf(); chk.Command != "exit 1" || chk.LastRun != nil {
		t.Fatalf("check after the model's attempts = %+v", chk)
	}
}

// TestGoalCheckFromTheShell: --check on create, set-check, check (exit
// code: 0 passed, 3 failed, 1 no check), --clear; the status shows it.
func TestGoalCheckFromTheShell(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws := []string{"--workspace", e.ws}
	if _, errOut, code := e.cli(append([]string{"goal", "create", "ship it", "--check", "echo checking; exit 2"}, ws...)...); code != 0 {
		t.Fatalf("goal create --check: %d %s", code, errOut)
	}
	out, _, code := e.cli(append([]string{"goal", "check"}, ws...)...)
	if code != 3 || !strings.Contains(out, "Check failed: `echo checking; exit 2` exited 2") || !strings.Contains(out, "checking\n") {
		t.Fatalf("goal check = %d %q", code, out)
	}
	if out, _, code := e.cli(append([]string{"goal", "status"}, ws...)...); code != 0 || !strings.Contains(out, "Check: echo checking; exit 2\n    last run: `echo checking; exit 2` exited 2") {
		t.Fatalf("goal status = %d %q", code, out)
	}
	if _, errOut, code := e.cli(append([]string{"goal", "set-check", "test -d ."}, ws...)...); code != 0 {
		t.Fatalf("goal set-check: %d %s", code, errOut)
	}
	var run checkRun
	out, _, code = e.cli(append([]string{"goal", "check", "--json"}, ws...)...)
	if err := json.Unmarshal([]byte(out), &run); code != 0 || err != nil || run.ExitCode != 0 {
		t.Fatalf("goal check --json = %d %q", code, out)
	}
	if _, errOut, code := e.cli(append([]string{"goal", "set-check", "--clear"}, ws...)...); code != 0 {
		t.Fatalf("goal set-check --clear: %d %s", code, errOut)
	}
	if _, errOut, code := e.cli(append([]string{"goal", "check"}, ws...)...); code != 1 || !strings.Contains(errOut, "the goal has no check") {
		t.Fatalf("goal check without a check = %d %q", code, errOut)
	}
	if _, errOut, code := e.cli(append([]string{"goal", "set-check"}, ws...)...); code != 2 || !strings.Contains(errOut, "--clear") {
		t.Fatalf("goal set-check without a command = %d %q", code, errOut)
	}
	if _, errOut, code := e.cli(append([]string{"goal", "pause", "--check", "x"}, ws...)...); code != 2 || !strings.Contains(errOut, "--check") {
		t.Fatalf("goal pause --check = %d %q", code, errOut)
	}
}

// TestMCPGoalCheck: through agentd mcp (one LSP session to the shared
// daemon), UpdateGoal complete waits for the check while the agent's other
// tool calls go on; a failing check answers isError with its output tail
// and the code goal.check_failed in _meta.
func TestMCPGoalCheck(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, lc := e.forwarder()
	lc.Initialize(nil, e.ws)
	c := e.mcp("", "", "--workspace", e.ws)
	release := filepath.Join(t.TempDir(), "release")
	lc.MustExec("agentd.goal.create", map[string]any{"objective": "ship it",
		"check": fmt.Sprintf(`echo waiting; while [ ! -f %q ]; do sleep 0.05; done; echo 'FAIL: TestParse'; exit 1`, release)}, nil)
	type answer struct {
		text, code string
		isError    bool
	}
	done := make(chan answer, 1)
	go func() {
		ctx, cancel := c.ctx()
		defer cancel()
		res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "UpdateGoal", Arguments: map[string]any{"status": "complete"}})
		if err != nil || len(res.Content) != 1 {
			done <- answer{text: fmt.Sprintf("error %v, result %+v", err, res)}
			return
		}
		text, _ := res.Content[0].(*mcp.TextContent)
		code, _ := res.Meta["agentd/errorCode"].(string)
		done <- answer{text: text.Text, code: code, isError: res.IsError}
	}()
	lc.awaitCheck(true)
	c.good("TodoList", map[string]any{"todos": []item{{"while the check runs", "in_progress"}}})
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-done:
		if !a.isError || a.code != "goal.check_failed" || !strings.Contains(a.text, "Goal not complete") || !strings.HasSuffix(a.text, "waiting\nFAIL: TestParse\n") {
			t.Fatalf("UpdateGoal complete over MCP = %+v", a)
		}
	case <-time.After(waitLimit):
		t.Fatal("UpdateGoal complete over MCP did not answer")
	}
	if lc.goal().Status != "active" {
		t.Errorf("goal after the failed check: %+v", lc.goal())
	}
	// agentd goal check asks the shared daemon, which runs it; the editor
	// is told of its start and its end.
	before := lc.state().Revision
	out, errOut, code := e.cli("goal", "check", "--workspace", e.ws)
	if code != 3 || !strings.Contains(out, "Check failed: `echo waiting;") || !strings.Contains(out, "FAIL: TestParse\n") {
		t.Fatalf("agentd goal check through the daemon = %d %q %q", code, out, errOut)
	}
	lc.Await("agentd/goalChanged", revisionAtLeast(before+2))
}

// TestGoalCheckRequestCancelled: $/cancelRequest of the request that runs
// a check kills it with its group; the request answers the run as it
// ended, which is also recorded: exit code -1 and the reason.
func TestGoalCheckRequestCancelled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	dir := t.TempDir()
	c.MustExec("agentd.goal.create", map[string]any{"objective": "ship it", "check": sleeperCheck(dir)}, nil)
	ch := c.Expect("9001")
	if err := c.SendBody(`{"jsonrpc":"2.0","id":9001,"method":"workspace/executeCommand","params":{"command":"agentd.goal.runCheck","arguments":[{}]}}`); err != nil {
		t.Fatal(err)
	}
	c.awaitCheck(true)
	shell, child := readPid(t, filepath.Join(dir, "shell.pid")), readPid(t, filepath.Join(dir, "child.pid"))
	c.MustNotify("$/cancelRequest", map[string]any{"id": 9001})
	m, err := c.Wait(ch, "the cancelled runCheck")
	if err != nil {
		t.Fatal(err)
	}
	var answered struct {
		Run    checkRun
		Passed bool
	}
	if m.Error != nil || json.Unmarshal(m.Result, &answered) != nil || answered.Passed || answered.Run.ExitCode != -1 {
		t.Fatalf("cancelled runCheck answered %s (error %v); want the killed run", m.Result, m.Error)
	}
	awaitGone(t, "after the cancel", shell, child)
	done := c.awaitCheck(false)
	if done.LastRun == nil || done.LastRun.ExitCode != -1 || !strings.HasSuffix(done.LastRun.OutputTail, "sleeping\nagentd: the check was killed: the request that ran it was cancelled\n") {
		t.Fatalf("check after the cancel = %+v", done.LastRun)
	}
}

// TestGoalCheckKilledWhenTheConnectionEnds: the end of input of the stdio
// connection that runs a check kills it with its group, and agentd exits.
func TestGoalCheckKilledWhenTheConnectionEnds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.start()
	c := p.connect()
	c.Initialize(nil, e.ws)
	dir := t.TempDir()
	c.MustExec("agentd.goal.create", map[string]any{"objective": "ship it", "check": sleeperCheck(dir)}, nil)
	if err := c.SendBody(`{"jsonrpc":"2.0","id":9001,"method":"workspace/executeCommand","params":{"command":"agentd.goal.runCheck","arguments":[{}]}}`); err != nil {
		t.Fatal(err)
	}
	c.awaitCheck(true)
	shell, child := readPid(t, filepath.Join(dir, "shell.pid")), readPid(t, filepath.Join(dir, "child.pid"))
	p.Stdin.Close()
	p.waitExit()
	awaitGone(t, "after the end of input", shell, child)
}

// TestGoalQueueAdvanceAfterACheck: a goal completed through its check
// advances to the first queued goal, which takes the queued check: its
// own UpdateGoal complete runs that check (docs/runtime.md §2.9, §2.10).
func TestGoalQueueAdvanceAfterACheck(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "ship it", "check": "echo shipped"}, nil)
	c.MustExec("agentd.goal.queue.add", map[string]any{"objective": "document it", "check": "echo 'docs missing'; exit 3"}, nil)
	res := c.tool("UpdateGoal", map[string]any{"status": "complete"})
	if res.IsError || !strings.HasPrefix(res.Output, "Check passed: `echo shipped` exited 0") || !strings.Contains(res.Output, "The next goal of the queue is now active") {
		t.Fatalf("UpdateGoal complete of the first goal = %+v", res)
	}
	adv := c.awaitGoal("advance")
	if adv.Goal == nil || adv.Goal.Objective != "document it" {
		t.Fatalf("goalChanged advance = %+v", adv)
	}
	if chk := c.checkOf(); chk == nil || chk.Command != "echo 'docs missing'; exit 3" || chk.LastRun != nil || chk.Running {
		t.Fatalf("the next goal's check = %+v", chk)
	}
	// A goal tool call later in the same turn would be stale (§2.9.1); a
	// call outside a turn acts on the new goal.
	res = c.tool("UpdateGoal", map[string]any{"status": "complete"})
	if res.ErrorCode != "goal.check_failed" || !strings.Contains(res.Output, "exited 3") || !strings.HasSuffix(res.Output, "docs missing\n") {
		t.Fatalf("UpdateGoal complete of the advanced goal = %+v", res)
	}
	if g := c.goal(); g.Objective != "document it" || g.Status != "active" {
		t.Fatalf("goal after its check failed = %+v", g)
	}
}

// TestGoalCheckKilledAfterAgentdWasKilled: agentd killed with SIGKILL
// during a check leaves the check's process group running; the next
// agentd that opens the folder kills it, grandchild too, and clears the
// running mark (docs/runtime.md §2.10.3).
func TestGoalCheckKilledAfterAgentdWasKilled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.start()
	c := p.connect()
	c.Initialize(nil, e.ws)
	dir := t.TempDir()
	c.MustExec("agentd.goal.create", map[string]any{"objective": "ship it", "check": sleeperCheck(dir)}, nil)
	pending := c.asyncTool("UpdateGoal", map[string]any{"status": "complete"})
	c.awaitCheck(true)
	shell, child := killMidCheck(t, p, dir)
	<-pending
	if processGone(shell) || processGone(child) {
		t.Fatal("the check ended with agentd; this test needs it left running")
	}
	reopenKills(t, e, shell, child)
}

// killMidCheck kills agentd p with SIGKILL while the check of sleeperCheck
// (or one writing the same pid files in dir) runs, and returns the pids of
// the check's shell and child; the check's group is killed when the test
// ends, whatever the test left.
func killMidCheck(t *testing.T, p *proc, dir string) (shell, child int) {
	t.Helper()
	shell, child = readPid(t, filepath.Join(dir, "shell.pid")), readPid(t, filepath.Join(dir, "child.pid"))
	t.Cleanup(func() { kill(-shell, syscall.SIGKILL) })
	if err := p.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.waitExit()
	return shell, child
}

// reopenKills starts the next agentd in e and opens the folder: it kills
// what the killed one's check left running (pids) and clears the running
// mark (docs/runtime.md §2.10.3).
func reopenKills(t *testing.T, e *env, pids ...int) {
	t.Helper()
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	awaitGone(t, "after the next agentd opened the folder", pids...)
	if chk := c.checkOf(); chk.Running {
		t.Errorf("check after the restart = %+v", chk)
	}
}

// TestGoalCheckKilledAfterAgentdWasKilledLeaderGone: the same when the
// check's shell exited after agentd was killed but left a child in its
// group: the next agentd still finds and kills the group.
func TestGoalCheckKilledAfterAgentdWasKilledLeaderGone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := e.start()
	c := p.connect()
	c.Initialize(nil, e.ws)
	dir := t.TempDir()
	release := filepath.Join(dir, "release")
	check := fmt.Sprintf(`sleep 300 & echo $! > %q; echo $$ > %q; while [ ! -e %q ]; do sleep 0.05; done`, filepath.Join(dir, "child.pid"), filepath.Join(dir, "shell.pid"), release)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "ship it", "check": check}, nil)
	if err := c.SendBody(`{"jsonrpc":"2.0","id":9001,"method":"workspace/executeCommand","params":{"command":"agentd.goal.runCheck","arguments":[{}]}}`); err != nil {
		t.Fatal(err)
	}
	c.awaitCheck(true)
	shell, child := killMidCheck(t, p, dir)
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	awaitGone(t, "the check's shell after the release", shell)
	if processGone(child) {
		t.Fatal("the check's child ended with its shell; this test needs it left running")
	}
	reopenKills(t, e, child)
}

// TestGoalCheckFolderGone: a check whose workspace folder was deleted does
// not start, and its output tail says the folder is gone (not that sh is
// missing); agentd stays up.
func TestGoalCheckFolderGone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "ship it", "check": "true"}, nil)
	if err := os.RemoveAll(e.ws); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Run    checkRun `json:"run"`
		Passed bool     `json:"passed"`
	}
	c.MustExec("agentd.goal.runCheck", nil, &res)
	if res.Passed || res.Run.ExitCode != -1 || !strings.Contains(res.Run.OutputTail, "agentd: the check did not start: the workspace folder is gone: ") {
		t.Errorf("run in a deleted folder = %+v", res)
	}
	if chk := c.checkOf(); chk.Running || chk.LastRun == nil || chk.LastRun.OutputTail != res.Run.OutputTail {
		t.Errorf("check after the run = %+v", chk)
	}
}

// TestGoalCheckKilledAfterTheShellWasKilled: `agentd goal check` run with
// no daemon and killed with SIGKILL leaves its check running; the next
// shell command that opens the folder kills the check's group and clears
// the mark, so the goal is not stuck with a check that never ends
// (docs/runtime.md §2.10.3).
func TestGoalCheckKilledAfterTheShellWasKilled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := t.TempDir()
	ws := []string{"--workspace", e.ws}
	if _, errOut, code := e.cli(append([]string{"goal", "create", "ship it", "--check", sleeperCheck(dir)}, ws...)...); code != 0 {
		t.Fatalf("goal create --check: %d %s", code, errOut)
	}
	cmd := e.command(append([]string{"goal", "check"}, ws...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	shell, child := readPid(t, filepath.Join(dir, "shell.pid")), readPid(t, filepath.Join(dir, "child.pid"))
	t.Cleanup(func() { kill(-shell, syscall.SIGKILL) })
	cmd.Process.Kill()
	cmd.Wait()
	if processGone(shell) || processGone(child) {
		t.Fatal("the check ended with agentd; this test needs it left running")
	}

	if _, errOut, code := e.cli(append([]string{"goal", "set-check", "exit 0"}, ws...)...); code != 0 {
		t.Fatalf("goal set-check after the kill: %d %s", code, errOut)
	}
	awaitGone(t, "after the next shell command", shell, child)
	out, _, code := e.cli(append([]string{"goal", "check"}, ws...)...)
	if code != 0 || !strings.Contains(out, "Check passed: `exit 0` exited 0") {
		t.Errorf("goal check after the recovery = %d %q", code, out)
	}
}
