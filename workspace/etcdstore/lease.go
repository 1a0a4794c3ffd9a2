package etcdstore

import (
	"context"
	"encoding/json"
	"os"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// One lease per daemon per cluster (docs/team.md, "Liveness"): a daemon's
// live keys, one in each team of the cluster it has a folder of, are all
// attached to one lease, which one keep-alive stream keeps alive, whatever
// the number of folders. A commit of any of those folders compares that
// its team's live key is on that lease (fence.go); once the lease is lost,
// the daemon registers again, in every team of the cluster at once, under
// a new identity.

// liveTxnOps bounds the puts of one registration Txn (etcd refuses more
// than 128 operations in one).
const liveTxnOps = 64

// registration is the daemon's lease on a cluster and the stores whose
// teams hold a live key under it.
type registration struct {
	mu     sync.Mutex
	id     string                  // the daemon's identity on the cluster ("" until a store with one joined)
	lease  clientv3.LeaseID        // 0 until granted and once lost
	renew  func(old string) string // Options.NewIdentity of the stores
	stores map[*Store]bool         // with an identity, joined and not closed

	regMu sync.Mutex // one registration (join, leave, again) at a time
}

// held returns the lease and the identity it is held under (lease 0: none).
func (r *registration) held() (clientv3.LeaseID, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lease, r.id
}

// teams returns the keys of every team a joined store serves, each once.
func (r *registration) teams() []Keys {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[Keys]bool{}
	var out []Keys
	for s := range r.stores {
		if !seen[s.keys] {
			seen[s.keys] = true
			out = append(out, s.keys)
		}
	}
	return out
}

// serves says whether a joined store other than s serves team k.
func (r *registration) serves(k Keys, s *Store) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for o := range r.stores {
		if o != s && o.keys == k {
			return true
		}
	}
	return false
}

// join registers s's daemon in s's team: the cluster's lease, granted on
// first use, with the team's live key attached. A store whose identity is
// not the cluster's (the process took a new one after a lease was lost on
// another cluster) moves the cluster to it first; one that joins while
// the lease is lost registers every team again (reregister).
func (c *Cluster) join(ctx context.Context, s *Store) error {
	r := &c.reg
	r.regMu.Lock()
	defer r.regMu.Unlock()
	r.mu.Lock()
	had := len(r.stores) > 0
	if !had {
		r.id = s.on.Identity
	}
	if r.renew == nil {
		r.renew = s.on.NewIdentity
	}
	first := true
	for o := range r.stores {
		first = first && o.keys != s.keys
	}
	r.stores[s] = true
	lease, id := r.lease, r.id
	r.mu.Unlock()
	switch {
	case lease == 0 && had:
		return c.again()
	case lease == 0:
		return c.register(ctx, id)
	case id != s.on.Identity:
		return c.moveTo(ctx, s.on.Identity)
	case first:
		return c.putLive(ctx, []Keys{s.keys}, id, lease)
	}
	return nil
}

// leave takes s out of the registration (Store.Close): the last store of
// its team deletes the team's live key, so the other daemons see this one
// gone at once, and the last store of all revokes the lease.
func (c *Cluster) leave(s *Store) {
	r := &c.reg
	r.regMu.Lock()
	defer r.regMu.Unlock()
	r.mu.Lock()
	if !r.stores[s] {
		r.mu.Unlock()
		return
	}
	delete(r.stores, s)
	last := len(r.stores) == 0
	lease, id := r.lease, r.id
	if last {
		r.lease = 0
	}
	r.mu.Unlock()
	if lease == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	switch {
	case last:
		_, _ = c.cli.Revoke(ctx, lease)
	case !r.serves(s.keys, s):
		_, _ = c.cli.Delete(ctx, s.keys.live(id))
	}
}

// register grants a lease, puts the live key of identity in every team a
// store serves under it, and keeps it alive until the cluster closes or
// the lease is lost; identity is the daemon's from then on. A registration
// that fails half way revokes what it granted.
func (c *Cluster) register(ctx context.Context, identity string) error {
	l, err := c.cli.Grant(ctx, int64(LeaseTTL/time.Second))
	if err != nil {
		return err
	}
	if err := c.putLive(ctx, c.reg.teams(), identity, l.ID); err != nil {
		_, _ = c.cli.Revoke(ctx, l.ID)
		return err
	}
	ka, err := c.cli.KeepAlive(c.ctx, l.ID)
	if err != nil {
		return err
	}
	c.reg.mu.Lock()
	c.reg.lease, c.reg.id = l.ID, identity
	c.reg.mu.Unlock()
	c.wg.Go(func() {
		for range ka { // closed when the lease is gone or the cluster closes
		}
		c.dropLease(l.ID)
	})
	return nil
}

// putLive puts identity's live key in each team of keys, attached to lease.
func (c *Cluster) putLive(ctx context.Context, keys []Keys, identity string, lease clientv3.LeaseID) error {
	info, _ := json.Marshal(liveInfo{Pid: os.Getpid(), StartedAt: time.Now().UTC()})
	for len(keys) > 0 {
		n := min(len(keys), liveTxnOps)
		ops := make([]clientv3.Op, n)
		for i, k := range keys[:n] {
			ops[i] = clientv3.OpPut(k.live(identity), string(info), clientv3.WithLease(lease))
		}
		if _, err := c.cli.Txn(ctx).Then(ops...).Commit(); err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}

// dropLease records that lease is lost, as the keep-alive does once it
// notices; nothing if the daemon holds another one by now.
func (c *Cluster) dropLease(lease clientv3.LeaseID) {
	c.reg.mu.Lock()
	if c.reg.lease == lease {
		c.reg.lease = 0
	}
	c.reg.mu.Unlock()
}

// reregister takes a new lease under a new identity (Options.NewIdentity;
// without it, the same) once the daemon's lease is lost, with the live
// key of every team of the cluster, then tells every store that its old
// identity is gone (its turns are ended as another daemon's would be) and
// moves the daemon's other clusters to the new identity. Nothing when the
// lease is held, no store has joined, or the cluster is closing.
func (c *Cluster) reregister() error {
	c.reg.regMu.Lock()
	defer c.reg.regMu.Unlock()
	return c.again()
}

// again is reregister under regMu.
func (c *Cluster) again() error {
	r := &c.reg
	r.mu.Lock()
	old, lost, joined, renew := r.id, r.lease == 0, len(r.stores) > 0, r.renew
	r.mu.Unlock()
	if !lost || !joined || c.ctx.Err() != nil {
		return nil
	}
	fresh := old
	if renew != nil {
		fresh = renew(old)
	}
	ctx, cancel := context.WithTimeout(c.ctx, OpTimeout)
	defer cancel()
	if err := c.register(ctx, fresh); err != nil {
		c.log.Warn("cannot register again with the team's etcd after the lease was lost", "endpoints", c.eps, "err", err)
		return err
	}
	if fresh == old {
		return nil
	}
	c.log.Warn("this agentd lost its lease on the team's etcd and registered again under a new identity; the turns of the old one are ended", "endpoints", c.eps, "old", old, "new", fresh)
	c.toldGone(old)
	go c.pool.moveAll(c, fresh)
	return nil
}

// moveTo registers the daemon under identity in place of the one it
// holds (the process took a new identity on another cluster): the old
// lease is revoked, so its live keys go for every daemon, and the stores
// are told the old identity is gone. Under regMu.
func (c *Cluster) moveTo(ctx context.Context, identity string) error {
	lease, old := c.reg.held()
	if old == identity && lease != 0 {
		return nil
	}
	if lease != 0 {
		c.dropLease(lease)
		if _, err := c.cli.Revoke(ctx, lease); err != nil {
			c.log.Warn("revoking the lease of an old identity failed; it expires within its TTL", "endpoints", c.eps, "err", err)
		}
	}
	if err := c.register(ctx, identity); err != nil {
		return err
	}
	if old != identity {
		c.toldGone(old)
	}
	return nil
}

// toldGone tells every joined store that identity is gone.
func (c *Cluster) toldGone(identity string) {
	c.reg.mu.Lock()
	stores := make([]*Store, 0, len(c.reg.stores))
	for s := range c.reg.stores {
		stores = append(stores, s)
	}
	c.reg.mu.Unlock()
	for _, s := range stores {
		s.peerGone(identity)
	}
}

// moveAll moves every cluster of the daemon but from to identity, the
// process's new one: one identity per process, in every team.
func (p *Clients) moveAll(from *Cluster, identity string) {
	p.mu.Lock()
	var cs []*Cluster
	for _, c := range p.m {
		if c != from {
			c.refs++ // held until moved
			cs = append(cs, c)
		}
	}
	p.mu.Unlock()
	for _, c := range cs {
		c.reg.regMu.Lock()
		if _, id := c.reg.held(); id != "" && id != identity && c.ctx.Err() == nil {
			ctx, cancel := context.WithTimeout(c.ctx, OpTimeout)
			if err := c.moveTo(ctx, identity); err != nil {
				c.log.Warn("cannot register under the process's new identity", "endpoints", c.eps, "err", err)
			}
			cancel()
		}
		c.reg.regMu.Unlock()
		c.Release()
	}
}
