package goal

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// The verification command of a goal (docs/runtime.md §2.10): a shell
// command a person gives a goal, which agentd runs when the model marks
// the goal complete. The rules here are pure: who may set it, when it
// runs, what a run's result does to the goal. Running the process is the
// service's (service/check.go).

// MaxCheckChars bounds a check command, of a goal or a queued goal, in
// runes after trim (docs/runtime.md §2.9.1, §2.10).
const MaxCheckChars = 2000

// MaxCheckTailBytes bounds the output tail a check run keeps: the last
// bytes of its combined stdout and stderr (docs/runtime.md §2.10.2).
const MaxCheckTailBytes = 4096

// Check is a goal's verification command as it is stored and shown
// (docs/runtime.md §2.10): the command, whether a run is in progress, and
// the last run's result, nil before the first run.
type Check struct {
	Command string `json:"command"`
	// SetBy is the person who set the command (docs/runtime.md §2.10.4):
	// the OS user and host name of the machine whose agentd took the
	// setting; nil in a state written before it was recorded. Stored and
	// shown.
	SetBy *CheckSetter `json:"setBy,omitempty"`
	// Approved says whether the person at the machine of the agentd that
	// answers has approved the command, so that it may run there
	// (docs/runtime.md §2.10.4). That agentd fills it in for its clients
	// from its own approvals; never stored, nil in what the rules build
	// and in history events.
	Approved *bool `json:"approved,omitempty"`
	// SetOutsideAgentd: in a team folder, no history event records this
	// command with this SetBy, so the session was written to etcd other
	// than by agentd and SetBy cannot be trusted (docs/team.md). Filled in
	// with Approved, which it makes false; never stored.
	SetOutsideAgentd bool      `json:"setOutsideAgentd,omitempty"`
	Running          bool      `json:"running,omitempty"`
	LastRun          *CheckRun `json:"lastRun,omitempty"`
	// RunBy is the clock (Instant.Clock) of the agentd process running
	// the check while Running: in a team folder another daemon leaves the
	// mark alone while that process holds its lease (CheckLeft). Stored,
	// not shown to clients.
	RunBy string `json:"-"`
	// RunID names the run in progress while Running (StartCheck): only
	// the result of that run finishes it and may complete the goal
	// (FinishCheck, docs/runtime.md §2.10.5). Stored, not shown to clients.
	RunID string `json:"-"`
	// Process is what the service recorded of the running check's
	// process once it started it (CheckStarted), so that the next agentd
	// can stop what an ended one left running (docs/runtime.md §2.10.3).
	// Opaque here: the rules only keep it while the run lasts. Stored,
	// never shown.
	Process []byte `json:"-"`
}

// CheckRun is the result of one run of a check. ExitCode is the command's
// exit status; -1 when it did not exit by itself (killed at the time
// limit, or when the goal ended) or did not start, and OutputTail then ends
// with a line that says so. DurationMs is the time it ran, At when it
// ended. OutputTail is at most MaxCheckTailBytes of the end of its output,
// valid UTF-8. RunID names the run (StartCheck); "" in a state written
// before runs were named.
type CheckRun struct {
	ExitCode   int       `json:"exitCode"`
	DurationMs int64     `json:"durationMs"`
	At         time.Time `json:"at"`
	OutputTail string    `json:"outputTail"`
	RunID      string    `json:"runId,omitempty"`
}

// Passed says whether the run proves the goal done: exit code 0.
func (r CheckRun) Passed() bool { return r.ExitCode == 0 }

// Summary is the run in a few words: "`go test ./...` exited 1 after 2.1s".
func (r CheckRun) Summary(command string) string {
	took := FormatElapsed(r.DurationMs)
	if r.ExitCode < 0 {
		return fmt.Sprintf("`%s` did not finish (ran %s)", oneLine(command, 200), took)
	}
	return fmt.Sprintf("`%s` exited %d after %s", oneLine(command, 200), r.ExitCode, took)
}

func cloneCheck(c *Check) *Check {
	if c == nil {
		return nil
	}
	out := *c
	out.SetBy = clonePtr(c.SetBy)
	out.Approved = clonePtr(c.Approved)
	out.LastRun = clonePtr(c.LastRun)
	out.Process = slices.Clone(c.Process)
	return &out
}

// normalizeCheck trims a check command, of a goal or a queued goal
// (docs/runtime.md §2.9.1, §2.10); nil is no check (""). A blank command, a
// longer one than MaxCheckChars, or one with a line break or another
// control character (TAB is fine) is args.invalid.
func normalizeCheck(check *string) (string, error) {
	if check == nil {
		return "", nil
	}
	trimmed := strings.TrimSpace(*check)
	switch {
	case trimmed == "":
		return "", errorf(CodeArgsInvalid, "the check is blank; give the command that proves the goal is done, or leave check out")
	case utf8.RuneCountInString(trimmed) > MaxCheckChars:
		return "", errorf(CodeArgsInvalid, fmt.Sprintf("the check is %d characters long; at most %d are allowed (put a longer script in a file and run that)", utf8.RuneCountInString(trimmed), MaxCheckChars))
	}
	if i := strings.IndexFunc(trimmed, func(r rune) bool { return isRefusedControl(r) || r == '\n' || r == '\r' }); i >= 0 {
		r, _ := utf8.DecodeRuneInString(trimmed[i:])
		return "", errorf(CodeArgsInvalid, fmt.Sprintf("the check has the control character %U; write it on one line", r))
	}
	return trimmed, nil
}

// SetCheck gives the current goal the check command, set by the person
// by, or removes its check when command is nil, as the user
// (docs/runtime.md §2.10). Setting the command it already has, by the same
// person, is a no-op; the same command by another person only records who
// set it; a new command forgets the last run of the old one. Refusals: args.invalid (normalizeCheck: blank, too
// long, not one line), goal.not_found, goal.status_invalid (the
// goal is complete), goal.check_running (a run of the check is in
// progress: wait for it).
func (s *State) SetCheck(command *string, by CheckSetter, now Instant) ([]Change, error) {
	cmd, err := normalizeCheck(command)
	if err != nil {
		return nil, err
	}
	g := s.Goal
	switch {
	case g == nil:
		return nil, errorf(CodeNotFound, "there is no goal to give a check")
	case g.Status == Complete:
		return nil, errorf(CodeStatusInvalid, "the goal is complete; a check only verifies a goal that is not")
	case g.Check != nil && g.Check.Running:
		return nil, errorf(CodeCheckRunning, "the goal's check is running; wait for its result before changing it")
	case g.Check == nil && cmd == "", g.Check != nil && g.Check.Command == cmd && g.Check.SetBy != nil && *g.Check.SetBy == by:
		return nil, nil
	}
	reason := "check removed by the user"
	switch {
	case cmd == "":
		g.Check = nil
	case g.Check != nil && g.Check.Command == cmd:
		g.Check.SetBy = &by
		reason = "check set by " + by.String() + ": " + oneLine(cmd, 200)
	default:
		g.Check = &Check{Command: cmd, SetBy: &by}
		reason = "check set by " + by.String() + ": " + oneLine(cmd, 200)
	}
	g.settle(now)
	g.UpdatedAt = now.Wall
	g.LastActor = User
	return []Change{{Kind: ChangeCheck, Status: g.Status, Reason: reason, Actor: User, Goal: g.snapshot(now)}}, nil
}

// CheckStart is a run of a check that may begin: the command, the goal it
// verifies and the run's id.
type CheckStart struct {
	GoalID  string
	Command string
	RunID   string
}

// StartCheck marks the current goal's check running as the run runID (an
// id the caller makes, unique to the run), for a run on demand (actor user)
// or before completing the goal (actor model), and returns what to run.
// Refusals: goal.not_found, goal.no_check (the goal has no check),
// goal.check_running (one run at a time per goal; docs/runtime.md
// §2.10.1).
func (s *State) StartCheck(actor Actor, runID string, now Instant) (CheckStart, []Change, error) {
	g := s.Goal
	switch {
	case g == nil:
		return CheckStart{}, nil, errorf(CodeNotFound, "there is no goal whose check could run")
	case g.Check == nil:
		return CheckStart{}, nil, errorf(CodeNoCheck, "the goal has no check; a person sets one with agentd goal set-check COMMAND")
	case g.Check.Running:
		return CheckStart{}, nil, errorf(CodeCheckRunning, "the goal's check is already running; wait for its result")
	}
	g.settle(now)
	g.Check.Running, g.Check.RunBy, g.Check.RunID = true, now.Clock, runID
	reason := "check started (run " + runID + "): " + oneLine(g.Check.Command, 200)
	ch := Change{Kind: ChangeCheck, Status: g.Status, Reason: reason, Actor: actor, Goal: g.snapshot(now)}
	return CheckStart{GoalID: g.ID, Command: g.Check.Command, RunID: runID}, []Change{ch}, nil
}

// FinishCheck records run, the result of the run start that StartCheck
// began, and clears running (actor runtime). It returns false when that
// run is not the one the goal is waiting on (docs/runtime.md §2.10.5):
// the goal is no longer current (replaced or cancelled: nothing changes),
// or it is but its check is no longer running as that run (its running
// mark was cleared as left by a process that had lost its lease, and
// maybe another run started): then the run is recorded as a change of
// kind check that says it no longer counts, and the goal does not change.
func (s *State) FinishCheck(start CheckStart, run CheckRun, now Instant) ([]Change, bool) {
	g := s.Goal
	run.RunID = start.RunID
	if g == nil || g.ID != start.GoalID || g.Check == nil {
		return nil, false
	}
	if !g.Check.Running || g.Check.RunID != start.RunID {
		reason := fmt.Sprintf("check run %s no longer counts, so its result changes nothing: %s", start.RunID, run.Summary(start.Command))
		return []Change{{Kind: ChangeCheck, Status: g.Status, Reason: reason, Actor: Runtime, Goal: g.snapshot(now)}}, false
	}
	g.settle(now)
	g.Check.Running, g.Check.RunBy, g.Check.RunID, g.Check.Process = false, "", "", nil
	g.Check.LastRun = &run
	word := "check failed: "
	if run.Passed() {
		word = "check passed: "
	}
	ch := Change{Kind: ChangeCheck, Status: g.Status, Reason: word + run.Summary(g.Check.Command), Actor: Runtime, Goal: g.snapshot(now)}
	return []Change{ch}, true
}

// CheckStarted records p, what the service knows of the process of the
// run start that StartCheck began (Check.Process); false, and nothing
// changes, when that run is not the one the goal's check is running
// (FinishCheck's rule).
func (s *State) CheckStarted(start CheckStart, p []byte) bool {
	g := s.Goal
	if g == nil || g.ID != start.GoalID || g.Check == nil || !g.Check.Running || g.Check.RunID != start.RunID {
		return false
	}
	g.Check.Process = slices.Clone(p)
	return true
}

// CompletionCheck says whether c, a goal tool call, is an UpdateGoal
// complete that the goal's check must pass first (docs/runtime.md §2.10.1):
// a call that is not refused or stale, on a turn that has not ended, of an
// active goal that has a check and no required todo item open
// (docs/runtime.md §2.12: a call with one is refused without running the
// check). Any other call runs at once with CallTool.
func (s *State) CompletionCheck(c ToolCall) bool {
	in, ok := c.Input.(UpdateGoalInput)
	if !ok || Status(in.Status) != Complete || s.Goal == nil || s.Goal.Check == nil || s.Goal.Status != Active || s.CheckTurn(c.TurnID) != nil || len(s.RequiredOpen(c.Todos)) > 0 {
		return false
	}
	_, stale := s.stale(c.TurnID)
	return !stale
}

// CompleteAfterCheck answers c, the UpdateGoal complete that started the
// check run start with StartCheck, now that the check ran as run (and was
// recorded with FinishCheck when recorded is true). A run that passed
// completes the goal as UpdateGoal does, the check's summary in the reason
// (so the history keeps the command, exit code, duration and output tail
// in the goal it records); a run that failed is refused with
// goal.check_failed and the output tail, and the goal stays active. When
// the goal changed while the check ran, or the run stopped counting
// (FinishCheck), nothing changes: goal.stale_call, as for a stale call.
func (s *State) CompleteAfterCheck(c ToolCall, start CheckStart, run CheckRun, recorded bool, now Instant) (ToolResult, []Change) {
	res := ToolResult{Description: c.Description.Description}
	g := s.Goal
	if !recorded || g == nil || g.ID != start.GoalID {
		res.Output = "Goal not updated: the goal changed while its check ran (it was cancelled, replaced, or its check changed). Nothing was changed. Call GetGoal to see where things stand before using another goal tool."
		if g != nil && g.ID == start.GoalID {
			res.Output = "Goal not updated: this run of the goal's check stopped counting while it ran (agentd took it for left by a process that had lost touch, and the check may have been run again since), so its result changes nothing. Call GetGoal to see where things stand; if the goal is still active and its check is not running, call UpdateGoal with complete again."
		}
		res.ErrorCode = CodeStaleCall
		return res, nil
	}
	if !run.Passed() {
		output := fmt.Sprintf("Output (the last %d bytes at most):\n%s", MaxCheckTailBytes, run.OutputTail)
		if run.OutputTail == "" {
			output = "The check printed nothing: run it yourself to see why it fails."
		}
		return failed(res, CodeCheckFailed, fmt.Sprintf("Goal not complete: its check %s, so the goal stays active. Keep working: fix what the output shows, then call UpdateGoal with complete again.\n\n%s", run.Summary(g.Check.Command), output)), nil
	}
	res, cs := s.updateTool(res, UpdateGoalInput{Status: string(Complete)}, c, now, true)
	for i := range cs {
		if cs[i].Kind == ChangeComplete {
			cs[i].Reason = reasonComplete + "; check passed: " + run.Summary(g.Check.Command)
			g.TerminalReason = cs[i].Reason
			cs[i].Goal = g.snapshot(now)
		}
	}
	if !res.IsError {
		res.Output = "Check passed: " + run.Summary(g.Check.Command) + ". " + res.Output
	}
	return res, cs
}

// RecoverCheck clears a running mark that no process will finish: the
// process that ran the check ended before it did (docs/runtime.md §2.10.3).
// It returns nil when the goal's check is not marked running. The caller
// kills the check's process (RunningCheckProcess) first.
func (s *State) RecoverCheck(now Instant) []Change {
	g := s.Goal
	if g == nil || g.Check == nil || !g.Check.Running {
		return nil
	}
	g.settle(now)
	g.Check.Running, g.Check.RunBy, g.Check.RunID, g.Check.Process = false, "", "", nil
	return []Change{{Kind: ChangeCheck, Status: g.Status, Reason: "check stopped: the agentd process that ran it ended before it did", Actor: Runtime, Goal: g.snapshot(now)}}
}

// RunningCheckProcess is what was recorded of the process of the current
// goal's running check (CheckStarted) and the goal's id; ok is false when
// the check is not running or nothing was recorded.
func (s *State) RunningCheckProcess() (p []byte, goalID string, ok bool) {
	if !s.CheckRunning() || s.Goal.Check.Process == nil {
		return nil, "", false
	}
	return slices.Clone(s.Goal.Check.Process), s.Goal.ID, true
}

// CheckLeft reports whether the current goal's check is marked running by
// a process that will not finish it (docs/runtime.md §2.10.3): never
// while this process runs the session's check (running), whoever the mark
// names (in a team folder anyone with etcd access writes the mark, and one
// naming a gone daemon would have this process kill its own run); else
// this process (clock), or another process unless alive says it still
// holds its lease (a team folder, docs/team.md; alive nil: no other
// process runs).
func (s *State) CheckLeft(clock string, running bool, alive func(owner string) bool) bool {
	if !s.CheckRunning() || running {
		return false
	}
	by := s.Goal.Check.RunBy
	return by == "" || by == clock || alive == nil || !alive(by)
}

// CheckRunning says whether the current goal's check is marked running.
func (s *State) CheckRunning() bool {
	return s.Goal != nil && s.Goal.Check != nil && s.Goal.Check.Running
}
