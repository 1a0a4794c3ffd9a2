package service_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/service"
	"github.com/agentd/agentd/workspace"
)

// TestCheckNeedsConsent: a check stored without this machine's approval
// (here written by the rules directly, as a state from elsewhere would be)
// does not run, on demand or at UpdateGoal complete, which is refused with
// goal.check_unapproved and leaves the goal active; once the person
// approves the command, it runs.
func TestCheckNeedsConsent(t *testing.T) {
	opts, root := folder(t)
	svc, ws := open(t, opts, service.Daemon, root)
	marker := filepath.Join(root, "ran")
	command := "touch ran"
	bob := goal.CheckSetter{User: "bob", Host: "elsewhere"}
	update(t, svc, ws, func(g *goal.State) ([]goal.Change, error) {
		return g.Create(goal.CreateParams{Objective: "ship it", Check: command, CheckSetBy: &bob}, svc.Now())
	})
	_, _, err := svc.RunCheck(context.Background(), ws, workspace.DefaultSession, "", func() {})
	var coded interface{ ErrorCode() string }
	if !errors.As(err, &coded) || coded.ErrorCode() != goal.CodeCheckUnapproved || !strings.Contains(err.Error(), "bob@elsewhere") || !strings.Contains(err.Error(), "agentd goal check --approve") {
		t.Fatalf("run on demand: %v", err)
	}
	call, err := goal.NewCall(goal.UpdateGoalTool, []byte(`{"status":"complete"}`), "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.CallGoalTool(context.Background(), ws, workspace.DefaultSession, goal.UpdateGoalTool, goal.ToolCall{Call: call}, view(t, ws), func() {})
	if err != nil || !res.IsError || res.ErrorCode != goal.CodeCheckUnapproved {
		t.Fatalf("complete: %+v %v", res, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the unapproved check ran")
	}
	if g := view(t, ws).Goal.Goal; g.Status != goal.Active || g.Check.Running || g.Check.LastRun != nil {
		t.Fatalf("goal after the refusals: %+v %+v", g, g.Check)
	}
	st := view(t, ws)
	snap := st.Goal.Snapshot(svc.Now())
	svc.ShowConsent(ws, workspace.DefaultSession, snap, nil)
	if snap.Check.Approved == nil || *snap.Check.Approved || snap.Check.SetOutsideAgentd {
		t.Fatalf("shown check before approval: %+v", snap.Check)
	}
	if _, err := svc.ApproveCheck(ws, workspace.DefaultSession, command+" "); err == nil {
		t.Fatal("approving another text than the check's was accepted")
	}
	if _, err := svc.ApproveCheck(ws, workspace.DefaultSession, command); err != nil {
		t.Fatal(err)
	}
	if run, _, err := svc.RunCheck(context.Background(), ws, workspace.DefaultSession, "", func() {}); err != nil || !run.Passed() {
		t.Fatalf("run after approval: %+v %v", run, err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the approved check did not run: %v", err)
	}
}

// TestCheckEnvironmentAndRedaction: a check gets no AGENTD_ETCD_ variable,
// and its stored output shows neither the etcd password nor the client
// key (docs/runtime.md §2.10.2).
func TestCheckEnvironmentAndRedaction(t *testing.T) {
	opts, root := folder(t)
	key := "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIJ0gTE8Xr7bN5Yq1mQKc0g3e6aD1uS2xZ9hV4pW7cL8s\n-----END PRIVATE KEY-----\n"
	keyFile := filepath.Join(t.TempDir(), "client.key")
	if err := os.WriteFile(keyFile, []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	opts.Team = workspace.TeamOptions{Password: "s3cret-pass", Key: keyFile}
	t.Setenv(workspace.EnvEtcdPassword, "s3cret-pass")
	t.Setenv(workspace.EnvEtcdUser, "agent-user")
	t.Setenv(workspace.EnvEtcdKey, keyFile)
	svc, ws := open(t, opts, service.Daemon, root)
	if err := os.WriteFile(filepath.Join(root, "pw"), []byte("s3cret-pass"), 0o600); err != nil {
		t.Fatal(err)
	}
	command := "env | grep AGENTD_ETCD_ || echo no-etcd-env; printf 'pw=%s.\\n' \"$(cat pw)\"; cat " + keyFile + "; echo line; sed -n 2p " + keyFile
	update(t, svc, ws, func(g *goal.State) ([]goal.Change, error) {
		return g.Create(goal.CreateParams{Objective: "ship it", Check: command}, svc.Now())
	})
	if err := svc.ApproveForPerson(ws, command); err != nil {
		t.Fatal(err)
	}
	run, st, err := svc.RunCheck(context.Background(), ws, workspace.DefaultSession, "", func() {})
	if err != nil {
		t.Fatal(err)
	}
	tail := run.OutputTail
	if !strings.Contains(tail, "no-etcd-env") || !strings.HasSuffix(tail, "pw=[redacted].\n[redacted]\nline\n[redacted]\n") {
		t.Errorf("output tail %q", tail)
	}
	for _, secret := range []string{"s3cret-pass", "agent-user", "MC4CAQAwBQYDK2VwBCIEIJ0g"} {
		if strings.Contains(tail, secret) || strings.Contains(st.Goal.Goal.Check.LastRun.OutputTail, secret) {
			t.Errorf("the tail shows %q: %q", secret, tail)
		}
	}
}
