package workspace

import (
	"testing"

	"github.com/agentd/agentd/tests/etcdtest"
	"github.com/agentd/agentd/workspace/storage"
	"github.com/agentd/agentd/workspace/storetest"
)

// conformanceLimits lowers the stores' bounds to what the conformance
// suite reaches, for the test.
func conformanceLimits(t *testing.T) storage.Limits {
	oldHist, oldSessions := maxHistory, maxSessions
	t.Cleanup(func() { maxHistory, maxSessions = oldHist, oldSessions })
	maxHistory, maxSessions = 4, 5
	return storage.Limits{MaxSessions: maxSessions, MaxHistory: maxHistory, MaxHistoryBytes: maxHistoryBytes}
}

// storeOf opens the folder root and returns its store, which the
// registry closes at the end of the test (the suite's Close does nothing).
func storeOf(t *testing.T, r *Registry, root string) storage.Interface {
	w := openWorkspace(t, r, root)
	return keepOpen{w.store}
}

type keepOpen struct{ storage.Interface }

func (keepOpen) Close() error { return nil }

// TestBoltStoreConformance: the state file's store keeps the contract of
// storage.Interface.
func TestBoltStoreConformance(t *testing.T) {
	storetest.Run(t, storetest.Backend{
		Limits: conformanceLimits(t),
		Open: func(t *testing.T) storage.Interface {
			return storeOf(t, newRegistry(t, t.TempDir()), folder(t))
		},
	})
}

// TestTeamStoreConformance: a team's etcd store keeps the contract of
// storage.Interface, on an embedded etcd member.
func TestTeamStoreConformance(t *testing.T) {
	c := etcdtest.Start(t, 1)
	storetest.Run(t, storetest.Backend{
		Limits:    conformanceLimits(t),
		Versioned: true,
		Open: func(t *testing.T) storage.Interface {
			r := newRegistry(t, t.TempDir())
			return storeOf(t, r, accepted(t, r, teamFolder(t, NewTeamID(), c.Endpoints())))
		},
	})
}
