package tests

// `agentd run claude` (docs/commands.md,
// "Running a goal unattended") with the real Claude
// Code, offline, on a scripted model: a goal completed over two agent
// processes, a pause from an editor's client that stops the run after the
// current turn and a resume that continues it, a run killed and started
// again that picks the goal up, and a budget that ends the run with its
// exit code and line; those tests are skipped unless AGENTD_AGENTS is set
// (tests/agents/ci.sh). TestRunWaitsOnPausedGoal needs no agent.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRealClaudeCodeRunTwoProcesses: Claude Code's own cap of continuations
// (set to 1 here) ends the first process with the goal paused by the
// runtime after it counted turns; agentd run resumes the goal and the
// agent's session (the second process's first call carries the first
// one's conversation), and the goal completes.
func TestRealClaudeCodeRunTwoProcesses(t *testing.T) {
	a := newAgentEnv(t)
	model := newScriptedModel(t, append([]reply{
		{tool: "mcp__agentd__TodoList", input: map[string]any{"todos": []item{{"write the parser", "in_progress"}}}, tokens: 5},
		{text: "Reading the grammar.", tokens: 7},
		{text: "Still reading the grammar.", tokens: 7},
	}, finishScript...))
	lc, env := claudeForRun(t, a, model)
	a.setup("claude")
	settings := filepath.Join(a.ws, ".claude", "settings.json")
	b, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(strings.Replace(string(b), `"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "100"`, `"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "1"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	personGoal(t, a)
	p := startRun(t, a, env)
	started := p.awaitLine("starting claude (session ")
	p.awaitLine("resuming the goal")
	resumed := p.awaitLine("resuming claude (session ")
	if last := p.waitComplete(); !strings.HasPrefix(last, "goal complete after 3 turns") {
		t.Fatalf("agentd run ended with %q, want goal complete after 3 turns:\n%s", last, p.output())
	}
	sameSession(t, "claude", started, resumed)
	calls := model.calls()
	if len(calls) != 6 {
		t.Fatalf("%d model calls, want 6", len(calls))
	}
	if !strings.Contains(calls[0], markContinuation) {
		t.Errorf("the first prompt is not the continuation prompt")
	}
	if !strings.Contains(calls[3], "Still reading the grammar.") {
		t.Errorf("the second process's first call lacks the first process's conversation")
	}
	if g := goalNow(t, lc); g.Status != "complete" || g.TurnsUsed != 3 {
		t.Errorf("goal after the run: %+v", g)
	}
}

// TestRealClaudeCodeRunPauseFromEditor: an editor's client pauses the goal
// while the model is answering; the agent ends after that turn, agentd run
// waits and starts nothing (no model call), and the editor's resume starts
// the agent again, on the same session, until the goal completes.
func TestRealClaudeCodeRunPauseFromEditor(t *testing.T) {
	a := newAgentEnv(t)
	model, release := halfwayModel(t)
	lc, env := claudeForRun(t, a, model)
	personGoal(t, a)
	p := startRun(t, a, env)
	pauseWhileAnswering(t, p, lc, release, func() int { return len(model.calls()) })
	p.awaitLine("resuming claude (session ")
	p.waitComplete()
	if n := len(model.calls()); n != 5 {
		t.Errorf("%d model calls, want 5", n)
	}
}

// TestRealClaudeCodeRunKilledPicksUp: agentd run killed in the middle of a
// turn (its agent dies with it) and started again goes on with the goal in
// a new session of the agent (the old one's open turn would end as an
// interruption, which pauses the goal), and the goal completes.
func TestRealClaudeCodeRunKilledPicksUp(t *testing.T) {
	a := newAgentEnv(t)
	model, release := halfwayModel(t)
	lc, env := claudeForRun(t, a, model)
	personGoal(t, a)
	first := startRun(t, a, env)
	first.awaitLine("now: write the parser")
	first.cmd.Process.Kill()
	first.wait()
	release()
	second := startRun(t, a, env)
	second.awaitLine("did not end by itself: starting a new session")
	second.waitComplete()
	goalComplete(t, lc)
}

// TestRealClaudeCodeRunBudget: agentd run sets Claude Code up on the spot,
// and a goal with a 2-turn budget ends the run blocked: exit code 3 and
// the budget's reason as the last line.
func TestRealClaudeCodeRunBudget(t *testing.T) {
	a := newAgentEnv(t)
	model := newScriptedModel(t, []reply{{text: "Turn one done.", tokens: 11}, {text: "Turn two done.", tokens: 13}, {text: "Past the budget.", tokens: 17}})
	_, env := claudeForRun(t, a, model)
	personGoal(t, a, "2", "turns")
	p := startRun(t, a, env)
	code, last := p.wait()
	if code != 3 || last != "blocked: budget reached: turn budget of 2 turns" {
		t.Fatalf("agentd run exited %d with %q, want 3 and the budget's reason:\n%s\n%s", code, last, p.output(), p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), "running agentd setup claude now") {
		t.Errorf("agentd run's stderr does not say it set Claude Code up:\n%s", p.stderr.String())
	}
	if n := len(model.calls()); n != 2 {
		t.Errorf("%d model calls, want 2", n)
	}
}

// TestRealClaudeCodeRunQueue: a goal completes with a goal queued; the
// queue advances and the hooks continue the same agent process on the next
// goal, which agentd run names, until that one completes too.
func TestRealClaudeCodeRunQueue(t *testing.T) {
	a := newAgentEnv(t)
	model := newScriptedModel(t, append(append([]reply{}, finishScript...),
		reply{tool: "mcp__agentd__UpdateGoal", input: map[string]any{"status": "complete"}, tokens: 5},
		reply{text: "The parser is documented.", tokens: 4}))
	lc, env := claudeForRun(t, a, model)
	personGoal(t, a)
	if out, errOut, code := a.cli("goal", "queue", "add", "Document the parser", "--workspace", a.ws); code != 0 {
		t.Fatalf("agentd goal queue add: %s%s", out, errOut)
	}
	p := startRun(t, a, env)
	p.awaitLine("next goal: Document the parser")
	p.waitComplete()
	var st struct {
		Goal *struct {
			Objective string `json:"objective"`
			Status    string `json:"status"`
		} `json:"goal"`
	}
	lc.MustExec("agentd.state", map[string]any{}, &st)
	if st.Goal == nil || st.Goal.Objective != "Document the parser" || st.Goal.Status != "complete" {
		t.Errorf("goal after the run: %+v", st.Goal)
	}
}

// TestRunWaitsOnPausedGoal: without any agent, agentd run exits 1 on a
// folder with no goal; on a paused goal it starts nothing and waits, and a
// signal ends it with the paused goal's exit code and a line saying so.
func TestRunWaitsOnPausedGoal(t *testing.T) {
	a := newAgentEnv(t)
	a.stopDaemonsAtEnd()
	none := startRun(t, a, a.environ())
	if code, last := none.wait(); code != 1 || last != "no goal: create one first (agentd goal create OBJECTIVE)" {
		t.Fatalf("agentd run with no goal exited %d with %q\n%s", code, last, none.stderr.String())
	}
	personGoal(t, a)
	if out, errOut, code := a.cli("goal", "pause", "--reason", "lunch", "--workspace", a.ws); code != 0 {
		t.Fatalf("agentd goal pause: %s%s", out, errOut)
	}
	p := startRun(t, a, a.environ())
	p.awaitLine("waiting: the goal is paused (lunch)")
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code, last := p.wait(); code != 6 || !strings.HasPrefix(last, "stopped: interrupted; the goal is paused (") {
		t.Fatalf("agentd run exited %d with %q, want 6 and the paused goal:\n%s\n%s", code, last, p.output(), p.stderr.String())
	}
	if strings.Contains(p.output(), "starting claude") {
		t.Errorf("agentd run started the agent on a paused goal:\n%s", p.output())
	}
}
