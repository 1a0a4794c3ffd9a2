package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentd/agentd/tests/etcdtest"
)

// fillEtcd writes 64 KB values under a prefix of its own until the
// cluster's quota refuses one (etcd's NOSPACE alarm), at most 200.
func fillEtcd(t *testing.T, eps []string) {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	value := strings.Repeat("x", 64<<10)
	for i := range 200 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := cli.Put(ctx, fmt.Sprintf("/filler/%d", i), value)
		cancel()
		if err != nil {
			if !strings.Contains(err.Error(), "database space exceeded") {
				t.Fatalf("filling etcd: put %d: %v", i, err)
			}
			return
		}
	}
	t.Fatal("200 puts of 64 KB did not reach a 1 MiB quota")
}

// TestTeamFullEtcd: an etcd whose database reached its quota refuses
// agentd's write with workspace.no_space naming the fix, not an outage;
// agentd team status says it is reachable, reports the NOSPACE alarm with
// the fix and exits 1 (docs/team.md, "A full etcd"). Before, the write
// blamed reachability and team status said reachable, exit 0.
func TestTeamFullEtcd(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 1, etcdtest.WithQuota(1<<20))
	e := newEnv(t)
	writeTeamFile(t, testTeamID, c.Endpoints(), e)
	if out, errOut, code := e.cli("tool", "TodoList", `{"todos":[{"title":"before","status":"pending"}]}`, "--workspace", e.ws); code != 0 {
		t.Fatalf("agentd tool TodoList: exit %d %q %q", code, out, errOut)
	}
	fillEtcd(t, c.Endpoints())
	out, errOut, code := e.cli("tool", "TodoList", `{"todos":[{"title":"after","status":"pending"}]}`, "--workspace", e.ws)
	all := out + errOut
	if code == 0 || !strings.Contains(all, "database is full") || !strings.Contains(all, "etcdctl alarm disarm") || strings.Contains(all, "did not answer") {
		t.Fatalf("a write to a full etcd: exit %d %q %q; want a refusal saying the database is full, with the fix", code, out, errOut)
	}
	out, errOut, code = e.cli("team", "status", "--workspace", e.ws)
	if code != 1 || !strings.Contains(out, "reachable: yes") || !strings.Contains(out, "alarm: NOSPACE") || !strings.Contains(out, "etcdctl alarm disarm") {
		t.Fatalf("agentd team status with a full etcd: exit %d %q %q; want 1, reachable, the NOSPACE alarm and its fix", code, out, errOut)
	}
	out, _, _ = e.cli("team", "status", "--json", "--workspace", e.ws)
	var st struct {
		Reachable bool
		Alarms    []string
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || !st.Reachable || fmt.Sprint(st.Alarms) != "[NOSPACE]" {
		t.Fatalf("agentd team status --json: %q (%v)", out, err)
	}
}
