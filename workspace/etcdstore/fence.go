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
// (Options.NewIdentity) before it writes again, and tells the workspace
// that its old identity is gone (Options.PeerGone), which ends the turns
// it left under that identity as another daemon would.

// identity is this daemon's live key name now; "" for a one-shot command.
func (s *Store) identity() string {
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	return s.id
}

// leaseCompare is the compare a commit adds: this daemon's live key is
// attached to its lease. ok is false when the daemon holds no lease it
// could write under (it was lost: the commit is refused unsent); a
// one-shot command, which has no lease, compares nothing.
func (s *Store) leaseCompare() (cmp clientv3.Cmp, get clientv3.Op, compare, ok bool) {
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	if s.id == "" {
		return clientv3.Cmp{}, clientv3.Op{}, false, true
	}
	if s.lease == 0 {
		return clientv3.Cmp{}, clientv3.Op{}, true, false
	}
	key := s.keys.live(s.id)
	return clientv3.Compare(clientv3.LeaseValue(key), "=", s.lease), clientv3.OpGet(key), true, true
}

// lostLease says whether the live key read in a refused commit's Else
// branch shows the daemon's lease gone.
func (s *Store) lostLease(resp *clientv3.TxnResponse) bool {
	// The live key's read is the last of the commit's own else reads;
	// sendWrite's read of the write's mark follows it.
	kvs := resp.Responses[len(resp.Responses)-2].GetResponseRange().Kvs
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	return len(kvs) == 0 || clientv3.LeaseID(kvs[0].Lease) != s.lease
}

// dropLease records that the daemon's lease is lost, as its keepalive
// would once it notices.
func (s *Store) dropLease() {
	s.liveMu.Lock()
	s.lease = 0
	s.liveMu.Unlock()
}

// fence answers a commit of p that found the daemon's lease lost: nothing
// was written. The daemon registers again (reregister) and, once it has,
// the commit is refused as a conflict with the session as etcd holds it
// now (p.Fresh), so that the change is made again on it, under the new
// identity; until it has, the write is refused as unavailable.
func (s *Store) fence(ctx context.Context, p *storage.Commit) error {
	s.reregister()
	s.liveMu.Lock()
	held := s.lease != 0
	s.liveMu.Unlock()
	if !held {
		return &storage.Error{Code: storage.CodeUnavailable, Err: storage.ErrNotSaved,
			Msg: fmt.Sprintf("session %q of workspace %s was not written: this agentd lost its lease on the team's etcd (it was stopped or cut off for longer than %v, so the other daemons took it for gone and may have ended its turns) and cannot register again yet; try again (docs/team.md, \"Fencing\")", p.Session, s.on.Root, LeaseTTL)}
	}
	resp, err := s.cli.Get(ctx, s.keys.Session(p.Session))
	if err != nil {
		return s.unavailable(fmt.Sprintf("reading session %q again after registering again", p.Session), err, true)
	}
	p.Fresh = storage.Record{}
	if len(resp.Kvs) == 1 {
		p.Fresh = storage.Record{Data: resp.Kvs[0].Value, Version: resp.Kvs[0].ModRevision}
	}
	return storage.ErrConflict
}

// reregister takes a new lease under a new identity once the daemon's
// lease is lost, and then tells the workspace that its old identity is
// gone (its turns are ended as another daemon's would be). One at a time;
// nothing when the lease is held or the store is closing.
func (s *Store) reregister() {
	s.regMu.Lock()
	defer s.regMu.Unlock()
	s.liveMu.Lock()
	old, lost := s.id, s.lease == 0
	s.liveMu.Unlock()
	if old == "" || !lost || s.ctx.Err() != nil {
		return
	}
	fresh := old // without NewIdentity (a store of the package's tests), the same one
	if s.on.NewIdentity != nil {
		fresh = s.on.NewIdentity(old)
	}
	ctx, cancel := context.WithTimeout(s.ctx, OpTimeout)
	defer cancel()
	if err := s.takeLease(ctx, fresh); err != nil {
		s.on.Log.Warn("cannot register again with the team's etcd after the lease was lost", "workspace", s.on.Root, "team", s.on.ID, "err", err)
		return
	}
	if fresh == old {
		return
	}
	s.on.Log.Warn("this agentd lost its lease on the team's etcd and registered again under a new identity; the turns of the old one are ended", "workspace", s.on.Root, "team", s.on.ID, "old", old, "new", fresh)
	s.peerGone(old)
}
