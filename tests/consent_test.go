package tests

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentd/agentd/setup"
	"github.com/agentd/agentd/tests/etcdtest"
)

// A check runs on a machine only with its person's consent, and its
// environment and output hold no agentd secret (docs/runtime.md §2.10.2,
// §2.10.4; docs/team.md, "Checks from etcd"). "Two machines" are two envs
// with their own state directories, as in team_test.go.

type consentCheck struct {
	Command string `json:"command"`
	SetBy   *struct {
		User string `json:"user"`
		Host string `json:"host"`
	} `json:"setBy"`
	Approved         *bool     `json:"approved"`
	SetOutsideAgentd bool      `json:"setOutsideAgentd"`
	LastRun          *checkRun `json:"lastRun"`
}

type consentState struct {
	Revision uint64
	Goal     *struct {
		Status string        `json:"status"`
		Check  *consentCheck `json:"check"`
	} `json:"goal"`
	Queue struct {
		Items []struct {
			Check         string `json:"check"`
			CheckApproved *bool  `json:"checkApproved"`
		} `json:"items"`
	} `json:"queue"`
}

func (c *client) consent() consentState {
	c.T.Helper()
	var st consentState
	c.MustExec("agentd.state", nil, &st)
	if st.Goal == nil || st.Goal.Check == nil {
		c.T.Fatalf("no goal with a check: %+v", st)
	}
	return st
}

// mustNotExist fails when path exists: the proof that a check did not run.
func mustNotExist(t *testing.T, path, what string) {
	t.Helper()
	if _, err := os.Stat(path); err == nil {
		t.Fatalf("%s: %s exists, so the check ran", what, path)
	}
}

// TestCheckFromAnotherMachineWaitsForApproval: a check a teammate's daemon
// wrote into the team folder does not run on this machine: UpdateGoal
// complete is refused with goal.check_unapproved, agentd.goal.runCheck
// too, nothing runs, and this machine's clients see approved: false with
// the teammate as setter, while the teammate's see approved: true; queued
// checks likewise. Once this machine's person approves it (agentd goal
// check --approve), it runs.
func TestCheckFromAnotherMachineWaitsForApproval(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 1)
	e1, c1, _, c2 := teamClients(t, c.Endpoints())
	c2.MustExec("agentd.goal.create", map[string]any{"objective": "ship it", "check": "touch ran"}, nil)
	c2.MustExec("agentd.goal.queue.add", map[string]any{"objective": "then deploy", "check": "touch deployed"}, nil)
	var created struct {
		Goal struct{ Check consentCheck } `json:"goal"`
	}
	if err := json.Unmarshal(c1.Await("agentd/goalChanged", revisionAtLeast(1)), &created); err != nil || created.Goal.Check.Approved == nil || *created.Goal.Check.Approved || created.Goal.Check.SetBy == nil {
		t.Fatalf("goalChanged of the teammate's create on this machine: %+v %v", created.Goal.Check, err)
	}
	var queued struct {
		Items []struct{ CheckApproved *bool } `json:"items"`
	}
	if err := json.Unmarshal(c1.Await("agentd/queueChanged", revisionAtLeast(2)), &queued); err != nil || len(queued.Items) != 1 || queued.Items[0].CheckApproved == nil || *queued.Items[0].CheckApproved {
		t.Fatalf("queueChanged of the teammate's queued check on this machine: %+v %v", queued, err)
	}

	st := c1.consent()
	chk := st.Goal.Check
	if chk.Approved == nil || *chk.Approved || chk.SetOutsideAgentd || chk.SetBy == nil || chk.SetBy.User == "" || chk.SetBy.Host == "" {
		t.Fatalf("the teammate's check on this machine: %+v", chk)
	}
	if len(st.Queue.Items) != 1 || st.Queue.Items[0].CheckApproved == nil || *st.Queue.Items[0].CheckApproved {
		t.Fatalf("the teammate's queued check on this machine: %+v", st.Queue)
	}
	if other := c2.consent().Goal.Check; other.Approved == nil || !*other.Approved {
		t.Fatalf("the check on the machine that set it: %+v", other)
	}
	c1.MustExec("agentd.turn.begin", map[string]any{"turnId": "t1", "origin": "user"}, nil)
	var begun struct {
		Injections []struct{ Variant, Text string }
	}
	c1.MustExec("agentd.step.begin", map[string]any{"turnId": "t1"}, &begun)
	if len(begun.Injections) == 0 || !strings.Contains(begun.Injections[0].Text, "Check: `touch ran` proves this goal done, but it was set elsewhere") {
		t.Fatalf("the goal reminder on this machine: %+v", begun)
	}
	c1.MustExec("agentd.step.end", map[string]any{"turnId": "t1", "outputTokens": 1, "finishReason": "stop"}, nil)
	c1.MustExec("agentd.turn.end", map[string]any{"turnId": "t1", "outcome": "completed"}, nil)
	res := c1.tool("UpdateGoal", map[string]any{"status": "complete"})
	if !res.IsError || res.ErrorCode != "goal.check_unapproved" || !strings.Contains(res.Output, "agentd goal check --approve") || !strings.Contains(res.Output, "Do not try to get around this") {
		t.Fatalf("UpdateGoal complete of an unapproved check = %+v", res)
	}
	err := c1.Exec("agentd.goal.runCheck", nil, nil)
	if code := refusalCode(err); code != "goal.check_unapproved" || !strings.Contains(err.Error(), "touch ran") {
		t.Fatalf("agentd.goal.runCheck of an unapproved check: %v", err)
	}
	mustNotExist(t, filepath.Join(e1.ws, "ran"), "before approval")
	if st := c1.consent(); st.Goal.Status != "active" || st.Goal.Check.LastRun != nil {
		t.Fatalf("goal after the refusals: %+v %+v", st.Goal, st.Goal.Check)
	}
	if out, _, code := e1.cli("goal", "status", "--workspace", e1.ws); code != 0 || !strings.Contains(out, "waiting for approval: run agentd goal check --approve") || !strings.Contains(out, "    set by ") {
		t.Fatalf("goal status before approval: %d %q", code, out)
	}
	if out, _, code := e1.cli("goal", "queue", "list", "--workspace", e1.ws); code != 0 || !strings.Contains(out, "Check: touch deployed\n       (waiting for approval on this machine)") {
		t.Fatalf("goal queue list before approval: %d %q", code, out)
	}

	// With no terminal to confirm on, the command must be named: the one
	// the goal has is shown, with how to approve it.
	out, errOut, code := e1.cli("goal", "check", "--approve", "--workspace", e1.ws)
	if code != 2 || !strings.Contains(errOut, "Check: touch ran\n") || !strings.Contains(errOut, "give the exact command you approve: agentd goal check --approve 'touch ran'") {
		t.Fatalf("goal check --approve with no terminal and no command: %d %q %q", code, out, errOut)
	}
	out, errOut, code = e1.cli("goal", "check", "--approve", "touch ran", "--workspace", e1.ws)
	if code != 0 || !strings.HasPrefix(out, "Approved on this machine: touch ran\n") || !strings.Contains(out, "approved on this machine") {
		t.Fatalf("goal check --approve: %d %q %q", code, out, errOut)
	}
	gc := c1.awaitGoalWhere("the approval", func(g goalChanged) bool {
		return g.Change.Kind == "check" && strings.Contains(g.Change.Reason, "check approved on ")
	})
	if gc.Change.Actor != "user" {
		t.Fatalf("goalChanged of the approval: %+v", gc)
	}
	var approved struct {
		Goal struct{ Check consentCheck } `json:"goal"`
	}
	raw := c1.Await("agentd/goalChanged", func(raw json.RawMessage) bool {
		return strings.Contains(string(raw), "check approved on ")
	})
	if err := json.Unmarshal(raw, &approved); err != nil || approved.Goal.Check.Approved == nil || !*approved.Goal.Check.Approved {
		t.Fatalf("goalChanged of the approval carries the check %+v (%v)", approved.Goal.Check, err)
	}
	if st := c1.consent(); !*st.Goal.Check.Approved || *st.Queue.Items[0].CheckApproved {
		t.Fatalf("checks after approving the goal's (the queued one is another command): %+v %+v", st.Goal.Check, st.Queue)
	}
	if res := c1.tool("UpdateGoal", map[string]any{"status": "complete"}); res.IsError {
		t.Fatalf("UpdateGoal complete after approval = %+v", res)
	}
	if _, err := os.Stat(filepath.Join(e1.ws, "ran")); err != nil {
		t.Fatalf("the approved check did not run: %v", err)
	}
	// The queued goal is active now; its check, from the teammate, waits.
	if res := c1.tool("UpdateGoal", map[string]any{"status": "complete"}); res.ErrorCode != "goal.check_unapproved" {
		t.Fatalf("UpdateGoal complete of the advanced goal = %+v", res)
	}
	mustNotExist(t, filepath.Join(e1.ws, "deployed"), "the queued check")
}

// TestCheckWrittenOutsideAgentd: a session put into etcd by something
// other than agentd (no history event records its check) carries a check
// that shows as set outside agentd and is refused, even though this
// machine's person once approved the same command text; approving it
// (which the person does having seen it) lets it run.
func TestCheckWrittenOutsideAgentd(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 1)
	e := newEnv(t)
	writeTeamFile(t, testTeamID, c.Endpoints(), e)
	c1 := e.start().connect()
	c1.Initialize(nil, e.ws)
	// This person approved "touch ran" here once, then removed it.
	c1.MustExec("agentd.goal.create", map[string]any{"objective": "ship it", "check": "touch ran"}, nil)
	c1.MustExec("agentd.goal.setCheck", map[string]any{"command": nil}, nil)

	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The session's head and goal parts (docs/team.md, "Key layout"), put
	// in one transaction as a writer without agentd could.
	head, goalKey := "/agentd/"+testTeamID+"/s/default/head", "/agentd/"+testTeamID+"/s/default/goal"
	rec := map[string]map[string]any{}
	for _, key := range []string{head, goalKey} {
		got, err := cli.Get(ctx, key)
		if err != nil || len(got.Kvs) != 1 {
			t.Fatalf("reading %s from etcd: %v", key, err)
		}
		part := map[string]any{}
		if err := json.Unmarshal(got.Kvs[0].Value, &part); err != nil {
			t.Fatal(err)
		}
		rec[key] = part
	}
	rev := uint64(rec[head]["revision"].(float64)) + 1
	rec[head]["revision"] = rev
	rec[goalKey]["goal"].(map[string]any)["goal"].(map[string]any)["check"] = map[string]any{"command": "touch ran", "setBy": map[string]any{"user": "alice", "host": "trusted-laptop"}}
	headData, _ := json.Marshal(rec[head])
	goalData, _ := json.Marshal(rec[goalKey])
	if _, err := cli.Txn(ctx).Then(clientv3.OpPut(head, string(headData)), clientv3.OpPut(goalKey, string(goalData))).Commit(); err != nil {
		t.Fatal(err)
	}
	c1.Await("agentd/goalChanged", revisionAtLeast(rev))

	st := c1.consent()
	if chk := st.Goal.Check; chk.Command != "touch ran" || !chk.SetOutsideAgentd || chk.Approved == nil || *chk.Approved {
		t.Fatalf("check written outside agentd: %+v", chk)
	}
	if res := c1.tool("UpdateGoal", map[string]any{"status": "complete"}); res.ErrorCode != "goal.check_unapproved" || !strings.Contains(res.Output, "written outside agentd") || strings.Contains(res.Output, "trusted-laptop") {
		t.Fatalf("UpdateGoal complete = %+v", res)
	}
	err = c1.Exec("agentd.goal.runCheck", nil, nil)
	if refusalCode(err) != "goal.check_unapproved" || !strings.Contains(err.Error(), "outside agentd") {
		t.Fatalf("agentd.goal.runCheck: %v", err)
	}
	mustNotExist(t, filepath.Join(e.ws, "ran"), "a check written outside agentd")
	if out, _, code := e.cli("goal", "status", "--workspace", e.ws); code != 0 || !strings.Contains(out, "set outside agentd") || strings.Contains(out, "trusted-laptop") {
		t.Fatalf("goal status: %d %q", code, out)
	}

	c1.MustExec("agentd.goal.approveCheck", map[string]any{"command": "touch ran"}, nil)
	if chk := c1.consent().Goal.Check; !*chk.Approved || chk.SetOutsideAgentd {
		t.Fatalf("check after approval: %+v", chk)
	}
	if res := c1.tool("UpdateGoal", map[string]any{"status": "complete"}); res.IsError {
		t.Fatalf("UpdateGoal complete after approval = %+v", res)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "ran")); err != nil {
		t.Fatal("the approved check did not run")
	}
}

// TestApproveNamesTheCommandSeen: approving a command other than the
// goal's check (it changed since the person looked) approves nothing.
func TestApproveNamesTheCommandSeen(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 1)
	e1, c1, _, c2 := teamClients(t, c.Endpoints())
	c2.MustExec("agentd.goal.create", map[string]any{"objective": "ship it", "check": "true"}, nil)
	c2.MustExec("agentd.goal.setCheck", map[string]any{"command": "touch ran"}, nil)
	c1.Await("agentd/goalChanged", revisionAtLeast(2))
	err := c1.Exec("agentd.goal.approveCheck", map[string]any{"command": "true"}, nil)
	if refusalCode(err) != "goal.check_changed" {
		t.Fatalf("approving the command shown before the change: %v", err)
	}
	if out, _, code := e1.cli("goal", "check", "--approve", "true", "--workspace", e1.ws); code != 1 {
		t.Fatalf("goal check --approve with the old text: %d %q", code, out)
	}
	if res := c1.tool("UpdateGoal", map[string]any{"status": "complete"}); res.ErrorCode != "goal.check_unapproved" {
		t.Fatalf("UpdateGoal complete = %+v", res)
	}
	mustNotExist(t, filepath.Join(e1.ws, "ran"), "after a refused approval")
}

// TestApproveOnATerminalAsksFirst: `agentd goal check --approve` without
// the command shows the goal's check and who set it on the terminal and
// approves it only when the person answers yes (a check changed by a
// teammate since `goal status` is never approved unseen).
func TestApproveOnATerminalAsksFirst(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("no script(1) to give agentd a terminal")
	}
	e := newEnv(t)
	ws := []string{"--workspace", e.ws}
	if _, errOut, code := e.cli(append([]string{"goal", "create", "ship it", "--check", "touch ran"}, ws...)...); code != 0 {
		t.Fatalf("goal create: %d %s", code, errOut)
	}
	e.forgetApprovals()
	onTerminal := func(answer string) (string, int) {
		line := e.command("goal", "check", "--approve", "--workspace", e.ws)
		quoted := make([]string, len(line.Args))
		for i, a := range line.Args {
			quoted[i] = setup.ShellQuote(a)
		}
		cmd := exec.Command("script", "-qec", strings.Join(quoted, " "), "/dev/null")
		cmd.Env = line.Env
		cmd.Dir = e.ws
		cmd.Stdin = strings.NewReader(answer)
		out, err := cmd.CombinedOutput()
		code := 0
		if x, ok := err.(*exec.ExitError); ok {
			code = x.ExitCode()
		} else if err != nil {
			t.Fatalf("script: %v", err)
		}
		return string(out), code
	}
	out, code := onTerminal("n\n")
	if code != 1 || !strings.Contains(out, "Check: touch ran") || !strings.Contains(out, "[y/N]") || !strings.Contains(out, "nothing approved") {
		t.Fatalf("answering no: exit %d %q", code, out)
	}
	if out, _, _ := e.cli(append([]string{"goal", "status"}, ws...)...); !strings.Contains(out, "waiting for approval") {
		t.Fatalf("goal status after answering no:\n%s", out)
	}
	out, code = onTerminal("y\n")
	if code != 0 || !strings.Contains(out, "Approved on this machine: touch ran") {
		t.Fatalf("answering yes: exit %d %q", code, out)
	}
	if out, _, _ := e.cli(append([]string{"goal", "status"}, ws...)...); !strings.Contains(out, "approved on this machine") {
		t.Fatalf("goal status after answering yes:\n%s", out)
	}
}

// TestCheckHoldsNoSecret: a check gets none of agentd's AGENTD_ETCD_
// variables, and the configured etcd password never shows in its output
// tail: not in the state, not in the model's refusal, not in etcd.
func TestCheckHoldsNoSecret(t *testing.T) {
	const password = "pw-Zq8v3LkN1x"
	// Credentials travel only over TLS (docs/team.md, "Credentials").
	certs := etcdtest.NewTLS(t)
	c := etcdtest.Start(t, 1, etcdtest.WithTLS(certs))
	t.Setenv("AGENTD_ETCD_CACERT", certs.CAFile)
	t.Setenv("AGENTD_ETCD_CERT", certs.ClientCert)
	t.Setenv("AGENTD_ETCD_KEY", certs.ClientKey)
	t.Setenv("AGENTD_ETCD_PASSWORD", password)
	e := newEnv(t)
	writeTeamFile(t, testTeamID, c.Endpoints(), e)
	c1 := e.start().connect()
	c1.Initialize(nil, e.ws)
	if err := os.WriteFile(filepath.Join(e.ws, "pw.txt"), []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	check := `echo "vars: $(env | grep -c '^AGENTD_ETCD_')"; echo "env pw: [$AGENTD_ETCD_PASSWORD]"; cat pw.txt; exit 1`
	c1.MustExec("agentd.goal.create", map[string]any{"objective": "ship it", "check": check}, nil)
	res := c1.tool("UpdateGoal", map[string]any{"status": "complete"})
	want := "vars: 0\nenv pw: []\n[redacted]\n"
	if res.ErrorCode != "goal.check_failed" || !strings.HasSuffix(res.Output, want) || strings.Contains(res.Output, password) {
		t.Fatalf("the model's refusal = %+v, want it to end %q", res, want)
	}
	if chk := c1.consent().Goal.Check; chk.LastRun == nil || chk.LastRun.OutputTail != want {
		t.Fatalf("stored run: %+v", chk.LastRun)
	}
	pair, err := tls.LoadX509KeyPair(certs.ClientCert, certs.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(certs.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	tlsConfig := &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: roots, MinVersion: tls.VersionTLS12}
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, TLS: tlsConfig})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	all, err := cli.Get(ctx, "/agentd/", clientv3.WithPrefix())
	if err != nil || len(all.Kvs) == 0 {
		t.Fatalf("reading etcd: %v", err)
	}
	for _, kv := range all.Kvs {
		if strings.Contains(string(kv.Value), password) {
			t.Errorf("etcd key %s holds the password", kv.Key)
		}
	}
}

// TestCheckInAStateFileWithoutApproval: a folder's state file that holds
// a check this machine's person never approved (a state file copied in,
// or written by an agentd before approvals existed; here the approvals
// file is removed) does not run it until the person approves it.
func TestCheckInAStateFileWithoutApproval(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start().connect()
	c.Initialize(nil, e.ws)
	c.MustExec("agentd.goal.create", map[string]any{"objective": "ship it", "check": "touch ran"}, nil)
	approvals, err := filepath.Glob(filepath.Join(e.stateDir, "workspaces", "*", "approved-checks.json"))
	if err != nil || len(approvals) != 1 {
		t.Fatalf("approvals file: %v %v", approvals, err)
	}
	if err := os.Remove(approvals[0]); err != nil {
		t.Fatal(err)
	}
	if chk := c.consent().Goal.Check; chk.Approved == nil || *chk.Approved {
		t.Fatalf("check without its approval: %+v", chk)
	}
	if res := c.tool("UpdateGoal", map[string]any{"status": "complete"}); res.ErrorCode != "goal.check_unapproved" {
		t.Fatalf("UpdateGoal complete = %+v", res)
	}
	mustNotExist(t, filepath.Join(e.ws, "ran"), "without approval")
	c.MustExec("agentd.goal.approveCheck", map[string]any{"command": "touch ran"}, nil)
	if res := c.tool("UpdateGoal", map[string]any{"status": "complete"}); res.IsError {
		t.Fatalf("UpdateGoal complete after approval = %+v", res)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "ran")); err != nil {
		t.Fatal("the approved check did not run")
	}
}
