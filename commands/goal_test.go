package commands

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentd/agentd/goal"
)

// TestStatusExitCodes: the list the help texts print names the code of
// every goal status and of no goal, as StatusExitCode gives it, once each
// and in the order of the codes.
func TestStatusExitCodes(t *testing.T) {
	list := StatusExitCodes()
	snaps := []*goal.Snapshot{nil}
	for _, s := range goal.Statuses() {
		snaps = append(snaps, &goal.Snapshot{Status: s})
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
