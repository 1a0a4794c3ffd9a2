package service

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/workspace"
)

// Goal checks (docs/runtime.md §2.10): the service runs a goal's check
// command as a child process, outside every transaction and outside the
// session's lock, and records the result in a second transaction.

// DefaultCheckTimeout is how long a check may run before it is killed,
// unless AGENTD_CHECK_TIMEOUT says otherwise (docs/runtime.md §2.10.2).
const DefaultCheckTimeout = 10 * time.Minute

// CheckTimeoutEnv names the environment variable that sets the time
// limit of checks for the process: a Go duration such as 30s or 20m,
// from 1s to 24h.
const CheckTimeoutEnv = "AGENTD_CHECK_TIMEOUT"

// readCheckTimeout reads CheckTimeoutEnv; a value that is not a duration in
// range is logged and the default is used.
func (s *Service) readCheckTimeout() time.Duration {
	v := os.Getenv(CheckTimeoutEnv)
	if v == "" {
		return DefaultCheckTimeout
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Second || d > 24*time.Hour {
		s.log.Warn("ignoring "+CheckTimeoutEnv+": not a duration from 1s to 24h; checks get the default", "value", v, "default", DefaultCheckTimeout)
		return DefaultCheckTimeout
	}
	return d
}

// Why a check that did not exit by itself was stopped: the cause of its
// context, and the last line of its output tail.
var (
	errGoalEnded     = errors.New("the goal was cancelled or replaced")
	errStopping      = errors.New("agentd is stopping")
	errCallCancelled = errors.New("the request that ran it was cancelled")
)

// newRunID names a run of a check (goal.State.StartCheck): 10 random
// base32 characters (50 bits), made before the transaction that marks the
// run, so that every attempt of that transaction marks the same run.
func newRunID() string { return rand.Text()[:10] }

// checkKey names one goal's check in the service's table of runs.
type checkKey struct{ root, session, goalID string }

// marks are the variables a check of key gets in its environment
// (docs/runtime.md §2.10.2), which the next agentd reads to tell a check
// it may kill, left by an agentd that ended, from any other process
// (killLeftCheck): all three, so that a record written into one session
// names no check of another session or folder.
func (k checkKey) marks() []string {
	return []string{"AGENTD_GOAL_ID=" + k.goalID, "AGENTD_SESSION=" + k.session, "AGENTD_WORKSPACE=" + k.root}
}

// checks are the check runs of one service.
type checks struct {
	mu      sync.Mutex
	closed  bool
	running map[checkKey]context.CancelCauseFunc
	claimed map[string]chan struct{} // run ids a call of this process runs or is about to (claim)
	wg      sync.WaitGroup           // one per run, from start to its recording
	timeout time.Duration
}

// begin registers a run of key; false once the service is closing.
func (c *checks) begin(key checkKey, cancel context.CancelCauseFunc) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.running[key] = cancel
	c.wg.Add(1)
	return true
}

func (c *checks) end(key checkKey) {
	c.mu.Lock()
	delete(c.running, key)
	c.mu.Unlock()
	c.wg.Done()
}

// runs says whether a run of session of root is registered.
func (c *checks) runs(root, session string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.running {
		if k.root == root && k.session == session {
			return true
		}
	}
	return false
}

// stopEnded kills the check of a session whose goal is no longer the one
// it verifies (cancelled or replaced): called on every committed goal
// change, under the session's lock, so it only cancels contexts.
func (s *Service) stopEnded(n workspace.Notice) {
	if !n.Change.Goal {
		return
	}
	cur := ""
	if g := n.Session.Goal.Goal; g != nil {
		cur = g.ID
	}
	s.checks.mu.Lock()
	defer s.checks.mu.Unlock()
	for k, cancel := range s.checks.running {
		if k.root == n.Workspace.Root() && k.session == n.Session.Name && k.goalID != cur {
			cancel(errGoalEnded)
		}
	}
}

// closeChecks kills every running check and waits until each is recorded.
func (s *Service) closeChecks() {
	s.checks.mu.Lock()
	s.checks.closed = true
	for _, cancel := range s.checks.running {
		cancel(errStopping)
	}
	s.checks.mu.Unlock()
	s.checks.wg.Wait()
}

// RunCheck runs the check of the current goal of session in ws on demand,
// as the user (agentd.goal.runCheck, docs/runtime.md §2.10): a check the
// person at this machine has not approved is refused with
// goal.check_unapproved (§2.10.4); else it marks the check running, calls started once that is committed, runs it, and
// records the run; the goal's status does not change. The run is killed
// when ctx ends. requestID, when not "", identifies the start: sent again
// once the session applied it, it starts nothing and answers the run the
// first copy started (checkRunAgain). Errors: those of goal.State.StartCheck (goal.not_found,
// goal.no_check, goal.check_running), goal.check_unapproved and those of
// workspace.Workspace.Update; a
// run whose goal was cancelled or replaced meanwhile is returned but not
// recorded (the returned session is then the one of the start).
func (s *Service) RunCheck(ctx context.Context, ws *workspace.Workspace, session, requestID string, started func()) (goal.CheckRun, workspace.Session, error) {
	return s.runCheck(ctx, ws, session, goal.User, requestID, started)
}

// runCheck is RunCheck for actor: the user, or the runtime polling the
// check a goal waits on (docs/runtime.md §2.13).
func (s *Service) runCheck(ctx context.Context, ws *workspace.Workspace, session string, actor goal.Actor, requestID string, started func()) (goal.CheckRun, workspace.Session, error) {
	var start goal.CheckStart
	runID := newRunID()
	if requestID != "" {
		// A copy of the request sent again finds the run claimed while
		// this one is under way here, and waits for its result.
		release, _ := s.checks.claim(runID)
		defer release()
	}
	st, err := s.updateGoalOf(ws, session, workspace.Request{ID: requestID, RunID: runID}, func(st *workspace.Session) (cs []goal.Change, err error) {
		g := &st.Goal
		if g.Goal != nil && g.Goal.Check != nil {
			if ok, outside := s.checkConsented(ws, session, g.Goal.Check); !ok {
				c := *g.Goal.Check
				c.SetOutsideAgentd = outside
				return nil, goal.UnapprovedError(&c)
			}
		}
		start, cs, err = g.StartCheck(actor, runID, s.Now())
		return cs, err
	})
	if err != nil {
		return goal.CheckRun{}, workspace.Session{}, err
	}
	started()
	if r, ok := st.Request(requestID); requestID != "" && ok && r.RunID != runID {
		return s.checkRunAgain(ctx, ws, session, r)
	}
	return s.runStarted(ctx, ws, session, start, st)
}

// runStarted runs the check run start, which st marks running, and
// records its result; it returns the run and the session after it (st
// when the record failed, with the error).
func (s *Service) runStarted(ctx context.Context, ws *workspace.Workspace, session string, start goal.CheckStart, st workspace.Session) (goal.CheckRun, workspace.Session, error) {
	key := checkKey{ws.Root(), session, start.GoalID}
	run, registered := s.execCheck(ctx, ws, key, start)
	if registered {
		defer s.checks.end(key)
	}
	run.RunID = start.RunID
	after, err := s.UpdateGoal(ws, session, func(g *goal.State) ([]goal.Change, error) {
		cs, _ := g.FinishCheck(start, run, s.Now())
		return cs, nil
	})
	if err != nil {
		return run, st, err
	}
	return run, after, nil
}

// completeWithCheck runs an UpdateGoal complete of a goal that has a
// check (goal.State.CompletionCheck). A check the person at this machine
// has not approved is refused with goal.check_unapproved, and nothing runs
// (docs/runtime.md §2.10.4). Else the check is marked running in one
// transaction, started is called, the check runs, and its result and the
// call's answer (goal.State.CompleteAfterCheck) are stored in a second
// transaction. A check already running refuses the call with
// goal.check_running.
func (s *Service) completeWithCheck(ctx context.Context, ws *workspace.Workspace, session string, tc goal.ToolCall, started func()) (goal.ToolResult, error) {
	var start goal.CheckStart
	var res goal.ToolResult
	var needed bool
	runID := newRunID()
	_, err := s.updateGoalOf(ws, session, workspace.Request{}, func(st *workspace.Session) ([]goal.Change, error) {
		g := &st.Goal
		tc.Todos = st.Todos // a goal that requires its items completes only once they are done (docs/runtime.md §2.12)
		if needed = g.CompletionCheck(tc); !needed {
			var cs []goal.Change
			res, cs = g.CallTool(tc, s.Now())
			return cs, nil
		}
		if ok, outside := s.checkConsented(ws, session, g.Goal.Check); !ok {
			needed, res = false, g.UnapprovedCompletion(tc, outside)
			return nil, nil
		}
		var cs []goal.Change
		var err error
		start, cs, err = g.StartCheck(goal.Model, runID, s.Now())
		if err != nil {
			needed = false
			code := goal.CodeCheckRunning
			if e := (*goal.Error)(nil); errors.As(err, &e) {
				code = e.Code
			}
			res = goal.ToolResult{Description: tc.Description.Description, IsError: true, ErrorCode: code,
				Output: "Goal not complete: " + err.Error() + ". Keep working, and call UpdateGoal with complete again once it has finished."}
			return nil, nil
		}
		return cs, nil
	})
	if err != nil || !needed {
		return res, err
	}
	started()
	key := checkKey{ws.Root(), session, start.GoalID}
	run, registered := s.execCheck(ctx, ws, key, start)
	if registered {
		defer s.checks.end(key)
	}
	_, err = s.updateGoalOf(ws, session, workspace.Request{}, func(st *workspace.Session) ([]goal.Change, error) {
		g, now := &st.Goal, s.Now()
		tc.Todos = st.Todos // the list as it is now: the model may have reopened an item while the check ran
		cs, recorded := g.FinishCheck(start, run, now)
		var more []goal.Change
		res, more = g.CompleteAfterCheck(tc, start, run, recorded, now)
		return append(cs, more...), nil
	})
	return res, err
}

// execCheck runs start.Command once (docs/runtime.md §2.10.2): under the
// system's shell (checkShell: `sh -c`, or cmd.exe on Windows) in the
// workspace folder, as this process's user, in a group of its own
// (checkGroup: a process group, or a job object on Windows), with this process's environment but its etcd settings
// (checkEnviron) and with AGENTD_GOAL_ID, AGENTD_SESSION and
// AGENTD_WORKSPACE, stdin empty, stdout and stderr together, the configured
// secrets redacted from what it keeps (tailBuffer). It is killed, with
// its whole group, at the time limit, when ctx ends, when its goal ends or
// when the service closes; whatever is left of the group when the command exits is killed too. Once it has
// started, its group is recorded with the running mark (a quiet write,
// goal.State.CheckStarted), for the next agentd process to kill should
// this one end first (recoverWorkspace, recoverChecks). registered is false
// when the service was already closing: then nothing ran.
func (s *Service) execCheck(ctx context.Context, ws *workspace.Workspace, key checkKey, start goal.CheckStart) (goal.CheckRun, bool) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	began := time.Now()
	result := func(code int, tail *tailBuffer, note string) goal.CheckRun {
		return goal.CheckRun{ExitCode: code, DurationMs: time.Since(began).Milliseconds(), At: s.wall(), OutputTail: tail.text(note)}
	}
	tail := newTailBuffer(s.secrets())
	if !s.checks.begin(key, cancel) {
		return result(-1, tail, "agentd: the check did not run: "+errStopping.Error()), false
	}
	timeout := s.checks.timeout
	cmd := checkShell(start.Command)
	pr, pw, err := os.Pipe()
	if err != nil {
		return result(-1, tail, "agentd: the check did not start: "+err.Error()), true
	}
	cmd.Dir = key.root
	cmd.Env = append(checkEnviron(), key.marks()...)
	cmd.Stdout, cmd.Stderr = pw, pw
	// The command starts held (checkGroup) until its group is recorded: a
	// process that dies before that lets it never run.
	group, err := startCheck(cmd)
	pw.Close()
	if err != nil {
		pr.Close()
		if _, serr := os.Stat(key.root); serr != nil {
			err = fmt.Errorf("the workspace folder is gone: %w", serr) // exec blames the shell for a failed chdir
		}
		return result(-1, tail, "agentd: the check did not start: "+err.Error()), true
	}
	defer group.Close()
	read := make(chan struct{})
	go func() {
		defer close(read)
		io.Copy(tail, pr)
	}()
	s.recordGroup(ws, key, start, group.Pid())
	if err := group.Run(); err != nil {
		cancel(fmt.Errorf("it could not be let run: %w", err))
	}
	stopped := waitCheck(ctx, cmd, group, timeout)
	// A process that left the group may still hold the pipe: stop reading
	// after a moment rather than wait for it.
	select {
	case <-read:
	case <-time.After(2 * time.Second):
		pr.Close()
		<-read
	}
	pr.Close()
	if stopped != nil {
		return result(-1, tail, "agentd: the check was killed: "+stopped.Error()), true
	}
	code := cmd.ProcessState.ExitCode()
	if code < 0 {
		return result(-1, tail, "agentd: the check ended by a signal: "+cmd.ProcessState.String()), true
	}
	return result(code, tail, ""), true
}

// waitCheck waits until the check cmd, the leader of group, exits, for at most timeout and while ctx lasts, and then kills the
// whole group: the command itself when it was stopped, and whatever it
// left running in the background when it exited. stopped says why it was
// stopped; nil when it exited by itself.
func waitCheck(ctx context.Context, cmd *exec.Cmd, group checkGroup, timeout time.Duration) (stopped error) {
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-exited:
	case <-timer.C:
		stopped = fmt.Errorf("it ran out of its time limit of %v", timeout)
	case <-ctx.Done():
		stopped = context.Cause(ctx)
		if errors.Is(stopped, context.Canceled) || errors.Is(stopped, context.DeadlineExceeded) {
			stopped = errCallCancelled
		}
	}
	group.Kill()
	if stopped != nil {
		<-exited
	}
	return stopped
}

// recordGroup records the process group pgid of the check run start of
// key with its running mark (a quiet write, goal.State.CheckStarted; not
// when the mark is another run's by then), where this system says enough
// to find it again (recordedProcess), for the next agentd process to kill
// should this one end first.
func (s *Service) recordGroup(ws *workspace.Workspace, key checkKey, start goal.CheckStart, pgid int) {
	proc, ok := recordedProcess(pgid)
	if !ok {
		return
	}
	_, err := ws.Update(key.session, func(st *workspace.Session) (workspace.Change, error) {
		if !st.Goal.CheckStarted(start, proc) {
			return workspace.Change{}, nil
		}
		return workspace.Change{Kind: protocol.EventGoalCheckProcess, Quiet: true}, nil
	})
	if err != nil {
		s.log.Warn("recording the check's process group failed; should agentd be killed during the run, the next one cannot stop it", "workspace", key.root, "session", key.session, "pgid", pgid, "err", err)
	}
}

// checkEnviron is the environment a check gets of this process's
// (docs/runtime.md §2.10.2): all of it but the etcd settings, every
// variable whose name begins with workspace.TeamEnvPrefix
// (AGENTD_ETCD_PASSWORD, AGENTD_ETCD_USER, the certificate and key files,
// the endpoints).
func checkEnviron() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, workspace.TeamEnvPrefix) })
}

// redacted replaces a secret in a check's output tail.
const redacted = "[redacted]"

// minSecretLine is the shortest line of a client key that is redacted on
// its own, so that a part of the key printed alone is hidden too.
const minSecretLine = 16

// teamSecrets returns what a check's stored output never shows
// (docs/runtime.md §2.10.2): this machine's etcd password, and the
// content of its client key file, whole and each of its lines of at least
// minSecretLine characters but the PEM's BEGIN and END lines; the key is
// read at each call (a key that cannot be read is logged and left out).
func teamSecrets(t workspace.TeamOptions, log *slog.Logger) func() []string {
	return func() []string {
		var out []string
		if t.Password != "" {
			out = append(out, t.Password)
		}
		if t.Key == "" {
			return out
		}
		data, err := os.ReadFile(t.Key)
		if err != nil {
			log.Warn("cannot read the etcd client key to hide it from check output", "key", t.Key, "err", err)
			return out
		}
		if key := strings.TrimSpace(string(data)); key != "" {
			out = append(out, key)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if line = strings.TrimSpace(line); len(line) >= minSecretLine && !strings.HasPrefix(line, "-----") {
				out = append(out, line)
			}
		}
		return out
	}
}

// tailBuffer keeps the last bytes written to it: at most
// 2×(goal.MaxCheckTailBytes+margin) in memory, however much a check
// prints, where margin is the length of the longest secret, so that a
// secret that ends inside the stored tail is whole in memory and is
// redacted, however the output was cut.
type tailBuffer struct {
	mu      sync.Mutex
	buf     []byte
	total   int64
	secrets []string
	margin  int
}

// newTailBuffer is a tailBuffer that redacts secrets.
func newTailBuffer(secrets []string) *tailBuffer {
	t := &tailBuffer{}
	for _, sec := range secrets {
		if sec != "" {
			t.secrets = append(t.secrets, sec)
			t.margin = max(t.margin, len(sec))
		}
	}
	return t
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(len(p))
	keep := goal.MaxCheckTailBytes + t.margin
	if len(p) >= keep {
		t.buf = append(t.buf[:0], p[len(p)-keep:]...)
		return len(p), nil
	}
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*keep {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-keep:]...)
	}
	return len(p), nil
}

// redact is out with every secret replaced by redacted. When the output
// was cut in memory (cut), what it begins with may be the end of a secret
// whose start was dropped: that part goes too.
func redact(out []byte, secrets []string, cut bool) []byte {
	if len(secrets) == 0 {
		return out
	}
	if cut {
		drop := 0
		for _, sec := range secrets {
			for k := len(sec) - 1; k > drop; k-- {
				if bytes.HasPrefix(out, []byte(sec[len(sec)-k:])) {
					drop = k
					break
				}
			}
		}
		out = out[drop:]
	}
	for _, sec := range secrets {
		out = bytes.ReplaceAll(out, []byte(sec), []byte(redacted))
	}
	return out
}

// text is the stored tail: the end of the output, its secrets redacted,
// and then note (when not ""), at most goal.MaxCheckTailBytes in all,
// valid UTF-8, starting at a character boundary.
func (t *tailBuffer) text(note string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if note != "" {
		note += "\n"
	}
	room := goal.MaxCheckTailBytes - len(note)
	out := redact(t.buf, t.secrets, t.total > int64(len(t.buf)))
	if len(out) > room {
		out = out[len(out)-room:]
		for len(out) > 0 && !utf8.RuneStart(out[0]) {
			out = out[1:]
		}
	}
	s := strings.ToValidUTF8(string(out), "\uFFFD")
	for len(s)+len(note) > goal.MaxCheckTailBytes { // a replacement grew it
		_, n := utf8.DecodeRuneInString(s)
		s = s[n:]
	}
	if note != "" && s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
		if len(s)+len(note) > goal.MaxCheckTailBytes {
			_, n := utf8.DecodeRuneInString(s)
			s = s[n:]
		}
	}
	return s + note
}
