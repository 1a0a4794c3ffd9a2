package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/goal"
)

// TestApprovedChecks: an approval is of one exact command text, for one
// folder, on one machine's state directory; the file holds hashes, not
// the commands, and one that cannot be read approves nothing.
func TestApprovedChecks(t *testing.T) {
	state := t.TempDir()
	a, b := t.TempDir(), t.TempDir()
	r := newRegistry(t, state)
	wa, wb := openWorkspace(t, r, a), openWorkspace(t, r, b)
	alice := goal.CheckSetter{User: "alice", Host: "laptop"}
	if wa.CheckApproved("make test") {
		t.Fatal("approved before any approval")
	}
	if err := wa.ApproveCheck("make test", alice, time.Now()); err != nil {
		t.Fatal(err)
	}
	if !wa.CheckApproved("make test") {
		t.Fatal("not approved after the approval")
	}
	for _, other := range []string{"make test ", "make  test", "make test; rm -rf ~"} {
		if wa.CheckApproved(other) {
			t.Errorf("%q approved by the approval of %q", other, "make test")
		}
	}
	if wb.CheckApproved("make test") {
		t.Error("approving in one folder approved the command in another")
	}
	if openWorkspace(t, newRegistry(t, t.TempDir()), a).CheckApproved("make test") {
		t.Error("another state directory (another machine) sees the approval")
	}
	data, err := os.ReadFile(filepath.Join(wa.approvalsDir(), approvalsFile))
	if err != nil || strings.Contains(string(data), "make test") || !strings.Contains(string(data), commandHash("make test")) {
		t.Errorf("approvals file: %s %v", data, err)
	}
	if err := os.WriteFile(filepath.Join(wa.approvalsDir(), approvalsFile), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if wa.CheckApproved("make test") {
		t.Error("an unreadable approvals file approves")
	}
	if err := wa.ApproveCheck("make lint", alice, time.Now()); err != nil || !wa.CheckApproved("make lint") {
		t.Errorf("approving over an unreadable file: %v", err)
	}
}
