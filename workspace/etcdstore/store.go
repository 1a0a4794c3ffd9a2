// Package etcdstore is the store of a team folder (docs/team.md): a
// folder whose .agentd/team.json names a team id and etcd endpoints keeps
// its sessions and history in that etcd cluster, under /agentd/<team id>/
// (keys.go), instead of its bbolt file. Every daemon that opens a folder
// with that file, on any machine and whatever the folder's path there,
// serves the same state; the records are the bytes workspace gives it,
// opaque here. A watch per team relays the changes of other daemons, and
// a lease per daemon and cluster (its live keys) tells the others it is
// alive.
//
// It holds no pointer back into workspace: what it needs of the folder it
// serves (its name for messages, the clock, the store's bounds, where the
// changes of other daemons go) comes in through Options. Reading the team
// file and dialing the cluster are the registry's (workspace/teamconfig.go);
// this package starts from a dialed client.
//
// It imports workspace/storage and the etcd client (with its error
// values, rpctypes) only.
package etcdstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentd/agentd/workspace/storage"
)

// LeaseTTL is the time-to-live of the lease a daemon holds on each cluster
// it has team folders on (its live keys, lease.go): when the daemon dies its lease
// expires within this time, and another daemon applies the restart rule to
// the turns it left live (docs/team.md, "Liveness").
const LeaseTTL = 5 * time.Second

// Bounds of etcd calls: each call gets OpTimeout before it fails with
// storage.CodeUnavailable; a client is dialed with DialTimeout;
// reachability is probed every probeInterval (cluster.go).
const (
	OpTimeout     = 2 * time.Second
	DialTimeout   = 2 * time.Second
	probeInterval = time.Second
	retryInterval = 200 * time.Millisecond
)

// Options is what a Store needs of the folder it serves.
type Options struct {
	ID        string   // the team id
	Endpoints []string // the endpoints dialed, for messages
	Identity  string   // this daemon's live key name; "" for a one-shot command
	Schema    uint32   // the schema version this build writes (the meta key)
	Root      string   // the folder, for messages
	Now       func() time.Time
	Log       *slog.Logger
	// Limits returns the store's bounds; called on every commit.
	Limits func() storage.Limits
	// Remote applies a session write another daemon made (from the
	// watch): what it wrote of the session's record (the parts it put,
	// each at its version; or, written by an earlier agentd, the whole
	// record), and the change flags and history event written in the same
	// transaction (nil when there were none; the flags are those of the
	// session's last change, whose revision the caller checks).
	Remote func(name string, rec storage.Record, flags, event []byte)
	// Stale tells clients that the store became stale or fresh again.
	Stale func(stale bool)
	// PeerGone, if set, is told that another daemon's lease is gone, and
	// this daemon's old identity once it registered again under a new one
	// (fence.go).
	PeerGone func(identity string)
	// CompactInterval, if set, replaces CompactInterval (tests).
	CompactInterval time.Duration
	// NewIdentity, if set, gives this daemon a new identity after its
	// lease was lost, in place of old (fence.go); without it the daemon
	// does not register again.
	NewIdentity func(old string) string
}

// Store is the store of a team folder.
type Store struct {
	on      Options
	cluster *Cluster
	cli     *clientv3.Client // cluster's
	keys    Keys
	detach  func() // from cluster (Serve)

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	stale atomic.Bool
	sub   *watchSub // the team's watch (watch.go)

	histMu sync.Mutex
	hist   map[string]*histIndex // by session; each used under its session lock

	liveMu sync.Mutex
	live   map[string]bool // live keys seen (daemon identities)

	from int64 // the revision the watch starts from (Serve)

	turn turns // this daemon's turns on busy sessions (turn.go)
}

// Open opens the team store on the shared client c, whose reference it
// owns from then on (Close releases it; so does a failure to open): it
// subscribes to the team's watch, checks (or writes) the team's meta key,
// reads the live daemons and joins the cluster's lease (lease.go). The
// cluster must answer (within OpTimeout): a
// folder is not served from a state nobody can read. The store relays the
// changes of other daemons from Serve on.
func Open(c *Cluster, opts Options) (*Store, error) {
	s := &Store{on: opts, cluster: c, cli: c.cli, keys: KeysOf(opts.ID), hist: map[string]*histIndex{}, live: map[string]bool{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	rev, err := s.prepare()
	if err != nil {
		s.cancel()
		c.leave(s)
		if s.sub != nil {
			c.unsubscribe(s.keys, s.sub)
		}
		c.Release()
		return nil, err
	}
	s.from = rev + 1
	return s, nil
}

// Serve starts relaying the changes of other daemons (from the revision
// Open read at) and following the cluster's prober (stale marks, the
// lease taken again); call it once, when the store serves its workspace.
func (s *Store) Serve() {
	s.wg.Add(1)
	go s.relay(s.from)
	s.detach = s.cluster.attach(&clusterUser{stale: s.setStale})
	if s.on.Identity != "" {
		s.cluster.startCompaction(s.on.CompactInterval)
	}
}

// ID is the team id.
func (s *Store) ID() string { return s.on.ID }

// prepare subscribes to the team's watch, checks (or writes) the team's
// meta key, reads the live daemons and joins the daemon's lease; it
// returns the revision read at.
func (s *Store) prepare() (int64, error) {
	ctx, cancel := context.WithTimeout(s.ctx, OpTimeout)
	defer cancel()
	sub, err := s.cluster.subscribe(ctx, s.keys)
	if err != nil {
		return 0, s.unavailable("opening the team state", err, false)
	}
	s.sub = sub
	meta, _ := json.Marshal(Meta{Schema: s.on.Schema})
	txn := func(then ...clientv3.Op) (*clientv3.TxnResponse, error) {
		return s.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(s.keys.Meta()), "=", 0)).
			Then(then...).Else(clientv3.OpGet(s.keys.Meta())).Commit()
	}
	resp, err := txn(clientv3.OpPut(s.keys.Meta(), string(meta)))
	if err != nil && noSpace(err) {
		// A full etcd refuses a Txn that may write; reads go on
		// (docs/team.md, "A full etcd").
		resp, err = txn()
	}
	if err != nil {
		return 0, s.unavailable("opening the team state", err, false)
	}
	if !resp.Succeeded {
		var m Meta
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 1 {
			if err := json.Unmarshal(kvs[0].Value, &m); err != nil {
				return 0, &storage.Error{Code: storage.CodeCorrupt, Err: err, Msg: fmt.Sprintf("the team meta key %s of workspace %s cannot be read: %v", s.keys.Meta(), s.on.Root, err)}
			}
		}
		if m.Schema > s.on.Schema {
			return 0, &storage.Error{Code: storage.CodeCorrupt,
				Msg: fmt.Sprintf("the team state %s of workspace %s was written by a newer agentd (schema %d > %d); upgrade agentd to open it", s.keys.prefix, s.on.Root, m.Schema, s.on.Schema)}
		}
		if len(kvs) == 1 && m.Schema < s.on.Schema {
			// Raised, so that an earlier agentd refuses the team from now
			// on; another daemon raising it first is as good.
			_, _ = s.cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(s.keys.Meta()), "=", kvs[0].ModRevision)).
				Then(clientv3.OpPut(s.keys.Meta(), string(meta))).Commit()
		}
	}
	// Read at the newest revision, not the meta Txn's: a compaction of
	// the cluster between the two (another team's daemon, docs/team.md "A
	// full etcd") would refuse a read at the Txn's. The open goes on from
	// the revision the live daemons were read at.
	lives, err := s.cli.Get(ctx, s.keys.lives(), clientv3.WithPrefix())
	if err != nil {
		return 0, s.unavailable("reading the live daemons", err, false)
	}
	rev := lives.Header.Revision
	s.liveMu.Lock()
	for _, kv := range lives.Kvs {
		s.live[s.liveName(string(kv.Key))] = true
	}
	s.liveMu.Unlock()
	if s.on.Identity != "" {
		switch err := s.cluster.join(ctx, s); {
		case err != nil && noSpace(err):
			// Served without a lease until the cluster has room again:
			// the probe takes it then.
			s.on.Log.Warn("etcd's database is full: the folder is served without this daemon's lease until it has room", "workspace", s.on.Root, "team", s.on.ID)
		case err != nil:
			return 0, s.unavailable("taking the daemon's lease", err, false)
		}
	}
	return rev, nil
}

func (s *Store) liveName(key string) string {
	name, _ := url.PathUnescape(strings.TrimPrefix(key, s.keys.lives()))
	return name
}

// liveInfo is the value of a daemon's live key.
type liveInfo struct {
	Pid       int       `json:"pid"`
	StartedAt time.Time `json:"startedAt"`
}

// Alive says whether the daemon of that identity (a service clock) holds
// its lease, asking etcd (a linearizable read); when etcd does not answer,
// from the live keys last seen.
func (s *Store) Alive(identity string) bool {
	ctx, cancel := s.opCtx()
	defer cancel()
	resp, err := s.cli.Get(ctx, s.keys.live(identity), clientv3.WithCountOnly())
	if err != nil {
		return s.seenAlive(identity)
	}
	return resp.Count > 0
}

// seenAlive reports whether identity's live key is known.
func (s *Store) seenAlive(identity string) bool {
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	return s.live[identity]
}

// Stale says whether the store's state may be behind: a store that cannot
// reach etcd serves the last state it saw (docs/team.md, "Faults").
func (s *Store) Stale() bool { return s.stale.Load() }

func (s *Store) setStale(v bool) {
	if s.stale.Swap(v) == v {
		return
	}
	if v {
		s.on.Log.Warn("etcd unreachable: serving the last known state, marked stale", "workspace", s.on.Root, "team", s.on.ID)
	} else {
		s.on.Log.Info("etcd reachable again", "workspace", s.on.Root, "team", s.on.ID)
	}
	s.on.Stale(v)
}

// unavailable is the error of an etcd call that failed: CodeUnavailable;
// write says whether a change was refused (it then wraps ErrNotSaved). It
// marks nothing: one failed request is not an outage, and the cluster's
// prober marks the store stale after a sustained one (cluster.go).
func (s *Store) unavailable(what string, err error, write bool) error {
	if s.ctx.Err() != nil {
		return fmt.Errorf("workspace %s: %w", s.on.Root, storage.ErrClosed)
	}
	cause := err
	if write {
		cause = fmt.Errorf("%w: %w", storage.ErrNotSaved, err)
	}
	return &storage.Error{Code: storage.CodeUnavailable, Err: cause,
		Msg: fmt.Sprintf("workspace %s is shared through etcd (team %s at %s), which did not answer or refused this machine: %s failed: %v; nothing was written locally; check the cluster or this machine's etcd settings (docs/team.md)",
			s.on.Root, s.on.ID, strings.Join(s.on.Endpoints, ","), what, err)}
}

func (s *Store) opCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(s.ctx, OpTimeout)
}

func (s *Store) History(name string, limit int, before uint64) ([][]byte, bool, error) {
	ctx, cancel := s.opCtx()
	defer cancel()
	end := clientv3.GetPrefixRangeEnd(s.keys.history(name))
	if before > 0 {
		end = s.keys.Event(name, before)
	}
	resp, err := s.cli.Get(ctx, s.keys.history(name), clientv3.WithRange(end),
		clientv3.WithSort(clientv3.SortByKey, clientv3.SortDescend), clientv3.WithLimit(int64(limit)+1))
	if err != nil {
		return nil, false, s.unavailable(fmt.Sprintf("reading the history of session %q", name), err, false)
	}
	var raw [][]byte
	size := 0
	for _, kv := range resp.Kvs {
		if len(raw) == limit || len(raw) > 0 && size+len(kv.Value) > storage.MaxHistoryPageBytes {
			return raw, true, nil
		}
		size += len(kv.Value)
		raw = append(raw, kv.Value)
	}
	return raw, false, nil
}

// Commit writes p in one Txn, one round trip (keys.go), if the session's
// whole record is still at version p.Base, each part p read still at its
// version, and no other daemon holds its turn (turn.go).
// Besides the first write of a session with an event, which reads its
// stored history first, and a new session, whose commit counts the stored
// ones first, it makes no other call.
func (s *Store) Commit(p *storage.Commit) error {
	ctx, cancel := s.opCtx()
	defer cancel()
	lim := s.on.Limits()
	idx, err := s.beforeCommit(ctx, p, lim)
	if err != nil {
		return err
	}
	fo, fencing, held := s.leaseCompare()
	if !held {
		return s.fence(ctx, p)
	}
	w := s.writeOps(p, idx, lim)
	cmp := append(s.readCompares(p), s.turnCompare(p.Session))
	if fencing {
		cmp = append(cmp, fo.cmp)
	}
	take, taking := s.takeTurnOp(p.Session)
	elseOps := func(taking bool) []clientv3.Op {
		ops := []clientv3.Op{s.sessionOp(p.Session), clientv3.OpGet(s.keys.turn(p.Session))}
		if taking {
			ops = append(ops, take)
		}
		if fencing {
			ops = append(ops, fo.get) // last of these: lostLease reads it
		}
		return ops
	}
	mark := s.markOf(p, w)
	deadline, _ := ctx.Deadline()
	out, err := sendWrite(s.ctx, s.cli, deadline, cmp, w.ops, elseOps(taking), mark)
	if taking && errors.Is(err, rpctypes.ErrLeaseNotFound) {
		// The daemon's lease expired before its keepalive noticed: etcd
		// refused the whole Txn (nothing was applied); refused without
		// taking the turn, the session is read again.
		taking = false
		out, err = sendWrite(s.ctx, s.cli, deadline, cmp, w.ops, elseOps(false), mark)
	}
	if err != nil {
		return s.writeFailed(fmt.Sprintf("writing session %q", p.Session), err, out.sent)
	}
	resp := out.resp
	if out.mine {
		// An earlier copy of this write was applied: the else branch's
		// reads are not the Then branch's, so nothing is learnt from them.
		resp.Succeeded, resp.Header.Revision, w.learn = true, out.version, false
	}
	if !resp.Succeeded {
		if fencing && s.lostLease(resp, fo) {
			s.cluster.dropLease(fo.lease)
			return s.fence(ctx, p)
		}
		return s.refused(p, resp, taking)
	}
	p.Version = resp.Header.Revision
	s.committed(p.Session)
	if p.Event != nil {
		if w.learn {
			for _, kv := range resp.Responses[0].GetResponseRange().Kvs {
				s.learn(p.Session, idx, string(kv.Key), len(kv.Value), p.Event.Seq)
			}
		}
		idx.add(0, p.Event.Seq, int64(len(w.event)))
		idx.dropBelow(w.cut)
	}
	return nil
}

// beforeCommit makes the calls a commit of p needs before its Txn: a new
// session counts the stored ones (the limit), and the first write of a
// session with an event reads its stored history; it returns the
// session's history index.
func (s *Store) beforeCommit(ctx context.Context, p *storage.Commit, lim storage.Limits) (*histIndex, error) {
	if newSession(p) {
		n, err := s.countSessions(ctx)
		if err != nil {
			return nil, s.unavailable(fmt.Sprintf("counting the sessions to store session %q", p.Session), err, true)
		}
		if n >= lim.MaxSessions {
			return nil, &storage.LimitError{Session: p.Session, Stored: n, Max: lim.MaxSessions}
		}
	}
	idx := s.index(p.Session)
	if p.Event != nil && !idx.loaded {
		if err := s.catchUp(ctx, p.Session, idx, lim); err != nil {
			return nil, s.unavailable(fmt.Sprintf("reading the history of session %q", p.Session), err, true)
		}
	}
	return idx, nil
}

// commitOps is what a commit writes when it succeeds.
type commitOps struct {
	ops   []clientv3.Op
	learn bool   // ops[0] reads the events of other daemons not in the index
	event []byte // the event's record
	cut   uint64 // the events below this seq are deleted (0: none)
}

// writeOps builds the Then branch of p's Txn: read the events idx does
// not know yet (other daemons wrote them), put the record, the event and
// its flags, delete the history beyond its bounds as idx knows it, and
// release the session's turn when this daemon holds it. The events not
// known yet are counted by the next commit: with them the history may
// pass MaxHistoryBytes by their size until then, never MaxHistory.
func (s *Store) writeOps(p *storage.Commit, idx *histIndex, lim storage.Limits) commitOps {
	var w commitOps
	ev := p.Event
	if ev != nil && idx.last+1 < ev.Seq {
		w.learn = true
		w.ops = append(w.ops, clientv3.OpGet(s.keys.Event(p.Session, idx.last+1),
			clientv3.WithRange(s.keys.Event(p.Session, ev.Seq)), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend)))
	}
	for _, part := range slices.Sorted(maps.Keys(p.Parts)) {
		w.ops = append(w.ops, clientv3.OpPut(s.keys.Part(p.Session, part), string(p.Parts[part])))
	}
	if p.Base != 0 {
		w.ops = append(w.ops, clientv3.OpDelete(s.keys.Session(p.Session)))
	}
	if ev != nil {
		w.event = ev.Encode(ev.Seq)
		w.ops = append(w.ops, clientv3.OpPut(s.keys.Event(p.Session, ev.Seq), string(w.event)), clientv3.OpPut(s.keys.change(p.Session), string(p.Flags)))
		if keep := idx.keepFrom(ev.Seq, int64(len(w.event)), lim); keep > 0 {
			w.cut = idx.seqs[keep-1] + 1
			w.ops = append(w.ops, clientv3.OpDelete(s.keys.history(p.Session), clientv3.WithRange(s.keys.Event(p.Session, w.cut))))
		}
	}
	if s.held(p.Session) {
		w.ops = append(w.ops, clientv3.OpDelete(s.keys.turn(p.Session)))
	}
	return w
}

// refused is the outcome of p's Txn that failed its compares: the session
// changed, or another daemon holds its turn. It sets p.Fresh, records
// whether the Txn took the turn (taking: it tried), and when another
// daemon holds the turn waits for it to be given up first.
func (s *Store) refused(p *storage.Commit, resp *clientv3.TxnResponse, taking bool) error {
	p.Fresh = s.recordOf(p.Session, resp.Responses[0].GetResponseRange().Kvs)
	took := taking && resp.Responses[2].GetResponseTxn().Succeeded
	var holder int64 // the revision of the turn key found, 0 when none
	var mine bool    // it names this daemon
	if kvs := resp.Responses[1].GetResponseRange().Kvs; len(kvs) == 1 {
		id := s.identity()
		holder, mine = kvs[0].ModRevision, id != "" && string(kvs[0].Value) == id
	}
	switch other := s.conflicted(p.Session, took, resp.Header.Revision, holder); {
	case other && mine:
		// A turn of this daemon that it no longer counts as held (giving it
		// up failed): nobody would delete it before the lease ends.
		s.dropTurnKey(p.Session, holder)
	case other && !took:
		s.awaitTurn(p.Session, resp.Header.Revision, holder)
	}
	return storage.ErrConflict
}

func (s *Store) Close() error {
	// The last folder of the team deletes its live key, the last of the
	// cluster revokes the lease: the other daemons see this one gone at
	// once (lease.go).
	s.cluster.leave(s)
	if s.detach != nil {
		s.detach()
	}
	s.cancel()
	s.wg.Wait()
	s.cluster.unsubscribe(s.keys, s.sub)
	s.cluster.Release()
	return nil
}

// newSession says whether p stores a session for the first time: nothing
// was read of it, and it writes its head.
func newSession(p *storage.Commit) bool {
	if p.Base != 0 {
		return false
	}
	for _, v := range p.Read {
		if v != 0 {
			return false
		}
	}
	return true
}

// readCompares are the compares of what p read: the ModRevision of each
// part of p.Read, and of the whole record (0: there was none).
func (s *Store) readCompares(p *storage.Commit) []clientv3.Cmp {
	cmp := []clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(s.keys.Session(p.Session)), "=", p.Base)}
	for _, part := range slices.Sorted(maps.Keys(p.Read)) {
		cmp = append(cmp, clientv3.Compare(clientv3.ModRevision(s.keys.Part(p.Session, part)), "=", p.Read[part]))
	}
	return cmp
}

// markOf is what identifies p's write among its copies (send.go): its
// history event; for a quiet change, the first part it puts.
func (s *Store) markOf(p *storage.Commit, w commitOps) writeMark {
	if p.Event != nil {
		return writeMark{key: s.keys.Event(p.Session, p.Event.Seq), value: w.event}
	}
	parts := slices.Sorted(maps.Keys(p.Parts))
	if len(parts) == 0 {
		return writeMark{key: s.keys.Session(p.Session)}
	}
	return writeMark{key: s.keys.Part(p.Session, parts[0]), value: p.Parts[parts[0]]}
}
