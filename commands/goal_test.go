package commands

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/goal"
)

// TestStatusExitCodes: the list the help texts print names the code of
// every goal status and of no goal, as StatusExitCode gives it, once each
// and in the order of the codes.
func TestStatusExitCodes(t *testing.T) {
	list := StatusExitCodes()
	snaps := []*protocol.GoalSnapshot{nil}
	for _, s := range goal.Statuses() {
		snaps = append(snaps, &protocol.GoalSnapshot{Status: protocol.GoalStatus(s)})
	}
	if got := len(strings.Split(list, ", ")); got != len(snaps) {
		t.Errorf("StatusExitCodes() = %q: %d entries, want %d (no goal and each status)", list, got, len(snaps))
	}
	for _, g := range snaps {
		code, err := StatusExitCode(g)
		if err != nil {
			t.Fatal(err)
		}
		name := "no goal"
		if g != nil {
			name = string(g.Status)
		}
		entry := fmt.Sprintf("%d %s", code, name)
		if !strings.Contains(", "+list+", ", ", "+entry+", ") {
			t.Errorf("StatusExitCodes() = %q lacks %q", list, entry)
		}
	}
	last := -1
	for _, entry := range strings.Split(list, ", ") {
		var code int
		if _, err := fmt.Sscanf(entry, "%d ", &code); err != nil || code <= last {
			t.Errorf("StatusExitCodes() = %q: %q is not in the order of the codes", list, entry)
		}
		last = code
	}
}

// TestFormatCheckConsentShowsHiddenCharacters: who set a check comes from
// the store (in a team folder, anyone with etcd access writes it); an
// escape sequence, a carriage return or a line break in it would let it
// redraw the person's terminal and show another command than the one
// approved, so each is written as <U+XXXX>, on the one line it belongs to.
func TestFormatCheckConsentShowsHiddenCharacters(t *testing.T) {
	c := &protocol.Check{Command: "touch pwned", SetBy: &protocol.CheckSetter{User: "\x1b[1A\r\x1b[2K  Check: make test\n    set by alice", Host: "lap\u202etop"}}
	got := FormatCheckConsent(c)
	if strings.ContainsAny(got, "\x1b\r\u202e") || strings.Count(got, "\n") != 2 {
		t.Errorf("FormatCheckConsent printed hidden characters or more lines:\n%q", got)
	}
	if !strings.Contains(got, "set by <U+001B>[1A<U+000D><U+001B>[2K  Check: make test<U+000A>    set by alice on lap<U+202E>top\n") {
		t.Errorf("FormatCheckConsent = %q, want the setter with its hidden characters made visible", got)
	}
	if VisibleText("go test ./...\t-run X") != "go test ./...\t-run X" {
		t.Error("VisibleText changed a plain command with a tab")
	}
}
