package goal

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Consent to a check (docs/runtime.md §2.10.4): a check runs on a machine
// only when the person at that machine approved its exact command. Which
// commands are approved is the machine's own record, kept by the shell
// (workspace); the rules here say who set a check, what approving changes
// and what the model and the person are told while a check waits.

// CheckSetter is the person who set a check: the OS user name and the host
// name of the machine whose agentd took the setting.
type CheckSetter struct {
	User string `json:"user"`
	Host string `json:"host"`
}

// String is "user@host".
func (p CheckSetter) String() string { return p.User + "@" + p.Host }

// ApproveCheck records that by, the person at this machine, approved the
// current goal's check command, which must be command, the text the
// person was shown (docs/runtime.md §2.10.4). The approval itself is the
// machine's (the caller stores it); the goal records a check change, actor
// user, whose reason names the approver, so that every panel shows it.
// Refusals: goal.not_found, goal.no_check, goal.check_changed (the goal's
// check is another command now: nothing is approved).
func (s *State) ApproveCheck(command string, by CheckSetter, now Instant) ([]Change, error) {
	g := s.Goal
	switch {
	case g == nil:
		return nil, errorf(CodeNotFound, "there is no goal whose check could be approved")
	case g.Check == nil:
		return nil, errorf(CodeNoCheck, "the goal has no check to approve")
	case g.Check.Command != command:
		return nil, errorf(CodeCheckChanged, fmt.Sprintf("the goal's check is now `%s`, not the command given; nothing was approved: look at the check again before approving it", oneLine(g.Check.Command, 200)))
	}
	if err := approvable(command); err != nil {
		return nil, err
	}
	g.settle(now)
	g.UpdatedAt = now.Wall
	reason := "check approved on " + by.Host + " by " + by.User + ": " + oneLine(command, 200)
	return []Change{{Kind: ChangeCheck, Status: g.Status, Reason: reason, Actor: User, Goal: g.snapshot(now)}}, nil
}

// ApproveHint is how the person at this machine approves the current
// goal's check, for messages.
const ApproveHint = "agentd goal check --approve (or the Approve button of the agentd panel)"

// UnapprovedCompletion is the answer to c, an UpdateGoal complete of a goal
// whose check the person at this machine has not approved: refused with
// goal.check_unapproved; nothing ran and the goal stays active
// (docs/runtime.md §2.10.4). outside: the check was written outside
// agentd, so who set it is not known.
func (s *State) UnapprovedCompletion(c ToolCall, outside bool) ToolResult {
	res := ToolResult{Description: c.Description.Description}
	who := "set by someone else"
	switch {
	case outside:
		who = "written outside agentd"
	case s.Goal != nil && s.Goal.Check != nil && s.Goal.Check.SetBy != nil:
		who = "set by " + s.Goal.Check.SetBy.String()
	}
	return failed(res, CodeCheckUnapproved, fmt.Sprintf("Goal not complete: its check was %s, not approved by the person at this machine, so agentd did not run it and the goal stays active. Only that person can approve it. Ask the user to look at the check and, if they agree to run it here, to run `%s`; then call UpdateGoal with complete again. Do not try to get around this: do not change, remove or run the check yourself, and do not replace or cancel the goal to avoid it.", who, ApproveHint))
}

// UnapprovedError is the refusal of a run of check on demand
// (agentd.goal.runCheck) before the person at this machine approved it.
func UnapprovedError(check *Check) error {
	who := "another machine or outside agentd"
	if check.SetBy != nil && !check.SetOutsideAgentd {
		who = check.SetBy.String()
	}
	return errorf(CodeCheckUnapproved, fmt.Sprintf("the goal's check `%s` was set by %s and is not approved on this machine, so it did not run; if you agree to run it here, approve it with %s", oneLine(check.Command, 200), who, ApproveHint))
}

// Invisible says whether r shows as nothing, or changes how the text
// around it shows, without showing itself: a formatting character
// (category Cf: a bidirectional override, a zero-width space), another
// default-ignorable code point (U+3164 HANGUL FILLER, U+115F), or a
// variation selector. A check holding one cannot be approved, and where
// agentd prints a check for a person it writes one as <U+XXXX>.
func Invisible(r rune) bool {
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Variation_Selector, r)
}

// VisibleText is s for a person's terminal, one line: every control
// character but TAB (an escape sequence, a carriage return, a line break)
// and every Invisible character written as <U+XXXX>. Text from the store
// (a check, who set it, a goal's reason) is written by anyone with etcd
// access in a team folder: printed raw, an escape sequence could move the
// cursor and show the person another command than the one they approve,
// set the terminal's title or write its clipboard.
func VisibleText(s string) string {
	if !strings.ContainsFunc(s, hiddenRune) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if hiddenRune(r) {
			fmt.Fprintf(&b, "<U+%04X>", r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func hiddenRune(r rune) bool {
	return (unicode.IsControl(r) && r != '\t') || Invisible(r)
}

// approvable refuses to approve a command that does not read as what it
// runs: one a person could not have set (not trimmed, a line break or
// another control character, too long: it came from elsewhere, e.g. a raw
// etcd write), or one with an Invisible character that makes the text
// shown differ from the text run. args.invalid.
func approvable(command string) error {
	if norm, err := normalizeCheck(&command); err != nil || norm != command {
		return errorf(CodeArgsInvalid, "the check cannot be approved: no person could have set it as it is (it is not one trimmed line of at most 2000 characters); set the command you want with agentd goal set-check")
	}
	if i := strings.IndexFunc(command, Invisible); i >= 0 {
		r, _ := utf8.DecodeRuneInString(command[i:])
		return errorf(CodeArgsInvalid, fmt.Sprintf("the check cannot be approved: it holds the invisible character %U, so what is shown is not what would run; set the command you want with agentd goal set-check", r))
	}
	return nil
}
