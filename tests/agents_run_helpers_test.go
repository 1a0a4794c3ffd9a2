package tests

// What the tests of `agentd run` (docs/commands.md, "Running a goal
// unattended") and of a goal that waits (docs/runtime.md §2.13) share: the
// run as a process whose lines are awaited, the agent found on the PATH,
// the person's goal, the model's wait for ci/result.txt and its wake, and
// the editor's pause while the model answers.

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// runProc is a running `agentd run`: its stdout lines as they come.
type runProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	lines  chan string
	mu     sync.Mutex
	all    []string
	stderr bytes.Buffer
	done   chan struct{}
	code   int
}

// agentOnPath is env with agent's program first on the PATH, as `agentd
// run AGENT` finds it, and agentd (and agentd-hook beside it) next.
func agentOnPath(t *testing.T, a *agentEnv, agent string, env []string) []string {
	path := filepath.Dir(agentBin(t, agent)) + string(os.PathListSeparator) + filepath.Dir(agentdBin) + string(os.PathListSeparator) + os.Getenv("PATH")
	return append(env, "PATH="+path)
}

// claudeForRun is the environment in which `agentd run claude` finds the
// real Claude Code on its PATH and the scripted model at model's url, in a
// folder whose trust and project server the person accepted; lc is an
// editor's client on the folder.
func claudeForRun(t *testing.T, a *agentEnv, model *scriptedModel) (*client, []string) {
	env := agentOnPath(t, a, "claude", a.environ(claudeEnv(model.url)...))
	lc := a.editorFirst()
	a.trustClaude()
	return lc, env
}

// startRun starts `agentd run claude` in the folder with env.
func startRun(t *testing.T, a *agentEnv, env []string) *runProc {
	return startRunOf(t, a, env, "claude")
}

// startRunOf starts `agentd run AGENT -- FLAGS` in the folder with env.
func startRunOf(t *testing.T, a *agentEnv, env []string, agent string, flags ...string) *runProc {
	return startRunArgs(t, a, env, append([]string{agent, "--workspace", a.ws, "--state-dir", a.stateDir, "--"}, flags...)...)
}

// startRunArgs starts `agentd run ARGS` in the folder with env.
func startRunArgs(t *testing.T, a *agentEnv, env []string, args ...string) *runProc {
	p := &runProc{t: t, lines: make(chan string, 1000), done: make(chan struct{})}
	p.cmd = exec.Command(a.bin, append([]string{"run"}, args...)...)
	p.cmd.Dir, p.cmd.Env, p.cmd.Stderr = a.ws, env, &p.stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.mu.Lock()
			p.all = append(p.all, sc.Text())
			p.mu.Unlock()
			p.lines <- sc.Text()
		}
		err := p.cmd.Wait()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			p.code = exit.ExitCode()
		}
		close(p.lines)
		close(p.done)
	}()
	t.Cleanup(func() { p.cmd.Process.Kill(); <-p.done })
	return p
}

// awaitLine returns the next line that contains want.
func (p *runProc) awaitLine(want string) string {
	p.t.Helper()
	limit := time.After(agentLimit)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("agentd run ended without a line with %q:\n%s\n%s", want, p.output(), p.stderr.String())
			}
			if strings.Contains(l, want) {
				return l
			}
		case <-limit:
			p.t.Fatalf("no line with %q from agentd run:\n%s", want, p.output())
		}
	}
}

// wait waits for the run's end: its exit code and last line.
func (p *runProc) wait() (int, string) {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(agentLimit):
		p.t.Fatalf("agentd run did not end:\n%s", p.output())
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.all) == 0 {
		return p.code, ""
	}
	return p.code, p.all[len(p.all)-1]
}

// waitComplete waits for the run's end and fails the test unless it
// exited 0 with a last line "goal complete after …"; it returns that line.
func (p *runProc) waitComplete() string {
	p.t.Helper()
	code, last := p.wait()
	if code != 0 || !strings.HasPrefix(last, "goal complete after ") {
		p.t.Fatalf("agentd run exited %d with %q, want 0 and the goal complete:\n%s\n%s", code, last, p.output(), p.stderr.String())
	}
	return last
}

func (p *runProc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.all, "\n")
}

// count is how many of the run's lines so far contain s.
func (p *runProc) count(s string) int {
	return strings.Count(p.output(), s)
}

// finishScript marks the list done, completes the goal and says so: what
// the model does once it is let go on.
var finishScript = []reply{
	{tool: "mcp__agentd__TodoList", input: map[string]any{"todos": []item{{"write the parser", "done"}}}, tokens: 5},
	{tool: "mcp__agentd__UpdateGoal", input: map[string]any{"status": "complete"}, tokens: 5},
	{text: "Done: the parser ships.", tokens: 4},
}

// personGoal creates the person's goal "Ship the parser" and the budget
// args when given.
func personGoal(t *testing.T, a *agentEnv, budget ...string) {
	cmds := [][]string{{"goal", "create", "Ship the parser"}}
	if len(budget) > 0 {
		cmds = append(cmds, append([]string{"goal", "budget"}, budget...))
	}
	for _, args := range cmds {
		if out, errOut, code := a.cli(append(args, "--workspace", a.ws)...); code != 0 {
			t.Fatalf("agentd %v: %s%s", args, out, errOut)
		}
	}
}

// goalComplete fails the test unless the daemon has the goal complete.
func goalComplete(t *testing.T, lc *client) {
	t.Helper()
	if g := goalNow(t, lc); g.Status != "complete" {
		t.Errorf("goal after the run: %+v", g)
	}
}

// releaseFile is a file a scripted reply waits for (reply.waitFor) and
// the func that writes it, letting the reply go.
func releaseFile(t *testing.T) (path string, release func()) {
	path = filepath.Join(t.TempDir(), "release")
	return path, func() { writeFile(t, path, nil) }
}

// waitForCI is UpdateGoal's input of a model that waits for ci/result.txt.
var waitForCI = map[string]any{"status": "waiting", "wait": map[string]any{"paths": []string{"ci/result.txt"}, "note": "the CI run"}}

// ciFolder makes the workspace's ci folder, which the goal waits in.
func ciFolder(t *testing.T, a *agentEnv) {
	if err := os.MkdirAll(filepath.Join(a.ws, "ci"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// awaitModelWait waits for the editor's goalChanged of the model's wait.
func awaitModelWait(t *testing.T, lc *client) {
	t.Helper()
	if gc := lc.awaitGoal("wait"); gc.Change.Actor != "model" || gc.Change.Status != "waiting" {
		t.Fatalf("goalChanged wait = %+v", gc)
	}
}

// ciPasses writes ci/result.txt and waits for the editor's goalChanged of
// the wake that names it.
func ciPasses(t *testing.T, a *agentEnv, lc *client) {
	t.Helper()
	writeFile(t, filepath.Join(a.ws, "ci", "result.txt"), []byte("green\n"))
	if gc := lc.awaitGoal("wake"); !strings.Contains(gc.Change.Reason, "ci/result.txt changed") {
		t.Fatalf("goalChanged wake = %+v", gc)
	}
}

// pauseWhileAnswering: while the model's second answer waits for release,
// the editor pauses the goal ("lunch"), the answer goes out, and the run
// waits with no further model call (calls is the model's count); then the
// editor resumes the goal.
func pauseWhileAnswering(t *testing.T, p *runProc, lc *client, release func(), calls func() int) {
	t.Helper()
	p.awaitLine("now: write the parser")
	lc.MustExec("agentd.goal.pause", map[string]any{"reason": "lunch"}, nil)
	release()
	p.awaitLine("waiting: the goal is paused (lunch)")
	if n := calls(); n != 2 {
		t.Fatalf("%d model calls when the run waits, want 2: the pause ends the run after the current turn", n)
	}
	lc.MustExec("agentd.goal.resume", map[string]any{}, nil)
}

// sameSession fails the test unless the run's resume line names the
// session its start line named.
func sameSession(t *testing.T, agent, started, resumed string) {
	t.Helper()
	if id := strings.TrimPrefix(started, "starting "+agent+" (session "); "resuming "+agent+" (session "+id != resumed {
		t.Errorf("the second process %q does not resume the first's session %q", resumed, started)
	}
}

// halfwayModel is a Messages API model that puts "write the parser" in
// progress, whose second answer ("Half of the parser is written.") waits
// for the returned release, and that then finishes (finishScript).
func halfwayModel(t *testing.T) (*scriptedModel, func()) {
	path, release := releaseFile(t)
	return newScriptedModel(t, append([]reply{
		{tool: "mcp__agentd__TodoList", input: map[string]any{"todos": []item{{"write the parser", "in_progress"}}}, tokens: 5},
		{text: "Half of the parser is written.", tokens: 7, waitFor: path},
	}, finishScript...)), release
}
