package workspace

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/tests/etcdtest"
)

// bigList is a todo list of about 16 KB, different for each i.
func bigList(i int) func(s *Session) (Change, error) {
	return func(s *Session) (Change, error) {
		s.Todos = items()
		for j := range 32 {
			s.Todos = append(s.Todos, items(fmt.Sprintf("%d.%d %s", i, j, strings.Repeat("x", 480)))...)
		}
		return Change{Kind: "todo.set", Actor: "user", Todos: true}, nil
	}
}

// quotaTeam opens a team folder on one member whose database quota is
// quota bytes, with a session's history bounded to 64 KiB so that what
// agentd keeps is far below the quota: what fills it is etcd's history.
func quotaTeam(t *testing.T, quota int64) (*Workspace, Options, string) {
	t.Helper()
	was := maxHistoryBytes
	maxHistoryBytes = 64 << 10
	t.Cleanup(func() { maxHistoryBytes = was })
	c := etcdtest.Start(t, 1, etcdtest.WithQuota(quota))
	var opts Options
	r := newRegistry(t, t.TempDir(), func(o *Options) { o.Identity = "daemon"; opts = *o })
	root := accepted(t, r, teamFolder(t, NewTeamID(), c.Endpoints()))
	return openWorkspace(t, r, root), opts, root
}

// TestTeamCompactionKeepsEtcdBounded: a daemon compacts etcd's history
// (every 50 ms here, 5 min by default), so 400 writes of 16 KB, about
// 6 MiB of history, fit in a database quota of 4 MiB; team status shows
// the compaction. Without compaction the quota is reached after about 250
// (TestTeamQuotaFullIsNoSpace).
func TestTeamCompactionKeepsEtcdBounded(t *testing.T) {
	was := teamCompactInterval
	teamCompactInterval = 50 * time.Millisecond
	t.Cleanup(func() { teamCompactInterval = was })
	w, opts, root := quotaTeam(t, 4<<20)
	for i := range 400 {
		if _, err := w.Update("s", bigList(i)); err != nil {
			t.Fatalf("write %d of 400: %v (code %q)", i+1, err, errorCode(err))
		}
	}
	st, err := StatusOf(opts, root)
	if err != nil || !st.Reachable || len(st.Alarms) > 0 || st.Compacted == 0 || st.Compacted >= st.Revision {
		t.Fatalf("team status = %+v, %v; want reachable, no alarm, compacted below the revision", st, err)
	}
	t.Logf("400 writes of 16 KB within a 4 MiB quota; history compacted to revision %d of %d", st.Compacted, st.Revision)
}

// TestTeamQuotaFullIsNoSpace: with no compaction (its interval not yet
// passed), writes of 16 KB fill a 2 MiB quota; the write etcd refuses
// answers workspace.no_space with the fix, not workspace.unavailable
// blaming reachability; reads go on and the folder is not stale; team
// status reports the NOSPACE alarm with the fix.
func TestTeamQuotaFullIsNoSpace(t *testing.T) {
	w, opts, root := quotaTeam(t, 2<<20)
	var err error
	n := 0
	for ; n < 1000 && err == nil; n++ {
		_, err = w.Update("s", bigList(n))
	}
	if errorCode(err) != CodeNoSpace {
		t.Fatalf("after %d writes: %v (code %q), want %s", n, err, errorCode(err), CodeNoSpace)
	}
	for _, want := range []string{"database is full", "NOSPACE", "etcdctl defrag", "etcdctl alarm disarm", "--quota-backend-bytes", "nothing was written"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q: %s", want, err)
		}
	}
	if strings.Contains(err.Error(), "did not answer") {
		t.Errorf("message blames reachability: %s", err)
	}
	if w.Stale() {
		t.Error("a full etcd marked the folder stale: it answers")
	}
	if s := mustView(t, w, "s"); s.Revision != uint64(n-1) {
		t.Errorf("View = revision %d, want %d", s.Revision, n-1)
	}
	st, serr := StatusOf(opts, root)
	if serr != nil || !st.Reachable || fmt.Sprint(st.Alarms) != "[NOSPACE]" || !strings.Contains(st.Error, "etcdctl alarm disarm") {
		t.Fatalf("team status = %+v, %v; want reachable with the NOSPACE alarm and its fix", st, serr)
	}
	t.Logf("the 2 MiB quota refused write %d", n)
}
