package etcdstore

import (
	"context"
	"errors"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// A fair order for a busy session (docs/team.md, "A far machine"). Every
// commit is one Txn: it compares the session key's revision and, in the
// same request, that nobody holds the session's turn key
// (/agentd/<id>/turn/<session>). A daemon far from the cluster loses every
// race against a near one that writes the same session at each step of
// its agent: by the time its write arrives, the session has changed.
// After turnAfter conflicts in a row, the conflicting Txn also takes the
// turn key, when it is free, attached to the daemon's lease (etcd's lock
// recipe, in the same round trip); from then on every other daemon's
// commit of that session fails on it and waits for the key to go before
// trying again, and the holder's next commit, made on the record the
// conflict returned, succeeds and deletes the key in its own Txn. A holder
// that ends its change without committing gives the key up (Yield); one
// that does not commit within turnHold (the daemon stalled) has it
// deleted; a dead one loses it with its lease.
const (
	turnAfter = 2
	turnHold  = 2 * time.Second
)

// turnState is a store's knowledge of its turn on one session.
type turnState struct {
	conflicts int              // commits refused in a row
	rev       int64            // the turn key's revision while this daemon holds it; 0 otherwise
	release   *time.Timer      // deletes the key after turnHold
	lease     clientv3.LeaseID // the lease the key is attached to
}

// turns guards every session's turnState.
type turns struct {
	mu sync.Mutex
	by map[string]*turnState
}

func (t *turns) of(name string) *turnState {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.by == nil {
		t.by = map[string]*turnState{}
	}
	ts := t.by[name]
	if ts == nil {
		ts = &turnState{}
		t.by[name] = ts
	}
	return ts
}

// turnCompare is the compare of a commit of session name on the turn key:
// held by this daemon at the revision it took it, or held by nobody.
func (s *Store) turnCompare(name string) clientv3.Cmp {
	key := s.keys.turn(name)
	s.turn.mu.Lock()
	defer s.turn.mu.Unlock()
	if ts := s.turn.by[name]; ts != nil && ts.rev != 0 {
		return clientv3.Compare(clientv3.ModRevision(key), "=", ts.rev)
	}
	return clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
}

// held says whether this daemon holds the turn of session name.
func (s *Store) held(name string) bool {
	s.turn.mu.Lock()
	defer s.turn.mu.Unlock()
	ts := s.turn.by[name]
	return ts != nil && ts.rev != 0
}

// takeTurnOp is the op a conflicting commit of session name adds to its
// Else branch: take the turn key if it is free, when conflicts have
// persisted; nil otherwise (or without a lease: a one-shot command).
func (s *Store) takeTurnOp(name string) (clientv3.Op, bool) {
	lease, id := s.cluster.reg.held()
	if s.on.Identity == "" {
		lease = 0 // a one-shot command holds none
	}
	ts := s.turn.of(name)
	s.turn.mu.Lock()
	defer s.turn.mu.Unlock()
	if lease == 0 || ts.rev != 0 || ts.conflicts+1 < turnAfter {
		return clientv3.Op{}, false
	}
	ts.lease = lease
	key := s.keys.turn(name)
	return clientv3.OpTxn([]clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(key), "=", 0)},
		[]clientv3.Op{clientv3.OpPut(key, id, clientv3.WithLease(lease))}, nil), true
}

// conflicted records a refused commit of session name, at revision rev;
// took says whether its Txn took the turn key, holder is the revision of
// the turn key it found (0: none). It says whether another daemon holds
// the turn.
func (s *Store) conflicted(name string, took bool, rev, holder int64) (other bool) {
	ts := s.turn.of(name)
	s.turn.mu.Lock()
	defer s.turn.mu.Unlock()
	ts.conflicts++
	if ts.rev != 0 && holder != ts.rev { // this daemon's turn was given up, or its lease lost
		ts.rev = 0
	}
	if took {
		ts.rev = rev
		ts.release = time.AfterFunc(turnHold, func() { s.giveUpTurn(name, rev) })
	}
	return holder != 0 && holder != ts.rev
}

// committed records a commit of session name, which released the turn
// key if this daemon held it.
func (s *Store) committed(name string) {
	ts := s.turn.of(name)
	s.turn.mu.Lock()
	defer s.turn.mu.Unlock()
	ts.conflicts = 0
	if ts.release != nil {
		ts.release.Stop()
	}
	ts.rev, ts.release = 0, nil
}

// Yield gives up this daemon's turn on session name, if it holds it: its
// caller ends a change without the commit that would have released it (the
// change came to nothing on the record the conflict returned, or failed),
// so that other daemons do not wait turnHold for it.
func (s *Store) Yield(name string) {
	s.turn.mu.Lock()
	ts := s.turn.by[name]
	rev := int64(0)
	if ts != nil {
		rev = ts.rev
		if ts.release != nil {
			ts.release.Stop()
		}
	}
	s.turn.mu.Unlock()
	if rev != 0 {
		s.giveUpTurn(name, rev)
	}
}

// giveUpTurn deletes the turn key of session name taken at rev, if it is
// still that one: its holder did not commit within turnHold.
func (s *Store) giveUpTurn(name string, rev int64) {
	s.turn.mu.Lock()
	ts := s.turn.by[name]
	if ts == nil || ts.rev != rev {
		s.turn.mu.Unlock()
		return
	}
	ts.rev, ts.release = 0, nil
	s.turn.mu.Unlock()
	s.dropTurnKey(name, rev)
}

// dropTurnKey deletes the turn key of session name if it is still the
// one written at rev.
func (s *Store) dropTurnKey(name string, rev int64) {
	ctx, cancel := s.opCtx()
	defer cancel()
	key := s.keys.turn(name)
	_, _ = s.cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", rev)).Then(clientv3.OpDelete(key)).Commit()
}

// awaitTurn waits, at most turnHold, until the turn key of session name,
// held by another daemon as of revision rev, is gone. A key still as it
// was (its revision holder) after turnHold is deleted, as its holder would
// have done: one written into etcd without agentd has no holder to give it
// up, and would hold off every write of the session for good.
func (s *Store) awaitTurn(name string, rev, holder int64) {
	ctx, cancel := context.WithTimeout(clientv3.WithRequireLeader(s.ctx), turnHold)
	defer cancel()
	for resp := range s.cli.Watch(ctx, s.keys.turn(name), clientv3.WithRev(rev+1)) {
		for _, e := range resp.Events {
			if e.Type == clientv3.EventTypeDelete {
				return
			}
		}
		if resp.Err() != nil {
			break
		}
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		s.dropTurnKey(name, holder)
	}
}
