package tests

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/tests/etcdtest"
	"github.com/agentd/agentd/tests/lsptest"
)

// End-to-end tests of team mode (docs/team.md): "two machines" are two
// envs, each with its own state and runtime directories and its own clone
// of the folder, sharing .agentd/team.json, served by an embedded etcd.

// writeTeamFile gives each env's folder the same team file, accepted on
// each env's machine (acceptTeam).
func writeTeamFile(t testing.TB, id string, eps []string, envs ...*env) {
	t.Helper()
	writeUnacceptedTeamFile(t, id, eps, envs...)
	for _, e := range envs {
		acceptTeam(t, e)
	}
}

// acceptTeam runs agentd team accept in e's folder, as its person does.
func acceptTeam(t testing.TB, e *env) string {
	t.Helper()
	out, errOut, code := e.cli("team", "accept", "--workspace", e.ws)
	if code != 0 {
		t.Fatalf("agentd team accept: exit %d, %q %q", code, out, errOut)
	}
	return out
}

// writeUnacceptedTeamFile gives each env's folder the same team file, as
// a clone or a pull does.
func writeUnacceptedTeamFile(t testing.TB, id string, eps []string, envs ...*env) {
	t.Helper()
	data, err := json.Marshal(map[string]any{"id": id, "etcd": eps})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range envs {
		if err := os.MkdirAll(filepath.Join(e.ws, ".agentd"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(e.ws, ".agentd", "team.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const testTeamID = "6f1c1a52-3c38-4b8e-9a53-0d2c5a1e7b10"

// teamClients starts a stdio agentd in each of two envs sharing one team
// and returns a client of each with its folder open.
func teamClients(t *testing.T, eps []string) (*env, *client, *env, *client) {
	t.Helper()
	e1, e2 := newEnv(t), newEnv(t)
	writeTeamFile(t, testTeamID, eps, e1, e2)
	c1 := e1.start().connect()
	c1.Initialize(nil, e1.ws)
	c2 := e2.start().connect()
	c2.Initialize(nil, e2.ws)
	awaitTeamServed(t, c1)
	awaitTeamServed(t, c2)
	return e1, c1, e2, c2
}

// awaitTeamServed waits until c's daemon serves its team folder. A daemon
// refuses a folder whose cluster does not answer within 2 s as
// workspace.unavailable, and opens it again at the next request
// (docs/team.md): the embedded members run in this race-instrumented
// process, which a loaded machine starves for longer than that, so the
// first open may be refused. waitLimit only turns a hang into a failure.
func awaitTeamServed(t *testing.T, c *client) {
	t.Helper()
	for start := time.Now(); ; {
		err := c.Exec("agentd.state", nil, nil)
		var we *lsptest.Error
		if err == nil || !errors.As(err, &we) || we.DataCode() != "workspace.unavailable" || time.Since(start) > waitLimit {
			if err != nil {
				t.Fatalf("agentd.state on a team folder: %v", err)
			}
			return
		}
		t.Logf("agentd.state again: %v", err)
	}
}

type teamState struct {
	Revision uint64
	Stale    bool
	Todos    struct {
		Items []struct {
			Title  string `json:"title"`
			Status string `json:"status"`
		}
		Revision uint64
	}
}

// TestTeamWriteReachesOtherDaemon: a write through one daemon reaches an
// LSP client of the other as agentd/todoChanged, and both read one state.
func TestTeamWriteReachesOtherDaemon(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 1)
	_, c1, _, c2 := teamClients(t, c.Endpoints())
	c1.MustExec("agentd.todo.set", map[string]any{"items": []map[string]string{{"title": "shared", "status": "pending"}}}, nil)
	raw := c2.Await("agentd/todoChanged", revisionAtLeast(1))
	var n struct {
		Revision uint64
		Items    []struct{ Title string }
		Actor    string
	}
	if err := json.Unmarshal(raw, &n); err != nil || n.Revision != 1 || len(n.Items) != 1 || n.Items[0].Title != "shared" || n.Actor != "user" {
		t.Fatalf("todoChanged on the other daemon: %s", raw)
	}
	var st teamState
	c2.MustExec("agentd.state", nil, &st)
	if st.Revision != 1 || st.Stale {
		t.Fatalf("state on the other daemon: %+v", st)
	}
}

// TestTeamCompareAndSetAcrossDaemons: clients of both daemons increment
// one counter (the list's only title) with agentd.todo.set and
// expectedRevision, 250 attempts each; every acknowledged increment is
// kept: the final value is the number of successes.
func TestTeamCompareAndSetAcrossDaemons(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 1)
	_, c1, _, c2 := teamClients(t, c.Endpoints())
	const attempts = 250
	var wg sync.WaitGroup
	var ok, conflicts [2]int
	for i, cl := range []*client{c1, c2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var cur teamState
			if err := cl.Exec("agentd.state", nil, &cur); err != nil {
				t.Error(err)
				return
			}
			for range attempts {
				n := 0
				if len(cur.Todos.Items) == 1 {
					n, _ = strconv.Atoi(cur.Todos.Items[0].Title)
				}
				var got teamState
				err := cl.Exec("agentd.todo.set", map[string]any{"items": []map[string]string{{"title": strconv.Itoa(n + 1), "status": "pending"}}, "expectedRevision": cur.Todos.Revision}, &got)
				var we *lsptest.Error
				if errors.As(err, &we) && we.DataCode() == "todo.conflict" {
					var data struct{ State teamState }
					if json.Unmarshal(we.Data, &data) != nil {
						t.Errorf("conflict without a state: %s", we.Data)
						return
					}
					cur = data.State
					conflicts[i]++
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				cur = got
				ok[i]++
			}
		}()
	}
	wg.Wait()
	total := ok[0] + ok[1]
	// The other daemon's last write reaches c1's daemon through its watch.
	var st teamState
	c1.MustExec("agentd.awaitChange", map[string]any{"afterRevision": total - 1, "timeoutMs": 10000}, &st)
	if len(st.Todos.Items) != 1 || st.Todos.Items[0].Title != strconv.Itoa(total) || st.Revision != uint64(total) {
		t.Fatalf("after %d acknowledged increments (%d conflicts): %+v", total, conflicts[0]+conflicts[1], st)
	}
	if conflicts[0]+conflicts[1] == 0 {
		t.Fatalf("no conflict in %d concurrent attempts: the test did not race", 2*attempts)
	}
	t.Logf("%d increments acknowledged, %d conflicts answered", total, conflicts[0]+conflicts[1])
}

// leaseLostReason is the reason a team folder's goal is paused with when
// the daemon that drove it lost its lease: agentd knows it stopped
// answering, not that it ended (docs/team.md, "Liveness").
const leaseLostReason = "paused because the agentd process that ran the agent's turn stopped answering before the turn ended: it ended, was stopped, or was cut off from the team's etcd (its lease expired)"

// TestTeamSecondMachineDoesNotPause: a goal driven by a turn on one daemon
// stays active when a second machine opens the folder; when the driving
// daemon is killed (SIGKILL), its lease expires and the other daemon
// pauses the goal, saying the process stopped answering.
func TestTeamSecondMachineDoesNotPause(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 1)
	e1, e2 := newEnv(t), newEnv(t)
	writeTeamFile(t, testTeamID, c.Endpoints(), e1, e2)
	p1 := e1.start()
	c1 := p1.connect()
	c1.Initialize(nil, e1.ws)
	c1.MustExec("agentd.goal.create", map[string]any{"objective": "shared work"}, nil)
	h := newHost(c1)
	turn, driven := h.beginTurn("user")
	if !driven {
		t.Fatal("turn is not goal-driven")
	}
	h.beginStep(turn)
	c2 := e2.start().connect()
	c2.Initialize(nil, e2.ws)
	if g := c2.goal(); g == nil || g.Status != "active" {
		t.Fatalf("goal on the second machine: %+v, want active (its driver is alive)", g)
	}
	p1.Cmd.Process.Kill()
	p1.waitExit()
	gc := c2.awaitGoal("pause")
	if gc.Change.Reason != leaseLostReason || gc.Change.Actor != "runtime" {
		t.Fatalf("pause after the driver died: %+v, want the reason %q", gc, leaseLostReason)
	}
}

// TestTeamUnavailable: with every member down, a write answers
// workspace.unavailable, agentd.state answers the last state with stale,
// and clients get agentd/storeChanged; once the cluster is back, writes go
// through and the other daemon's client converges.
func TestTeamUnavailable(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 3)
	_, c1, _, c2 := teamClients(t, c.Endpoints())
	c1.MustExec("agentd.todo.set", map[string]any{"items": []map[string]string{{"title": "before", "status": "pending"}}}, nil)
	c2.Await("agentd/todoChanged", revisionAtLeast(1))
	c.Stop()
	err := c1.Exec("agentd.todo.set", map[string]any{"items": []map[string]string{{"title": "lost", "status": "pending"}}}, nil)
	var we *lsptest.Error
	if !errors.As(err, &we) || we.DataCode() != "workspace.unavailable" {
		t.Fatalf("write with the cluster down: %v, want workspace.unavailable", err)
	}
	c1.Await("agentd/storeChanged", func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"stale":true`) })
	var st teamState
	c1.MustExec("agentd.state", nil, &st)
	if !st.Stale || st.Revision != 1 || st.Todos.Items[0].Title != "before" {
		t.Fatalf("state with the cluster down: %+v, want the last state, stale", st)
	}
	c.Restart()
	c1.Await("agentd/storeChanged", func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"stale":false`) })
	c1.MustExec("agentd.todo.set", map[string]any{"items": []map[string]string{{"title": "after", "status": "pending"}}}, nil)
	raw := c2.Await("agentd/todoChanged", revisionAtLeast(2))
	if !strings.Contains(string(raw), `"after"`) {
		t.Fatalf("the other daemon's client got %s", raw)
	}
}

// TestTeamStaleShellState: with etcd down and an editor holding the team
// folder open in the shared daemon, agentd state answers the last state and
// says it is stale; agentd goal status says so on stderr.
func TestTeamStaleShellState(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 1)
	e := newEnv(t)
	e.useDaemon()
	writeTeamFile(t, testTeamID, c.Endpoints(), e)
	cl := e.start().connect()
	cl.Initialize(nil, e.ws)
	cl.MustExec("agentd.todo.set", map[string]any{"items": []map[string]string{{"title": "before", "status": "pending"}}}, nil)
	if out, errOut, code := e.cli("state", "--workspace", e.ws); code != 0 || strings.Contains(out, "Stale: etcd") {
		t.Fatalf("agentd state with etcd up: exit %d %q %q, want no stale note", code, out, errOut)
	}
	c.Stop()
	cl.Await("agentd/storeChanged", func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"stale":true`) })
	out, errOut, code := e.cli("state", "--workspace", e.ws)
	if code != 0 || !strings.Contains(out, "[pending] before") || !strings.Contains(out, "Stale: etcd does not answer") {
		t.Fatalf("agentd state with etcd down: exit %d %q %q, want the last state and the stale note", code, out, errOut)
	}
	if _, errOut, code := e.cli("goal", "status", "--workspace", e.ws); code != 0 || !strings.Contains(errOut, "Stale: etcd does not answer") {
		t.Fatalf("agentd goal status with etcd down: exit %d, stderr %q, want the stale note", code, errOut)
	}
}

// TestTeamInitMigration: agentd team init copies a folder's local state
// (list, goal, history) to etcd and writes team.json; a clone on another
// machine reads it all; a second init changes nothing; team status says
// which store serves the folder.
func TestTeamInitMigration(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 1)
	e1, e2 := newEnv(t), newEnv(t)
	if _, errOut, code := e1.cli("goal", "create", "ship team mode", "--workspace", e1.ws); code != 0 {
		t.Fatalf("goal create: %d %s", code, errOut)
	}
	if _, errOut, code := e1.cli("tool", "TodoList", `{"todos":[{"title":"migrate","status":"in_progress"}]}`, "--workspace", e1.ws); code != 0 {
		t.Fatalf("TodoList: %d %s", code, errOut)
	}
	out, errOut, code := e1.cli("team", "status", "--json", "--workspace", e1.ws)
	var before struct{ Store, StateFile string }
	if code != 0 || json.Unmarshal([]byte(out), &before) != nil || before.Store != "bbolt" || filepath.Base(before.StateFile) != "state.db" {
		t.Fatalf("team status before init: %d %s %s; want store bbolt and its stateFile (docs/commands.md)", code, out, errOut)
	}
	eps := strings.Join(c.Endpoints(), ",")
	out, errOut, code = e1.cli("team", "init", "--etcd", eps, "--workspace", e1.ws)
	if code != 0 || !strings.Contains(out, "copied the folder's state (sessions: 1, history events: 2)") {
		t.Fatalf("team init: exit %d, %q %q", code, out, errOut)
	}
	data, err := os.ReadFile(filepath.Join(e1.ws, ".agentd", "team.json"))
	if err != nil {
		t.Fatal(err)
	}
	var team struct {
		ID   string
		Etcd []string
	}
	if err := json.Unmarshal(data, &team); err != nil || team.ID == "" || strings.Join(team.Etcd, ",") != eps {
		t.Fatalf("team.json = %s (%v)", data, err)
	}
	if out, _, code := e1.cli("team", "init", "--etcd", eps, "--workspace", e1.ws); code != 0 || !strings.Contains(out, "already a team folder: team "+team.ID) {
		t.Fatalf("second team init: exit %d, %q", code, out)
	}
	// The clone on the other machine.
	if err := os.MkdirAll(filepath.Join(e2.ws, ".agentd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e2.ws, ".agentd", "team.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	acceptTeam(t, e2)
	out, errOut, code = e2.cli("state", "--json", "--workspace", e2.ws)
	if code != 0 || !strings.Contains(out, `"migrate"`) || !strings.Contains(out, `"ship team mode"`) {
		t.Fatalf("state on the clone: %d %s %s", code, out, errOut)
	}
	c2 := e2.start().connect()
	c2.Initialize(nil, e2.ws)
	if kinds := c2.historyKinds(); fmt.Sprint(kinds) != "[todo.write goal.create]" {
		t.Fatalf("history on the clone: %v", kinds)
	}
	out, _, code = e2.cli("team", "status", "--json", "--workspace", e2.ws)
	var st struct {
		Store, Team string
		Reachable   bool
		RTTMs       float64
	}
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Store != "etcd" || st.Team != team.ID || !st.Reachable || st.RTTMs <= 0 {
		t.Fatalf("team status on the clone: %d %s", code, out)
	}
}

// TestTeamInitUnreachable: team init with an etcd that does not answer
// fails after the 2 s of any team call, saying so, and changes nothing in
// the folder (docs/team.md, "Starting a team"); the old code waited a
// minute and said only "context deadline exceeded".
func TestTeamInitUnreachable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, errOut, code := e.cli("team", "init", "--etcd", "http://127.0.0.1:1", "--workspace", e.ws)
	if code != 1 || !strings.Contains(errOut, "no answer within 2s") || !strings.Contains(errOut, "nothing was changed in the folder") {
		t.Fatalf("team init with etcd unreachable: exit %d, stderr %q; want 1 and a line saying etcd gave no answer within 2s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(e.ws, ".agentd")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("team init that failed left .agentd in the folder: %v", err)
	}
}

// TestTeamTLS: a cluster that requires client certificates serves a daemon
// given the CA, certificate and key in AGENTD_ETCD_*; team status without
// them says it is not reachable.
func TestTeamTLS(t *testing.T) {
	certs := etcdtest.NewTLS(t)
	c := etcdtest.Start(t, 1, etcdtest.WithTLS(certs))
	e := newEnv(t)
	writeTeamFile(t, testTeamID, c.Endpoints(), e)
	if out, _, code := e.cli("team", "status", "--workspace", e.ws, "--etcd-cacert", certs.CAFile); code != 1 || !strings.Contains(out, "reachable: no") {
		t.Fatalf("team status without a client certificate: exit %d, %q", code, out)
	}
	t.Setenv("AGENTD_ETCD_CACERT", certs.CAFile)
	t.Setenv("AGENTD_ETCD_CERT", certs.ClientCert)
	t.Setenv("AGENTD_ETCD_KEY", certs.ClientKey)
	if out, errOut, code := e.cli("tool", "TodoList", `{"todos":[{"title":"over tls","status":"pending"}]}`, "--workspace", e.ws); code != 0 {
		t.Fatalf("TodoList over TLS: %d %s %s", code, out, errOut)
	}
	if out, _, code := e.cli("team", "status", "--workspace", e.ws); code != 0 || !strings.Contains(out, "reachable: yes") {
		t.Fatalf("team status with the certificates: exit %d, %q", code, out)
	}
}

// TestTeamTaskFileRecordedByDriver: each machine has its own checkout, so
// only the daemon whose agent drives the goal records its task file: an
// edit in the other clone is not recorded, an edit in the driver's clone
// is, and reaches the other daemon's client.
func TestTeamTaskFileRecordedByDriver(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 1)
	e1, e2 := newEnv(t), newEnv(t)
	writeTeamFile(t, testTeamID, c.Endpoints(), e1, e2)
	e1.tfWrite("TASKS.md", "- one\n")
	e2.tfWrite("TASKS.md", "- one\n")
	c1 := e1.start().connect()
	c1.Initialize(nil, e1.ws)
	c1.MustExec("agentd.goal.create", map[string]any{"objective": "work through the task file", "taskFile": "TASKS.md"}, nil)
	if _, driven := newHost(c1).beginTurn("user"); !driven {
		t.Fatal("turn is not goal-driven")
	}
	c2 := e2.start().connect()
	c2.Initialize(nil, e2.ws)
	e2.tfWrite("TASKS.md", "- edited on the machine that does not drive\n")
	driver := "- edited on the driving machine\n"
	e1.tfReplace("TASKS.md", driver) // whole: a truncated file seen on the way would be the driver's change too
	c2.awaitTaskFile(0, "TASKS.md", tfPtr(driver))
	for _, n := range append(c1.tfNotes(), c2.tfNotes()...) {
		if !tfMatches(n, "TASKS.md", tfPtr(driver)) {
			t.Fatalf("a task file change that is not the driver's was recorded: %+v", n)
		}
	}
}

// TestTeamEndpointsOverride: AGENTD_ETCD_ENDPOINTS replaces team.json's
// endpoints on this machine (and --etcd-endpoints replaces both).
func TestTeamEndpointsOverride(t *testing.T) {
	c := etcdtest.Start(t, 1)
	e := newEnv(t)
	writeTeamFile(t, testTeamID, []string{"http://127.0.0.1:1"}, e)
	if out, _, code := e.cli("team", "status", "--workspace", e.ws); code != 1 || !strings.Contains(out, "reachable: no (no answer within 2s") {
		t.Fatalf("team status with team.json's dead endpoint: exit %d, %q; want reachable: no, saying etcd gave no answer within 2s", code, out)
	}
	real := strings.Join(c.Endpoints(), ",")
	t.Setenv("AGENTD_ETCD_ENDPOINTS", real)
	if out, _, code := e.cli("team", "status", "--workspace", e.ws); code != 0 || !strings.Contains(out, "at "+real+"\nreachable: yes") {
		t.Fatalf("team status with AGENTD_ETCD_ENDPOINTS: exit %d, %q", code, out)
	}
	if out, _, code := e.cli("team", "status", "--workspace", e.ws, "--etcd-endpoints", "http://127.0.0.1:1"); code != 1 || !strings.Contains(out, "reachable: no") {
		t.Fatalf("team status with --etcd-endpoints over the environment: exit %d, %q", code, out)
	}
}

// TestTeamCheckRunsOnItsDaemon: a goal check running on one machine stays
// marked running when a second daemon opens the folder (its daemon holds
// its lease); once that daemon is killed and its lease expires, the other
// clears the mark (docs/runtime.md §2.10.3, docs/team.md).
func TestTeamCheckRunsOnItsDaemon(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 1)
	e1, e2 := newEnv(t), newEnv(t)
	writeTeamFile(t, testTeamID, c.Endpoints(), e1, e2)
	p1 := e1.start()
	c1 := p1.connect()
	c1.Initialize(nil, e1.ws)
	release := filepath.Join(t.TempDir(), "release")
	// The killed daemon's check ends once the test does.
	t.Cleanup(func() { _ = os.WriteFile(release, nil, 0o600) })
	check := fmt.Sprintf("while [ ! -f %q ]; do sleep 0.05; done", release)
	c1.MustExec("agentd.goal.create", map[string]any{"objective": "shared work", "check": check}, nil)
	c1.asyncTool("UpdateGoal", map[string]any{"status": "complete"})
	c1.awaitCheck(true)

	c2 := e2.start().connect()
	c2.Initialize(nil, e2.ws)
	if chk := c2.checkOf(); chk == nil || !chk.Running {
		t.Fatalf("check on the second machine: %+v, want running (its daemon is alive)", chk)
	}
	p1.Cmd.Process.Kill()
	p1.waitExit()
	if chk := c2.awaitCheck(false); chk.Command != check {
		t.Fatalf("check after its daemon died: %+v", chk)
	}
	if chk := c2.checkOf(); chk.Running {
		t.Fatalf("the mark stayed: %+v", chk)
	}
}

// TestTeamQueueAndAdvanceReachOtherDaemon: a queue change made through one
// daemon reaches the other's client as agentd/queueChanged, and an advance
// as its three notifications in order (docs/protocol.md §4.2): what a
// change told clients travels with it (docs/team.md).
func TestTeamQueueAndAdvanceReachOtherDaemon(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 1)
	_, c1, _, c2 := teamClients(t, c.Endpoints())
	c1.MustExec("agentd.goal.create", map[string]any{"objective": "first"}, nil)
	rev, _ := c1.queueCall("agentd.goal.queue.add", map[string]any{"objective": "second"})
	if qc := c2.awaitQueue(rev); qc.Actor != "user" || len(qc.Items) != 1 || qc.Items[0].Objective != "second" {
		t.Fatalf("queueChanged on the other daemon: %+v", qc)
	}
	if res := c1.tool("UpdateGoal", map[string]any{"status": "complete"}); res.IsError {
		t.Fatalf("UpdateGoal complete: %+v", res)
	}
	var kinds []string
	c2.Await("agentd/queueChanged", func(raw json.RawMessage) bool {
		var q queueChanged
		return json.Unmarshal(raw, &q) == nil && q.Revision > rev && len(q.Items) == 0
	})
	for _, n := range c2.Conn.NotesOf("agentd/goalChanged") {
		var g goalChanged
		if json.Unmarshal(n, &g) == nil && g.Revision > rev {
			kinds = append(kinds, g.Change.Kind)
		}
	}
	if strings.Join(kinds, ",") != "complete,advance" {
		t.Fatalf("goalChanged kinds of the advance on the other daemon = %v, want complete, advance", kinds)
	}
	if g := c2.goal(); g == nil || g.Objective != "second" || g.Status != "active" {
		t.Fatalf("goal on the other daemon after the advance: %+v", g)
	}
}
