package etcdstore

import (
	"context"
	"errors"
	"strconv"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// CompactInterval is how often a daemon of a team compacts etcd's
// history, to the revision it saw one interval before, so that etcd keeps
// about one interval of history (docs/team.md, "A full etcd"); a store
// whose Options.CompactInterval is set uses that instead (tests).
const CompactInterval = 5 * time.Minute

// compactLoop compacts etcd's history every CompactInterval, as
// Kubernetes' API server does (its etcd3 compactor): each daemon of the
// team ticks, and a compare-and-set on the team's compact key, whose
// version counts the compactions, lets one of them compact per interval.
func (s *Store) compactLoop() {
	defer s.wg.Done()
	every := CompactInterval
	if s.on.CompactInterval > 0 {
		every = s.on.CompactInterval
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	var version, rev int64
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-tick.C:
		}
		version, rev = s.compact(version, rev)
	}
}

// compact takes this interval's turn if the compact key is still at
// version (no other daemon took it since this one last looked) and then
// compacts to rev, the revision seen one interval before. It returns the
// compact key's version and the revision now. A cluster whose quota is
// reached refuses the key's write but not the compaction, which this
// daemon then makes on its own: it is what frees the space.
func (s *Store) compact(version, rev int64) (int64, int64) {
	ctx, cancel := s.opCtx()
	defer cancel()
	key := s.keys.Compact()
	resp, err := s.cli.Txn(ctx).If(clientv3.Compare(clientv3.Version(key), "=", version)).
		Then(clientv3.OpPut(key, strconv.FormatInt(rev, 10))).
		Else(clientv3.OpGet(key)).Commit()
	switch {
	case err != nil && noSpace(err):
		s.compactTo(ctx, rev)
		return version, rev
	case err != nil:
		return version, rev // the next tick tries again
	case !resp.Succeeded:
		if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) == 1 {
			return kvs[0].Version, resp.Header.Revision
		}
		return 0, resp.Header.Revision
	}
	s.compactTo(ctx, rev)
	return version + 1, resp.Header.Revision
}

// compactTo compacts etcd's history to rev (0: nothing yet).
func (s *Store) compactTo(ctx context.Context, rev int64) {
	if rev <= 0 {
		return
	}
	_, err := s.cli.Compact(ctx, rev)
	if err != nil && !errors.Is(rpctypes.Error(err), rpctypes.ErrCompacted) {
		s.on.Log.Warn("compacting etcd's history failed", "workspace", s.on.Root, "team", s.on.ID, "revision", rev, "err", err)
		return
	}
	s.on.Log.Debug("etcd's history compacted", "workspace", s.on.Root, "team", s.on.ID, "revision", rev)
}
