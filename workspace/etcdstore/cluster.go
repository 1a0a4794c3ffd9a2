package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"

	"github.com/agentd/agentd/workspace/storage"
)

// One etcd client per cluster (docs/team.md, "Faults"): every team folder
// a daemon serves from the same endpoints with the same settings shares
// one client, its connections (one per member), one lease (lease.go), one
// watch per team (watch.go) and one prober. The prober reads once per probeInterval through each member on
// a connection of its own, whatever the number of folders, and from those
// answers:
//
//   - a member that gives no answer to two probes in a row (a hung
//     machine: TCP open, no bytes back) has the shared client's connections
//     to it closed, and closed again at each probe while it stays so, so
//     that requests, watches and lease keep-alives move to the other
//     members at once instead of waiting on it. gRPC's keepalive
//     (keepAliveTime) is the backstop, but it cannot ping more often
//     than every 10 s;
//   - the cluster is unreachable when no member answers a linearizable
//     read, and the folders are marked stale once it has been so for
//     staleAfter probes in a row: one failed request or probe marks
//     nothing (hysteresis), one answer clears the mark.
const (
	probeTimeout  = time.Second
	hungAfter     = 2 // failed probes of a member before its connections are closed
	staleAfter    = 2 // probes of the cluster without an answer before the folders are stale
	keepAliveTime = 10 * time.Second
	keepAliveWait = 3 * time.Second
)

// Clients are a daemon's etcd clients, one per cluster; the zero value is
// empty and ready.
type Clients struct {
	mu sync.Mutex
	m  map[string]*Cluster
}

// Cluster is the shared client of one cluster and its prober; Open takes
// it, Store.Close gives it back.
type Cluster struct {
	pool *Clients
	key  string
	cli  *clientv3.Client
	eps  []string
	log  *slog.Logger

	conns   connSet
	members []*memberProbe

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	reg         registration // the daemon's lease and live keys (lease.go)
	compactOnce sync.Once    // starts the compaction of its history (compact.go)

	watchMu sync.Mutex
	watches map[Keys]*teamWatch // one per team served (watch.go)

	mu          sync.Mutex
	refs        int                   // guarded by pool.mu
	users       map[*clusterUser]bool // the folders it serves
	stale       bool
	unreachable int // probes in a row that no member answered
}

// clusterUser is what a folder on a cluster is told: stale when the
// cluster's mark changes. Its calls are made under mu, which detach
// takes: none is made after it.
type clusterUser struct {
	stale func(bool)

	mu       sync.Mutex
	detached bool
}

func (u *clusterUser) tell(stale bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.detached {
		u.stale(stale)
	}
}

// memberProbe probes one member through a client of its own (its own
// connection: a hung member must not take the probe of another with it).
type memberProbe struct {
	ep, addr string
	cfg      clientv3.Config
	cli      *clientv3.Client // nil until made (with credentials, making it needs the member)
	fails    int
	hung     bool
}

// Get returns the shared client of the cluster that cfg reaches, making it
// on first use; key names cfg's endpoints and settings (the same key, the
// same client). Release gives it back.
func (p *Clients) Get(key string, cfg clientv3.Config, log *slog.Logger) (*Cluster, error) {
	eps := cfg.Endpoints
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.m[key]; c != nil {
		c.refs++
		return c, nil
	}
	c := &Cluster{pool: p, key: key, eps: eps, log: log, users: map[*clusterUser]bool{}, refs: 1, watches: map[Keys]*teamWatch{}}
	c.reg.stores = map[*Store]bool{}
	c.conns.m = map[*trackedConn]string{}
	for _, ep := range eps {
		mcfg := cfg
		mcfg.Endpoints = []string{ep}
		u, err := url.Parse(ep)
		if err != nil {
			return nil, err
		}
		c.members = append(c.members, &memberProbe{ep: ep, addr: u.Host, cfg: mcfg})
	}
	cfg.DialKeepAliveTime, cfg.DialKeepAliveTimeout, cfg.PermitWithoutStream = keepAliveTime, keepAliveWait, true
	cfg.DialOptions = append(cfg.DialOptions, grpc.WithContextDialer(c.conns.dial))
	var err error
	if c.cli, err = NewClient(cfg); err != nil {
		return nil, err
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.wg.Go(c.probeLoop)
	if p.m == nil {
		p.m = map[string]*Cluster{}
	}
	p.m[key] = c
	return c, nil
}

// NewClient makes a client of cfg (with credentials, it authenticates
// within cfg.DialTimeout).
func NewClient(cfg clientv3.Config) (*clientv3.Client, error) {
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, &storage.Error{Code: storage.CodeUnavailable, Err: err, Msg: fmt.Sprintf("cannot connect to etcd %s: %v", strings.Join(cfg.Endpoints, ","), err)}
	}
	return cli, nil
}

// Release gives back what Get returned; the last release closes the
// client and its prober.
func (c *Cluster) Release() {
	c.pool.mu.Lock()
	c.refs--
	last := c.refs == 0
	if last {
		delete(c.pool.m, c.key)
	}
	c.pool.mu.Unlock()
	if !last {
		return
	}
	c.cancel()
	c.wg.Wait()
	for _, m := range c.members {
		if m.cli != nil {
			_ = m.cli.Close()
		}
	}
	_ = c.cli.Close()
}

// attach has u told of the cluster's state until the returned detach.
func (c *Cluster) attach(u *clusterUser) (detach func()) {
	c.mu.Lock()
	c.users[u] = true
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.users, u)
		c.mu.Unlock()
		u.mu.Lock()
		u.detached = true
		u.mu.Unlock()
	}
}

// probeLoop probes every member once per probeInterval until the
// client closes.
func (c *Cluster) probeLoop() {
	tick := time.NewTicker(probeInterval)
	defer tick.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-tick.C:
		}
		answered := c.probeMembers()
		if c.ctx.Err() != nil {
			return
		}
		if !answered {
			// gRPC's backoff between attempts grows to two minutes: after an
			// outage of half a minute the cluster, back, was reached only
			// some 10 s later (docs/team.md, "Faults").
			c.cli.ActiveConnection().ResetConnectBackoff()
		}
		c.setReachable(answered)
		if answered {
			// A lease lost while the cluster was away is taken again,
			// once for every folder of the cluster (lease.go).
			_ = c.reregister()
		}
	}
}

// probeMembers reads once through each member, all at once, and closes
// the shared client's connections to a member that stopped answering. It
// says whether any member answered: a linearizable read needs a leader
// and a quorum, so one answer is the cluster's.
func (c *Cluster) probeMembers() bool {
	ok := make([]bool, len(c.members))
	var wg sync.WaitGroup
	for i, m := range c.members {
		wg.Go(func() { ok[i] = m.probe(c.ctx) })
	}
	wg.Wait()
	answered := false
	for i, m := range c.members {
		answered = answered || ok[i]
		switch {
		case ok[i]:
			if m.hung {
				c.log.Info("etcd member answers again", "endpoint", m.ep)
				c.cli.ActiveConnection().ResetConnectBackoff()
			}
			m.fails, m.hung = 0, false
		default:
			if m.fails++; m.fails < hungAfter {
				continue
			}
			if !m.hung {
				c.log.Warn("etcd member does not answer: its connections are closed, requests go to the other members", "endpoint", m.ep)
			}
			m.hung = true
			c.conns.closeAddr(m.addr)
		}
	}
	return answered
}

// probe reads a key through the member alone, within probeTimeout. A
// refusal for want of permission is an answer: the member checks it after
// the read went through the cluster (as etcd's own health check counts it).
func (m *memberProbe) probe(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	if m.cli == nil {
		cli, err := NewClient(m.cfg)
		if err != nil {
			return false
		}
		m.cli = cli
	}
	_, err := m.cli.Get(ctx, "health")
	return err == nil || errors.Is(err, rpctypes.ErrPermissionDenied)
}

// setReachable records a probe of the cluster and tells the folders when
// their mark changes.
func (c *Cluster) setReachable(answered bool) {
	c.mu.Lock()
	was := c.stale
	if answered {
		c.unreachable, c.stale = 0, false
	} else {
		c.unreachable++
		c.stale = c.stale || c.unreachable >= staleAfter
	}
	if c.stale == was {
		c.mu.Unlock()
		return
	}
	users := make([]*clusterUser, 0, len(c.users))
	for u := range c.users {
		users = append(users, u)
	}
	stale := c.stale
	c.mu.Unlock()
	for _, u := range users {
		u.tell(stale)
	}
}

// connSet is the connections of a shared client, by member address.
type connSet struct {
	mu sync.Mutex
	m  map[*trackedConn]string
}

type trackedConn struct {
	net.Conn
	set  *connSet
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.set.mu.Lock()
		delete(c.set.m, c)
		c.set.mu.Unlock()
	})
	return c.Conn.Close()
}

// dial is the shared client's dialer (gRPC gives it host:port).
func (s *connSet) dial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c := &trackedConn{Conn: raw, set: s}
	s.mu.Lock()
	s.m[c] = addr
	s.mu.Unlock()
	return c, nil
}

// closeAddr closes every connection to addr: what was sent on them fails
// at once, and gRPC connects again (to a hung member, a connection that
// does not get ready, so requests go elsewhere).
func (s *connSet) closeAddr(addr string) {
	s.mu.Lock()
	var cs []*trackedConn
	for c, a := range s.m {
		if a == addr {
			cs = append(cs, c)
		}
	}
	s.mu.Unlock()
	for _, c := range cs {
		c.Close()
	}
}
