package etcdstore

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentd/agentd/workspace/storage"
)

// Fencing (docs/team.md, "Fencing"): every write of a daemon carries its
// lease. A commit's Txn compares, besides the session's revision, that the
// daemon's live key is still attached to the lease it holds; once the
// lease is gone (the daemon was stopped or cut off for longer than
// LeaseTTL, and the other daemons took it for gone and ended its turns)
// no write of it is applied. It then registers again under a new identity
// (Options.NewIdentity), in every team of the cluster at once (lease.go),
// before it writes again, and tells the workspace of each folder that its
// old identity is gone (Options.PeerGone), which ends the turns it left
// under that identity as another daemon would.

// identity is this daemon's live key name now (the cluster's, lease.go);
// "" for a one-shot command.
func (s *Store) identity() string {
	if s.on.Identity == "" {
		return ""
	}
	_, id := s.cluster.reg.held()
	return id
}

// fenceOps is what a commit adds for its fencing: the compare that this
// daemon's live key is attached to its lease, and the read of that key
// for the Else branch.
type fenceOps struct {
	cmp   clientv3.Cmp
	get   clientv3.Op
	lease clientv3.LeaseID
}

// leaseCompare is the compare a commit adds: this daemon's live key is
// attached to its lease. ok is false when the daemon holds no lease it
// could write under (it was lost: the commit is refused unsent); a
// one-shot command, which has no lease, compares nothing (compare false).
func (s *Store) leaseCompare() (f fenceOps, compare, ok bool) {
	if s.on.Identity == "" {
		return f, false, true
	}
	lease, id := s.cluster.reg.held()
	if lease == 0 {
		return f, true, false
	}
	key := s.keys.live(id)
	return fenceOps{cmp: clientv3.Compare(clientv3.LeaseValue(key), "=", lease), get: clientv3.OpGet(key), lease: lease}, true, true
}

// lostLease says whether the live key read in a refused commit's Else
// branch shows the daemon's lease f.lease gone.
func (s *Store) lostLease(resp *clientv3.TxnResponse, f fenceOps) bool {
	// The live key's read is the last of the commit's own else reads;
	// sendWrite's read of the write's mark follows it.
	kvs := resp.Responses[len(resp.Responses)-2].GetResponseRange().Kvs
	return len(kvs) == 0 || clientv3.LeaseID(kvs[0].Lease) != f.lease
}

// fence answers a commit of p that found the daemon's lease lost: nothing
// was written. The daemon registers again, in every team of the cluster
// (lease.go), and, once it has, the commit is refused as a conflict with
// the session as etcd holds it now (p.Fresh), so that the change is made
// again on it, under the new identity; until it has, the write is refused
// as unavailable.
func (s *Store) fence(ctx context.Context, p *storage.Commit) error {
	_ = s.cluster.reregister()
	if lease, _ := s.cluster.reg.held(); lease == 0 {
		return &storage.Error{Code: storage.CodeUnavailable, Err: storage.ErrNotSaved,
			Msg: fmt.Sprintf("session %q of workspace %s was not written: this agentd lost its lease on the team's etcd (it was stopped or cut off for longer than %v, so the other daemons took it for gone and may have ended its turns) and cannot register again yet; try again (docs/team.md, \"Fencing\")", p.Session, s.on.Root, LeaseTTL)}
	}
	resp, err := s.cli.Do(ctx, s.sessionOp(p.Session))
	if err != nil {
		return s.unavailable(fmt.Sprintf("reading session %q again after registering again", p.Session), err, true)
	}
	p.Fresh = s.recordOf(p.Session, resp.Get().Kvs)
	return storage.ErrConflict
}
