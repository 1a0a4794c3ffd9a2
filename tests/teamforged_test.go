package tests

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentd/agentd/tests/etcdtest"
)

// Whoever can write a team's etcd (docs/security.md, "Who is who") writes
// what they like under the team's prefix. These tests write as that
// attacker, with the etcd client, and check what this machine's daemon does
// with it.

// etcdAttacker is a client of the team's etcd that writes raw values.
type etcdAttacker struct {
	t   *testing.T
	cli *clientv3.Client
}

func newEtcdAttacker(t *testing.T, eps []string) *etcdAttacker {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return &etcdAttacker{t: t, cli: cli}
}

// put writes value at the team's key rel (under /agentd/<team id>/).
func (a *etcdAttacker) put(rel, value string) {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := a.cli.Put(ctx, "/agentd/"+testTeamID+"/"+rel, value); err != nil {
		a.t.Fatalf("writing %s: %v", rel, err)
	}
}

// get reads the value of the first key the options select under the
// team's key rel.
func (a *etcdAttacker) get(rel string, opts ...clientv3.OpOption) []byte {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := a.cli.Get(ctx, "/agentd/"+testTeamID+"/"+rel, append(opts, clientv3.WithLimit(1))...)
	if err != nil || len(got.Kvs) == 0 {
		a.t.Fatalf("reading %s from etcd: %v", rel, err)
	}
	return got.Kvs[0].Value
}

// session reads session name's record as a JSON object: its parts
// (docs/team.md, "A session in parts") put together.
func (a *etcdAttacker) session(name string) map[string]any {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := a.cli.Get(ctx, "/agentd/"+testTeamID+"/s/"+name+"/", clientv3.WithPrefix())
	if err != nil || len(got.Kvs) == 0 {
		a.t.Fatalf("reading session %s from etcd: %v", name, err)
	}
	rec := map[string]any{"goal": map[string]any{}}
	for _, kv := range got.Kvs {
		var part map[string]any
		if err := json.Unmarshal(kv.Value, &part); err != nil {
			a.t.Fatal(err)
		}
		for k, v := range part {
			if g, ok := v.(map[string]any); ok && k == "goal" { // the goal's parts share its object
				maps.Copy(rec["goal"].(map[string]any), g)
				continue
			}
			rec[k] = v
		}
	}
	return rec
}

// TestForgedEtcdValuesDoNotStopTheDaemon: garbage, records of a newer
// agentd and absurd values written into the team's keys (sessions, a
// history event, the change flags, a live key, a turn key held by no
// lease, the compaction key) cost the folder at most the sessions they
// broke: the daemon stays up and the person's session goes on being
// written and read, its history listed and undone.
func TestForgedEtcdValuesDoNotStopTheDaemon(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 1)
	e := newEnv(t)
	writeTeamFile(t, testTeamID, c.Endpoints(), e)
	cl := e.start().connect()
	cl.Initialize(nil, e.ws)
	cl.MustExec("agentd.goal.create", map[string]any{"objective": "ship it"}, nil)
	a := newEtcdAttacker(t, c.Endpoints())

	rec := a.session("default")
	g := rec["goal"].(map[string]any)["goal"].(map[string]any)
	g["turnsUsed"], g["tokensUsed"], g["wallClockMs"] = -5, -1<<62, 1<<62
	g["status"] = "sideways"
	absurd, _ := json.Marshal(rec)
	for key, value := range map[string]string{
		"s/garbage":                      "{not json",
		"s/newer":                        `{"v": 999, "name": "newer"}`,
		"s/absurd":                       string(absurd),
		"s/empty":                        "",
		"h/default/99999999999999999999": "{}",
		"h/default/x":                    "garbage",
		"c/default":                      "[1,2",
		"live/forged":                    "not json",
		"compact":                        "-1",
	} {
		a.put(key, value)
	}
	for i := range 3 {
		cl.MustExec("agentd.todo.set", map[string]any{"items": []map[string]any{{"title": strings.Repeat("x", i+1), "status": "pending"}}}, nil)
	}
	var st struct {
		Todos struct{ Items []struct{ Title string } }
	}
	cl.MustExec("agentd.state", nil, &st)
	if len(st.Todos.Items) != 1 || st.Todos.Items[0].Title != "xxx" {
		t.Fatalf("the person's session after the forged values: %+v", st)
	}
	// A machine that opens the folder now (its one-shot command, its
	// daemon) serves it: before, the first record it could not read failed
	// the opening of the whole folder ("preparing the opened store").
	e2 := newEnv(t)
	writeTeamFile(t, testTeamID, c.Endpoints(), e2)
	if out, errOut, code := e2.cli("goal", "status", "--workspace", e2.ws); code != 0 || !strings.Contains(out, "Goal (active): ship it") {
		t.Fatalf("agentd goal status on another machine: exit %d, %q %q; want the goal", code, out, errOut)
	}
	cl2 := e2.start().connect()
	cl2.Initialize(nil, e2.ws)
	cl2.MustExec("agentd.state", nil, &st)
	if len(st.Todos.Items) != 1 || st.Todos.Items[0].Title != "xxx" {
		t.Fatalf("the session on another machine's daemon: %+v", st)
	}
	var list struct{ Sessions []struct{ Session string } }
	cl.MustExec("agentd.sessions", nil, &list)
	var names []string
	for _, s := range list.Sessions {
		names = append(names, s.Session)
	}
	if strings.Join(names, ",") != "absurd,default" {
		t.Fatalf("agentd.sessions lists %v; want the sessions that can be read, absurd and default", names)
	}
	for _, name := range []string{"garbage", "newer"} {
		if err := cl.Exec("agentd.state", map[string]any{"session": name}, nil); refusalCode(err) != "workspace.corrupt" || !strings.Contains(err.Error(), `session "`+name+`"`) {
			t.Fatalf("agentd.state of session %s: %v; want workspace.corrupt naming it", name, err)
		}
	}
	if _, errOut, code := e.cli("tool", "GetGoal", "{}", "--session", "absurd", "--workspace", e.ws); code != 0 {
		t.Fatalf("GetGoal of the session with absurd values: exit %d %s", code, errOut)
	}
	// A real event copied above the others with its seq made 0, or kept
	// (not below the key it is stored under): the pagers of undo and of a
	// check's provenance went on from a seq that does not go down, and
	// read the same page again without end.
	newest := a.get("h/default/0", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortDescend))
	var copied map[string]any
	if err := json.Unmarshal(newest, &copied); err != nil {
		t.Fatalf("the newest event in etcd: %v %q", err, newest)
	}
	zero := maps.Clone(copied)
	zero["seq"] = 0
	for key, ev := range map[string]map[string]any{"h/default/99999999999999999990": zero, "h/default/99999999999999999991": copied} {
		b, _ := json.Marshal(ev)
		a.put(key, string(b))
	}
	// The forged history values cost their own entries only: the
	// session's history lists its real changes, and undo reverts the
	// newest of them.
	var hist struct{ Events []struct{ Kind string } }
	cl.MustExec("agentd.history", nil, &hist)
	if len(hist.Events) != 4 || hist.Events[0].Kind != "todo.set" || hist.Events[3].Kind != "goal.create" {
		t.Fatalf("agentd.history after the forged events: %+v; want the 3 todo writes and the create", hist.Events)
	}
	cl.MustExec("agentd.undo", map[string]any{"scope": "todo"}, nil)
	cl.MustExec("agentd.state", nil, &st)
	if len(st.Todos.Items) != 1 || st.Todos.Items[0].Title != "xx" {
		t.Fatalf("the list after undo: %+v; want the write before the last", st)
	}
	cl.MustExec("agentd.todo.set", map[string]any{"items": []map[string]any{{"title": "still here", "status": "pending"}}}, nil)
}
