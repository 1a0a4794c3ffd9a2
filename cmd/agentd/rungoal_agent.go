package main

// The agent processes of `agentd run` (rungoal.go): their command lines,
// the record of the agent's session kept across runs, and one process's
// life.

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/agentd/agentd/commands"
	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/setup"
	"github.com/agentd/agentd/workspace/wsfolder"
)

// headless is how `agentd run` starts an agent: the program, found on the
// PATH, and its arguments for a new session (id is one agentd run made)
// and for the next process of that session (id is the session's), with
// the person's flags (extra, from the command line) in their place. The
// prompt goes on the agent's stdin, never on its command line: nothing
// from the goal, the repository or the model chooses the program or its
// flags (docs/security.md, "agentd run starts only the agent you named").
type headless struct {
	program       string
	start, resume func(id string, extra []string) []string
	// namesSession, when set, finds the session id in the agent's output
	// of a new session: the agent names its sessions itself, and start
	// gets no id.
	namesSession *regexp.Regexp
}

// agentdTools is the one permission `agentd run` gives Claude Code: agentd's
// own MCP tools, without which a headless run cannot touch the goal or the
// list. Every other tool is as the person's settings allow.
const agentdTools = "mcp__agentd"

var headlessAgents = map[string]headless{
	"claude": {program: "claude",
		start: func(id string, extra []string) []string {
			return append([]string{"-p", "--session-id", id, "--allowedTools", agentdTools}, extra...)
		},
		resume: func(id string, extra []string) []string {
			return append([]string{"-p", "--resume", id, "--allowedTools", agentdTools}, extra...)
		}},
	"gemini": {program: "gemini",
		start:  func(id string, extra []string) []string { return append([]string{"--session-id", id}, extra...) },
		resume: func(id string, extra []string) []string { return append([]string{"--resume", id}, extra...) }},
	// Codex names its sessions itself, in the header it prints
	// ("session id: ID"): the next process resumes that one.
	"codex": {program: "codex",
		start: func(_ string, extra []string) []string { return append(append([]string{"exec"}, extra...), "-") },
		resume: func(id string, extra []string) []string {
			return append(append([]string{"exec", "resume"}, extra...), id, "-")
		},
		namesSession: regexp.MustCompile(`(?m)^session id: (\S+)$`)},
}

// runRecord is what `agentd run` keeps of its agent between processes and
// runs, in a file under the state directory per workspace folder: the
// agent, the goal and the agent's session; Live is true while a process
// runs, so a record still live when a run starts is a process that was
// killed with its turn open, whose session is not resumed (its next
// prompt would end that turn as an interruption, which pauses the goal:
// docs/hooks.md).
type runRecord struct {
	Agent     string `json:"agent"`
	GoalID    string `json:"goalId"`
	SessionID string `json:"sessionId"`
	Live      bool   `json:"live"`
}

// runFile is the file of folder's run with the suffix ext.
func runFile(stateDir, folder, ext string) string {
	sum := sha256.Sum256([]byte(folder))
	return filepath.Join(stateDir, "run", hex.EncodeToString(sum[:8])+ext)
}

// loadRunRecord reads folder's record; a missing or unreadable one is
// none, and so is one whose session id is not a UUID as newSessionID
// makes: the id goes on the agent's command line, and the file is one an
// agent's shell can write, so "--dangerously-skip-permissions" there must
// not become a flag (docs/security.md, "agentd run starts only the agent
// you named").
func loadRunRecord(stateDir, folder string) (runRecord, string) {
	path := runFile(stateDir, folder, ".json")
	var rec runRecord
	if b, err := os.ReadFile(path); err == nil {
		if json.Unmarshal(b, &rec) != nil || !sessionIDPattern.MatchString(rec.SessionID) {
			rec = runRecord{}
		}
	}
	return rec, path
}

// sessionIDPattern is the shape of newSessionID's ids.
var sessionIDPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// save writes the record whole (wsfolder.WriteFileAtomic).
func (d *driver) save() error {
	if err := os.MkdirAll(filepath.Dir(d.recPath), 0o700); err != nil {
		return err
	}
	return wsfolder.WriteJSONAtomic(d.recPath, d.rec, false)
}

// session is the agent session the next process of goal g uses: the
// recorded one when it is this agent's for this goal and its last process
// ended by itself, else a new one ("" when the agent names it). resume
// says which.
func (d *driver) session(g *protocol.GoalSnapshot) (id string, resume bool) {
	r := d.rec
	if r.Agent == d.name && r.GoalID == g.GoalID && r.SessionID != "" && !r.Live {
		return r.SessionID, true
	}
	if r.Live && r.Agent == d.name {
		d.view.line("the last " + d.name + " process of this folder did not end by itself: starting a new session")
	}
	if d.agent.namesSession != nil {
		return "", false
	}
	return newSessionID(), false
}

// sessionLine is the line that says a process starts: with the session
// id the agent takes for resuming it, none while the agent has not named
// it yet.
func sessionLine(name, id string, resume bool) string {
	switch {
	case resume:
		return fmt.Sprintf("resuming %s (session %s)", name, id)
	case id == "":
		return fmt.Sprintf("starting %s (a new session, which %s names)", name, name)
	}
	return fmt.Sprintf("starting %s (session %s)", name, id)
}

// maxHeader bounds what is read of a process's output for the session id
// its agent names (namesSession): it comes before any model output.
const maxHeader = 16 << 10

// namedSession is the session id the agent named in its output, which was
// appended to the log at path from offset: the first the agent's pattern
// finds there, when it is a UUID (the id goes on the next process's
// command line: loadRunRecord); else "".
func (d *driver) namedSession(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.NewSectionReader(f, offset, maxHeader))
	m := d.agent.namesSession.FindSubmatch(b)
	if m == nil || !sessionIDPattern.Match(m[1]) {
		return ""
	}
	return string(m[1])
}

// newSessionID is a random UUID (version 4), as the agents take.
func newSessionID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// runAgent runs one agent process on the active goal of st and watches
// the goal while it runs. stop: the run is over, with code and line.
func (d *driver) runAgent(ctx context.Context, st protocol.State) (code int, line string, stop bool) {
	g := st.Goal
	prompt, err := commands.ContinuationPrompt(g)
	if err != nil {
		return exitFailure, "stopped: " + err.Error(), true
	}
	d.noteGoal(g)
	id, resume := d.session(g)
	args := d.agent.start(id, d.extra)
	if resume {
		args = d.agent.resume(id, d.extra)
	}
	d.rec = runRecord{Agent: d.name, GoalID: g.GoalID, SessionID: id, Live: true}
	if err := d.save(); err != nil {
		return exitFailure, "stopped: recording the agent's session: " + err.Error(), true
	}
	d.view.line(sessionLine(d.name, id, resume))
	exitErr, err := d.runProcess(ctx, args, prompt, st)
	if err != nil {
		return exitFailure, "stopped: " + err.Error(), true
	}
	if ctx.Err() != nil {
		return 0, "", false // the loop reads the state and ends
	}
	if d.rec.SessionID == "" {
		d.noteNamedSession()
	}
	d.rec.Live = false
	if err := d.save(); err != nil {
		return exitFailure, "stopped: recording the agent's session: " + err.Error(), true
	}
	return d.afterProcess(ctx, g, exitErr)
}

// noteGoal records g as the goal the run works on, and names it when it
// follows another (the queue advanced, within a process or between two).
func (d *driver) noteGoal(g *protocol.GoalSnapshot) {
	if g == nil || g.GoalID == d.goalID {
		return
	}
	if d.goalID != "" {
		d.view.line("next goal: " + g.Objective)
	}
	d.goalID = g.GoalID
}

// runProcess starts the agent with args and prompt on its stdin, its
// output appended to the run's log, and shows the goal's progress until
// it exits. exitErr is how it exited (nil: status 0); err: it could not
// start.
func (d *driver) runProcess(ctx context.Context, args []string, prompt string, st protocol.State) (exitErr, err error) {
	logPath := runLogPath(d.e.stateDir, d.folder)
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		return nil, err
	}
	logf, err := openRunLog(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	if d.logStart, err = logf.Seek(0, io.SeekEnd); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, d.agent.program, args...)
	cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr = d.folder, strings.NewReader(prompt), logf, logf
	cmd.SysProcAttr = agentProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", d.agent.program, err)
	}
	d.view.note(fmt.Sprintf("%s's output: %s", d.name, logPath))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	lost := d.sess.Done()
	for {
		select {
		case err := <-done:
			return err, nil
		case <-lost: // state connects again (reconnect) while the agent runs on
		case <-d.changed:
		}
		if now, err := d.state(ctx); err == nil {
			d.noteGoal(now.Goal)
			d.view.show(d.name, now)
		}
		// No daemon: the process ends unwatched, and the loop stops after it.
		if lost = d.sess.Done(); d.lost() {
			lost = nil
		}
	}
}

// noteNamedSession records the session id the agent named in its output
// of the process that ended, and says it.
func (d *driver) noteNamedSession() {
	if d.agent.namesSession == nil {
		return
	}
	if id := d.namedSession(runLogPath(d.e.stateDir, d.folder), d.logStart); id != "" {
		d.rec.SessionID = id
		d.view.line(fmt.Sprintf("%s named its session %s", d.name, id))
	}
}

// afterProcess decides what follows an agent process that ended by itself
// while the goal g (as it was when it started) was active: the loop goes
// on (the goal is read again), or the run stops. A goal the runtime paused
// (the agent's own limit of continuations, a failed turn, docs/hooks.md)
// is resumed when the process counted a turn and the goal is not stalled;
// a goal still active after a process that counted no turn stops the run,
// since the next process would do the same.
func (d *driver) afterProcess(ctx context.Context, g *protocol.GoalSnapshot, exitErr error) (code int, line string, stop bool) {
	st, err := d.state(ctx)
	if err != nil {
		return exitFailure, "stopped: " + err.Error(), true
	}
	now := st.Goal
	if now == nil || now.GoalID != g.GoalID {
		return 0, "", false
	}
	progressed := now.TurnsUsed > g.TurnsUsed
	how := "exited"
	if exitErr != nil {
		how = fmt.Sprintf("exited (%v)", exitErr)
	}
	switch {
	case now.Status == "active" && !progressed:
		return commands.ExitActive, fmt.Sprintf("stopped: %s %s and counted no goal turn: its hooks may not run in this folder (agentd setup %s, docs/hooks.md); its output: %s",
			d.name, how, d.name, runLogPath(d.e.stateDir, d.folder)), true
	case now.Status == "paused" && now.LastActor == "runtime" && progressed && !now.Stalled:
		d.view.line(fmt.Sprintf("%s %s: %s; resuming the goal", d.name, how, now.TerminalReason))
		if _, err := d.execute(ctx, protocol.CmdGoalResume, &protocol.NoArgs{}); err != nil {
			return exitFailure, "stopped: resuming the goal: " + err.Error(), true
		}
	case now.Status == "active":
		d.view.line(fmt.Sprintf("%s %s with the goal still active: starting the next process", d.name, how))
	}
	return 0, "", false
}

// setupPlan is what `agentd setup` would change for one scope.
type setupPlan struct {
	opts    setup.Options
	changes []setup.Change
}

func planSetup(opts setup.Options) (setupPlan, error) {
	changes, err := setup.PlanAll(opts)
	return setupPlan{opts: opts, changes: changes}, err
}

// done says whether the scope has all of agentd's entries already.
func (p setupPlan) done() bool {
	for _, c := range p.changes {
		if c.Action != setup.Already {
			return false
		}
	}
	return len(p.changes) > 0
}
