package storetest

import (
	"sync"
	"sync/atomic"

	"github.com/agentd/agentd/workspace/storage"
)

// FailFirst makes stores that refuse every first attempt of a commit as a
// conflict (storage.ErrConflict, with the current record as Fresh) and
// pass the attempt after it to the store they wrap: each change's update
// function runs twice, the second time on exactly what the first ran on.
// Put under the commands (workspace.Options.WrapStore), it shows every
// handler safe to retry, as the store contract asks (storage.Interface):
// same result and same state as without it.
type FailFirst struct {
	conflicts atomic.Int64
}

// Wrap returns s wrapped; it is a workspace.Options.WrapStore.
func (f *FailFirst) Wrap(s storage.Interface) storage.Interface {
	return &failFirst{Interface: s, f: f, failed: map[string]bool{}}
}

// Conflicts is the number of commits refused so far.
func (f *FailFirst) Conflicts() int64 { return f.conflicts.Load() }

type failFirst struct {
	storage.Interface
	f *FailFirst

	mu     sync.Mutex
	failed map[string]bool // by session: its last attempt was refused
}

// Unwrap returns the store wrapped (workspace looks through it).
func (s *failFirst) Unwrap() storage.Interface { return s.Interface }

func (s *failFirst) Commit(c *storage.Commit) error {
	s.mu.Lock()
	refuse := !s.failed[c.Session]
	s.failed[c.Session] = refuse
	s.mu.Unlock()
	if !refuse {
		return s.Interface.Commit(c)
	}
	fresh, err := s.Interface.Get(c.Session)
	if err != nil {
		return err
	}
	c.Fresh = fresh
	s.f.conflicts.Add(1)
	return storage.ErrConflict
}
