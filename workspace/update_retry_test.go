package workspace

import (
	"testing"

	"github.com/agentd/agentd/tests/etcdtest"
	"github.com/agentd/agentd/workspace/storetest"
)

// TestUpdateRunsAgainOnConflict: on a store that refuses every first
// commit, Update runs its function a second time on the session as stored
// and commits what that run returns; a team store wrapped so stays a team
// store (Shared).
func TestUpdateRunsAgainOnConflict(t *testing.T) {
	c := etcdtest.Start(t, 1)
	for _, team := range []bool{false, true} {
		ff := &storetest.FailFirst{}
		r := newRegistry(t, t.TempDir(), func(o *Options) { o.WrapStore = ff.Wrap })
		root := folder(t)
		if team {
			root = accepted(t, r, teamFolder(t, NewTeamID(), c.Endpoints()))
		}
		w := openWorkspace(t, r, root)
		if w.Shared() != team {
			t.Fatalf("team %v: Shared() = %v through the wrapper", team, w.Shared())
		}
		runs := 0
		s, err := w.Update("s", func(s *Session) (Change, error) {
			runs++
			s.Todos = items("a")
			return Change{Kind: "todo.set", Actor: "user", Todos: true}, nil
		})
		if err != nil {
			t.Fatalf("team %v: Update: %v", team, err)
		}
		if runs != 2 || ff.Conflicts() != 1 || s.Revision != 1 || len(mustHistory(t, w, "s", 10)) != 1 {
			t.Errorf("team %v: fn ran %d times, %d conflicts, revision %d; want 2 runs, 1 conflict, one change stored", team, runs, ff.Conflicts(), s.Revision)
		}
	}
}
