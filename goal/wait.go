package goal

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentd/agentd/commands/protocol"
)

// Waiting (docs/runtime.md §2.13): a goal may wait, spending nothing,
// until a wake condition holds.

// Wait is what a waiting goal waits for, as the snapshot shows it
// (protocol.GoalWait).
type Wait struct {
	Since       time.Time     `json:"since"`
	By          Actor         `json:"by"`
	Note        string        `json:"note,omitempty"`
	Until       *time.Time    `json:"until,omitempty"`
	Paths       []string      `json:"paths,omitempty"`
	CheckPasses bool          `json:"checkPasses,omitempty"`
	WallClock   WallClockMode `json:"wallClock"`
}

// WaitConditions is what ends a wait as a model or a person asks for it
// (protocol.WaitConditions), before ParseWait.
type WaitConditions = protocol.WaitConditions

// WallClockMode says whether a wait counts against the wall-clock
// budget (docs/runtime.md §2.13).
type WallClockMode string

// The wall-clock modes of a wait. A model's wait always counts, so that
// no wait escapes a wall-clock budget; a person may stop the clock for a
// wait of their own.
const (
	WallClockCounts WallClockMode = "counts"
	WallClockStops  WallClockMode = "stops"
)

// Bounds of a wait.
const (
	MaxWaitAhead    = 7 * 24 * time.Hour // the latest until, from now
	MinWaitFor      = time.Second        // the shortest for
	MaxWaitPaths    = 16                 // paths of one wait
	MaxWaitNoteChar = MaxReasonChars     // runes of a note after trim
)

// WaitParams is a wait ready for State.Wait: its time resolved
// (ParseWait), its paths resolved by the caller against the workspace
// (relative, slash-separated), Marks what each path holds now (an opaque
// fingerprint the caller computes, so that a change made while no agentd
// ran still wakes the goal), and CheckApproved whether the goal's check may
// run on this machine (docs/runtime.md §2.10.4).
type WaitParams struct {
	Until         *time.Time
	Paths         []string
	Marks         map[string]string
	CheckPasses   bool
	CheckApproved bool
	Note          string
	WallClock     WallClockMode
}

// ParseWait checks c against the rules of docs/runtime.md §2.13 at now
// and resolves its time: until (RFC 3339, or "HH:MM", the next such time
// of day in now's location) or for (a Go duration, "30m"), not both,
// after now and at most MaxWaitAhead ahead; at most MaxWaitPaths paths;
// a note of at most MaxWaitNoteChar characters. mode "" is counts.
// Paths are returned as given, for the caller to resolve. Refusals:
// args.invalid naming the problem, among them a wait with no condition.
func ParseWait(c WaitConditions, mode string, now time.Time) (WaitParams, error) {
	p := WaitParams{Paths: c.Paths, CheckPasses: c.CheckPasses, Note: strings.TrimSpace(c.Note), WallClock: WallClockMode(mode)}
	if p.WallClock == "" {
		p.WallClock = WallClockCounts
	}
	if p.WallClock != WallClockCounts && p.WallClock != WallClockStops {
		return p, errorf(CodeArgsInvalid, fmt.Sprintf("wallClock %q is not valid; use counts or stops", mode))
	}
	if n := utf8.RuneCountInString(p.Note); n > MaxWaitNoteChar {
		return p, errorf(CodeArgsInvalid, fmt.Sprintf("the note is %d characters long; at most %d are allowed", n, MaxWaitNoteChar))
	}
	if len(c.Paths) > MaxWaitPaths {
		return p, errorf(CodeArgsInvalid, fmt.Sprintf("the wait names %d paths; at most %d are allowed", len(c.Paths), MaxWaitPaths))
	}
	until, err := waitUntil(c.Until, c.For, now)
	if err != nil {
		return p, err
	}
	p.Until = until
	if p.Until == nil && len(p.Paths) == 0 && !p.CheckPasses {
		return p, errorf(CodeArgsInvalid, "the wait has no wake condition; give until, for, paths or checkPasses")
	}
	return p, nil
}

// waitUntil resolves until or forText to a time after now, at most
// MaxWaitAhead ahead; nil when neither is given.
func waitUntil(until, forText string, now time.Time) (*time.Time, error) {
	until, forText = strings.TrimSpace(until), strings.TrimSpace(forText)
	var t time.Time
	switch {
	case until != "" && forText != "":
		return nil, errorf(CodeArgsInvalid, "give until or for, not both")
	case forText != "":
		d, err := time.ParseDuration(forText)
		if err != nil {
			return nil, errorf(CodeArgsInvalid, fmt.Sprintf("for %q is not a duration; write it as 90s, 30m or 2h30m", forText))
		}
		if d < MinWaitFor {
			return nil, errorf(CodeArgsInvalid, fmt.Sprintf("for %q is shorter than %v", forText, MinWaitFor))
		}
		t = now.Add(d)
	case until != "":
		var err error
		if t, err = parseUntil(until, now); err != nil {
			return nil, err
		}
		if !t.After(now) {
			return nil, errorf(CodeArgsInvalid, fmt.Sprintf("until %s is in the past; give a later time", t.Format(time.RFC3339)))
		}
	default:
		return nil, nil
	}
	if t.Sub(now) > MaxWaitAhead {
		return nil, errorf(CodeArgsInvalid, fmt.Sprintf("the wait would end at %s, more than %s ahead; wait at most %s", t.Format(time.RFC3339), FormatElapsed(MaxWaitAhead.Milliseconds()), FormatElapsed(MaxWaitAhead.Milliseconds())))
	}
	t = t.Round(time.Second)
	return &t, nil
}

// parseUntil reads an RFC 3339 time or a time of day "HH:MM" (the next
// such time after now, in now's location).
func parseUntil(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	hm, err := time.Parse("15:04", s)
	if err != nil {
		return time.Time{}, errorf(CodeArgsInvalid, fmt.Sprintf("until %q is not a time; write it as 2026-03-01T14:00:00Z (RFC 3339) or as a time of day, 14:00", s))
	}
	t := time.Date(now.Year(), now.Month(), now.Day(), hm.Hour(), hm.Minute(), 0, 0, now.Location())
	if !t.After(now) {
		t = t.AddDate(0, 0, 1)
	}
	return t, nil
}

// WaitFrom returns the statuses a goal may be put in the waiting state
// from: active, and, by a person, waiting (their wait replaces the one
// in place).
func WaitFrom() []Status { return []Status{Active, Waiting} }

// Wait puts the current goal in the waiting state for actor (user or
// model; docs/runtime.md §2.13). turnID is the model's turn, if any.
// A model's wait counts against the wall-clock budget; it may wait on the
// check only when the goal has one this machine's person approved. The
// same wait again by the model changes nothing (no change, no error).
// Refusals: goal.not_found; goal.status_invalid (a goal that is not
// active, or a model's wait of a waiting goal that differs); args.invalid
// for a model's wallClock stops; goal.no_check and goal.check_unapproved
// for checkPasses without an approved check; goal.not_resumable when a
// budget is spent.
func (s *State) Wait(p WaitParams, actor Actor, now Instant) ([]Change, error) {
	g := s.Goal
	if g == nil {
		return nil, errorf(CodeNotFound, "there is no goal to wait")
	}
	if err := g.waitRefusal(p, actor); err != nil {
		return nil, err
	}
	w := &Wait{Since: now.Wall, By: actor, Note: p.Note, Until: clonePtr(p.Until), Paths: slices.Clone(p.Paths), CheckPasses: p.CheckPasses, WallClock: p.WallClock}
	if g.Status == Waiting && actor == Model && g.Wait.sameConditions(w) {
		return nil, nil
	}
	if r := s.exceededNow(g, now); r.any() {
		return nil, errorf(CodeNotResumable, fmt.Sprintf("the goal cannot wait while its budget is spent (%s)", budgetReason(g.Limits, r)))
	}
	g.settle(now)
	g.Status, g.Wait, g.WaitMarks, g.Woke = Waiting, w, maps.Clone(p.Marks), ""
	if w.WallClock == WallClockStops {
		g.unstamp()
	} else if g.ActiveClock == "" {
		g.stamp(now)
	}
	g.TerminalReason = w.Describe()
	g.UpdatedAt, g.LastActor = now.Wall, actor
	return []Change{{Kind: ChangeWait, Status: Waiting, Reason: g.TerminalReason, Actor: actor, Goal: g.snapshot(now)}}, nil
}

// waitRefusal is the refusal of a wait p by actor, or nil.
func (g *Goal) waitRefusal(p WaitParams, actor Actor) error {
	switch {
	case !slices.Contains(WaitFrom(), g.Status):
		return errorf(CodeStatusInvalid, fmt.Sprintf("the goal is %s; only an active goal can wait", g.Status))
	case g.Status == Waiting && actor == Model && g.waitBy() != Model:
		return errorf(CodePersonSet, "the goal already waits as the user asked; only the user can change or end that wait")
	case actor == Model && p.WallClock != WallClockCounts:
		return errorf(CodeArgsInvalid, "a wait the agent asks for counts against the wall-clock budget; only the user may stop the clock while the goal waits")
	case p.CheckPasses && g.Check == nil:
		return errorf(CodeNoCheck, "the goal has no check to wait on; a person sets one with agentd goal set-check COMMAND")
	case p.CheckPasses && !p.CheckApproved:
		return errorf(CodeCheckUnapproved, "the goal's check is not approved on this machine, so it cannot run here; the user approves it with agentd goal check --approve")
	}
	return nil
}

// sameConditions says whether w and o wait for the same things.
func (w *Wait) sameConditions(o *Wait) bool {
	return w != nil && o != nil && w.Note == o.Note && w.CheckPasses == o.CheckPasses && w.WallClock == o.WallClock &&
		slices.Equal(w.Paths, o.Paths) && (w.Until == nil) == (o.Until == nil) && (w.Until == nil || w.Until.Equal(*o.Until))
}

// Describe says what w waits for, in one line: "waiting until
// 2026-03-01T14:00:00Z, or for a change of build/out.log".
func (w *Wait) Describe() string {
	var parts []string
	if w.Until != nil {
		parts = append(parts, "until "+w.Until.Format(time.RFC3339))
	}
	if len(w.Paths) > 0 {
		parts = append(parts, "for a change of "+strings.Join(w.Paths, ", "))
	}
	if w.CheckPasses {
		parts = append(parts, "for the check to pass")
	}
	text := "waiting " + strings.Join(parts, ", or ")
	if w.Note != "" {
		text += ": " + oneLine(w.Note, 200)
	}
	return text
}

// Wake makes the waiting goal active again because reason ("the time
// 14:00 arrived", "build/out.log changed"), actor runtime
// (docs/runtime.md §2.13): a wake change whose reason names what woke
// it, which the next continuation prompt names too. A goal whose budget
// is spent is blocked instead. Nothing happens unless the goal still
// waits the wait the wake was armed for: goalID's, begun at since
// (Wait.Since).
func (s *State) Wake(goalID string, since time.Time, reason string, now Instant) []Change {
	g := s.Goal
	if g == nil || g.ID != goalID || g.Status != Waiting || g.Wait == nil || !g.Wait.Since.Equal(since) {
		return nil
	}
	reason = "woken: " + reason
	if r := s.exceededNow(g, now); r.any() {
		return []Change{g.setStatus(Blocked, Runtime, budgetReason(g.Limits, r), now)}
	}
	ch := g.setStatus(Active, Runtime, reason, now)
	ch.Kind = ChangeWake
	g.Woke = reason
	ch.Goal = g.snapshot(now)
	s.noteActivated("", now)
	return []Change{ch}
}

// WaitDue says what wakes the goal at now without looking at the
// workspace: its until has come ("" when not, or when it does not wait).
func (s *State) WaitDue(now time.Time) string {
	g := s.Goal
	if g == nil || g.Status != Waiting || g.Wait == nil || g.Wait.Until == nil || now.Before(*g.Wait.Until) {
		return ""
	}
	return "the time " + g.Wait.Until.Format(time.RFC3339) + " arrived"
}

// WaitingFor is the current goal's wait and the path marks taken when
// it began, and its id; ok false when the goal does not wait.
func (s *State) WaitingFor() (w Wait, marks map[string]string, goalID string, ok bool) {
	g := s.Goal
	if g == nil || g.Status != Waiting || g.Wait == nil {
		return Wait{}, nil, "", false
	}
	return *g.Wait.clone(), maps.Clone(g.WaitMarks), g.ID, true
}

func (w *Wait) clone() *Wait {
	if w == nil {
		return nil
	}
	c := *w
	c.Until = clonePtr(w.Until)
	c.Paths = slices.Clone(w.Paths)
	return &c
}

// waitSchema is the JSON Schema of UpdateGoal's wait (WaitConditions).
func waitSchema() map[string]any {
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	return map[string]any{
		"type":                 "object",
		"additionalProperties": false,
		"description":          "With status waiting only: what ends the wait; at least one of until, for, paths and checkPasses.",
		"properties": map[string]any{
			"until":       str("A time to wake at: RFC 3339 (2026-03-01T14:00:00Z) or a time of day (14:00, its next occurrence). At most 7 days ahead."),
			"for":         str("How long to wait from now, as 90s, 30m or 2h30m. Not with until."),
			"paths":       map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Files or folders inside the workspace; a change of one wakes the goal (at most 16)."},
			"checkPasses": map[string]any{"type": "boolean", "description": "true: wake when the goal's check passes (only a goal whose check the user set and approved)."},
			"note":        str("What you wait for, in a few words, for the user."),
		},
	}
}

// waitTool runs UpdateGoal waiting (docs/runtime.md §2.13): the model's
// wait counts against the wall-clock budget, and the turn stops.
func (s *State) waitTool(res ToolResult, c ToolCall, now Instant) (ToolResult, []Change) {
	p := *c.Wait
	p.WallClock = WallClockCounts
	changes, err := s.Wait(p, Model, now)
	if err != nil {
		return failed(res, protocol.ErrorCode(err), "Goal not waiting: "+err.Error()+"."), nil
	}
	res.StopTurn, res.StopBatch = true, true
	const stop = " Stop now: call no more tools and end your turn with one short line for the user. agentd continues the goal when a condition holds or the user resumes it, and tells you what woke it."
	if changes == nil {
		res.Output = "The goal already waits for this; nothing changed." + stop
		return res, nil
	}
	res.Output = "Goal " + s.Goal.Wait.Describe() + ". The wait counts against the goal's time budget." + stop
	return res, changes
}

// waitBy is who asked for g's wait; the user for a waiting goal whose wait
// is not known (what a person's wait would be: the model may not end it).
func (g *Goal) waitBy() Actor {
	if g.Wait == nil {
		return User
	}
	return g.Wait.By
}

// restoreWait gives g, just made waiting by an undo, the wait w it had
// (docs/runtime.md §6): its paths' marks are not known, so a path that
// exists wakes it at once; its clock runs again if the wait counts.
func (g *Goal) restoreWait(w *Wait, now Instant) {
	g.Wait, g.WaitMarks = w.clone(), nil
	switch {
	case !g.clockRuns():
		g.unstamp()
	case g.ActiveClock == "":
		g.stamp(now)
	}
}
