package etcdstore

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// CompactInterval is how often a daemon compacts a cluster's history, to
// the revision it saw one interval before, so that etcd keeps about one
// interval of history (docs/team.md, "A full etcd"); a store whose
// Options.CompactInterval is set uses that instead (tests).
const CompactInterval = 5 * time.Minute

// startCompaction starts the compaction of the cluster's history, which
// is the cluster's and not a team's (etcd has one history): one loop per
// daemon and cluster, started by the first store that serves with an
// identity, whatever the number of folders and teams it serves there. It
// ticks every (CompactInterval when 0) and ends when the client closes.
func (c *Cluster) startCompaction(every time.Duration) {
	c.compactOnce.Do(func() {
		if every <= 0 {
			every = CompactInterval
		}
		c.wg.Go(func() { c.compactLoop(every) })
	})
}

// compactLoop compacts etcd's history every interval, as Kubernetes' API
// server does (its etcd3 compactor): each daemon on the cluster ticks,
// and a compare-and-set on a team's compact key, whose version counts the
// compactions, lets one of them compact per interval. The key is that of
// the first team (in key order) this daemon serves on the cluster, so
// daemons serving the same teams compete for the same key; daemons of
// teams that share nothing each compact, to revisions an interval old,
// which keeps as much history.
func (c *Cluster) compactLoop(every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	var key Keys
	var version, rev int64
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-tick.C:
		}
		teams := c.reg.teams()
		if len(teams) == 0 {
			key, version, rev = Keys{}, 0, 0
			continue
		}
		first := teams[0]
		for _, k := range teams[1:] {
			if strings.Compare(k.prefix, first.prefix) < 0 {
				first = k
			}
		}
		if first != key {
			key, version, rev = first, 0, 0
		}
		version, rev = c.compact(key, version, rev)
	}
}

// compact takes this interval's turn on team k's compact key if it is
// still at version (no other daemon took it since this one last looked)
// and then compacts to rev, the revision seen one interval before. It
// returns the compact key's version and the revision now. A cluster whose
// quota is reached refuses the key's write but not the compaction, which
// this daemon then makes on its own: it is what frees the space.
func (c *Cluster) compact(k Keys, version, rev int64) (int64, int64) {
	ctx, cancel := context.WithTimeout(c.ctx, OpTimeout)
	defer cancel()
	key := k.Compact()
	resp, err := c.cli.Txn(ctx).If(clientv3.Compare(clientv3.Version(key), "=", version)).
		Then(clientv3.OpPut(key, strconv.FormatInt(rev, 10))).
		Else(clientv3.OpGet(key)).Commit()
	switch {
	case err != nil && noSpace(err):
		c.compactTo(ctx, k, rev)
		return version, rev
	case err != nil:
		return version, rev // the next tick tries again
	case !resp.Succeeded:
		if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) == 1 {
			return kvs[0].Version, resp.Header.Revision
		}
		return 0, resp.Header.Revision
	}
	c.compactTo(ctx, k, rev)
	return version + 1, resp.Header.Revision
}

// compactTo compacts etcd's history to rev (0: nothing yet).
func (c *Cluster) compactTo(ctx context.Context, k Keys, rev int64) {
	if rev <= 0 {
		return
	}
	_, err := c.cli.Compact(ctx, rev)
	if err != nil && !errors.Is(rpctypes.Error(err), rpctypes.ErrCompacted) {
		c.log.Warn("compacting etcd's history failed", "endpoints", strings.Join(c.eps, ","), "turn", k.Compact(), "revision", rev, "err", err)
		return
	}
	c.log.Debug("etcd's history compacted", "endpoints", strings.Join(c.eps, ","), "turn", k.Compact(), "revision", rev)
}
