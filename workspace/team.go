package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/workspace/storage"
)

// Team mode (docs/team.md): a folder whose .agentd/team.json names a team id
// and etcd endpoints keeps its sessions and history in that etcd cluster,
// under /agentd/<team id>/, instead of its bbolt file. Every daemon that
// opens a folder with that file, on any machine and whatever the folder's
// path there, serves the same state; the records are the bytes bbolt keeps
// (record.go). The key layout, one place:
//
//	/agentd/<id>/meta                 {"schema": N}: the schema version (schema.go); written last by team init
//	/agentd/<id>/s/<session>          sessionRecord JSON; <session> is url.PathEscape'd (no "/")
//	/agentd/<id>/h/<session>/<seq>    eventRecord JSON; <seq> in 20 decimal digits, so key order is seq order
//	/agentd/<id>/c/<session>          changeFlags JSON of the session's last change: what other daemons tell their clients
//	/agentd/<id>/live/<daemon>        {"pid", "startedAt"}, attached to the daemon's lease (TeamLeaseTTL)
//	/agentd/<id>/compact              the revision of the last compaction; its version counts them (teamcompact.go)
//
// An Update is one Txn: compare the session key's ModRevision with the one
// it read, then put the session, its event and change flags, and delete the
// history beyond its bounds with one range delete: 4 operations (etcd
// refuses more than 128) and, for the largest session, about 0.8 MiB (etcd
// refuses requests over 1.5 MiB).

// TeamFile is the path of a folder's team file, relative to the folder.
const TeamFile = ".agentd/team.json"

// TeamLeaseTTL is the time-to-live of the lease a daemon holds on each
// team folder it has open (its live key): when the daemon dies its lease
// expires within this time, and another daemon applies the restart rule to
// the turns it left live (docs/team.md, "Liveness").
const TeamLeaseTTL = 5 * time.Second

// Bounds of etcd calls: each call gets teamOpTimeout before it fails with
// CodeUnavailable; reachability is probed every teamProbeInterval.
const (
	teamOpTimeout     = 2 * time.Second
	teamDialTimeout   = 2 * time.Second
	teamProbeInterval = time.Second
	teamRetryInterval = 200 * time.Millisecond
)

// teamKeys builds the keys of one team (see the layout above).
type teamKeys struct{ prefix string }

func keysOf(id string) teamKeys               { return teamKeys{prefix: "/agentd/" + id + "/"} }
func (k teamKeys) meta() string               { return k.prefix + "meta" }
func (k teamKeys) sessions() string           { return k.prefix + "s/" }
func (k teamKeys) session(name string) string { return k.sessions() + url.PathEscape(name) }
func (k teamKeys) history(name string) string { return k.prefix + "h/" + url.PathEscape(name) + "/" }
func (k teamKeys) event(name string, seq uint64) string {
	return fmt.Sprintf("%s%020d", k.history(name), seq)
}
func (k teamKeys) change(name string) string { return k.prefix + "c/" + url.PathEscape(name) }
func (k teamKeys) lives() string             { return k.prefix + "live/" }
func (k teamKeys) compact() string           { return k.prefix + "compact" }
func (k teamKeys) live(id string) string     { return k.lives() + url.PathEscape(id) }

// changeFlags is the value of c/<session>: what the change of Revision
// told clients, for the daemons that learn it from the watch.
type changeFlags struct {
	Revision uint64 `json:"revision"`
	Todos    bool   `json:"todos,omitempty"`
	Goal     bool   `json:"goal,omitempty"`
	TaskFile bool   `json:"taskFile,omitempty"`
	Queue    bool   `json:"queue,omitempty"`
	// Completed is Change.Completed as its snapshot's JSON (the wire form
	// of docs/protocol.md §3), GoalKind and Percent as in Change.
	Completed json.RawMessage `json:"completed,omitempty"`
	GoalKind  string          `json:"goalKind,omitempty"`
	Percent   int             `json:"percent,omitempty"`
}

// flagsOf is what other daemons of a team tell their clients of ch, the
// change of revision rev: the value of c/<session>.
func flagsOf(rev uint64, ch Change) ([]byte, error) {
	f := changeFlags{Revision: rev, Todos: ch.Todos, Goal: ch.Goal, TaskFile: ch.TaskFile,
		Queue: ch.Queue, GoalKind: string(ch.GoalKind), Percent: ch.Percent}
	if ch.Completed != nil {
		var err error
		if f.Completed, err = json.Marshal(ch.Completed); err != nil {
			return nil, err
		}
	}
	return json.Marshal(f)
}

// apply sets on ch what f says the change told clients.
func (f *changeFlags) apply(ch *Change) {
	ch.Todos, ch.Goal, ch.TaskFile, ch.Queue = f.Todos, f.Goal, f.TaskFile, f.Queue
	ch.GoalKind, ch.Percent = goal.ChangeKind(f.GoalKind), f.Percent
	if len(f.Completed) > 0 {
		var snap goal.Snapshot
		if json.Unmarshal(f.Completed, &snap) == nil {
			ch.Completed = &snap
		}
	}
}

// teamStore is the backend of a team folder.
type teamStore struct {
	on        teamHooks
	cli       *clientv3.Client
	keys      teamKeys
	id        string
	endpoints []string
	identity  string // this daemon's live key name; "" for a one-shot command

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	stale   atomic.Bool
	serving atomic.Bool // set once the store serves its workspace

	histMu sync.Mutex
	hist   map[string]*histIndex // by session; each used under its session lock

	liveMu sync.Mutex
	live   map[string]bool  // live keys seen (daemon identities)
	lease  clientv3.LeaseID // 0 until granted; guarded by liveMu
}

// teamHooks is what a team store needs of the workspace it serves, given
// when it opens: the store holds no pointer to the Workspace, so that it
// can stand in a package of its own (docs/architecture.md).
type teamHooks struct {
	root string // the folder, for messages
	path string // what names the team's state, for errors
	now  func() time.Time
	log  *slog.Logger
	// remote applies a change another daemon made (from the watch).
	remote func(name string, data []byte, ver int64, flags *changeFlags, ev []byte)
	// stale tells clients that the store became stale or fresh again.
	stale func(stale bool)
	// peerGone, if set, is told that another daemon's lease is gone.
	peerGone func(identity string)
}

// histIndex is what a team store knows of a session's stored history: the
// seq and size of each event, oldest first, to bound it as appendEvent
// does (the same rule on the same events deletes the same ones, whichever
// daemon applies it).
type histIndex struct {
	loaded bool
	seqs   []uint64
	sizes  []int64
	bytes  int64
	last   uint64 // the highest seq known
}

// openTeam opens the team store of w. The cluster must answer (within
// teamOpTimeout): a folder is not served from a state nobody can read.
func (r *Registry) openTeam(w *Workspace, t *Team) error {
	cli, eps, err := dialTeam(t, r.opts.Team)
	if err != nil {
		return err
	}
	keys := keysOf(t.ID)
	w.path = "etcd " + strings.Join(eps, ",") + " " + keys.prefix
	ts := &teamStore{on: r.teamHooks(w), cli: cli, keys: keys, id: t.ID, endpoints: eps, identity: r.opts.Identity,
		hist: map[string]*histIndex{}, live: map[string]bool{}}
	ts.ctx, ts.cancel = context.WithCancel(context.Background())
	rev, err := ts.prepare()
	if err != nil {
		ts.cancel()
		_ = cli.Close()
		return err
	}
	w.store = r.wrap(ts)
	ts.serving.Store(true)
	ts.wg.Add(2)
	go ts.watchLoop(rev + 1)
	go ts.probeLoop()
	if ts.identity != "" {
		ts.wg.Add(1)
		go ts.compactLoop()
	}
	return nil
}

// teamHooks is what the team store of w needs of it.
func (r *Registry) teamHooks(w *Workspace) teamHooks {
	h := teamHooks{root: w.root, path: w.path, now: r.now, log: r.log, remote: w.fromWatch,
		stale: func(stale bool) { r.publishStore(w, stale) }}
	if r.opts.OnPeerGone != nil {
		h.peerGone = func(identity string) { r.opts.OnPeerGone(w, identity) }
	}
	return h
}

// prepare checks (or writes) the team's meta key, reads the live daemons
// and takes this daemon's lease; it returns the revision read at.
func (t *teamStore) prepare() (int64, error) {
	ctx, cancel := context.WithTimeout(t.ctx, teamOpTimeout)
	defer cancel()
	meta, _ := json.Marshal(teamMeta{Schema: currentSchema()})
	resp, err := t.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(t.keys.meta()), "=", 0)).
		Then(clientv3.OpPut(t.keys.meta(), string(meta))).
		Else(clientv3.OpGet(t.keys.meta())).Commit()
	if err != nil {
		return 0, t.unavailable("opening the team state", err, false)
	}
	if !resp.Succeeded {
		var m teamMeta
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 1 {
			if err := json.Unmarshal(kvs[0].Value, &m); err != nil {
				return 0, &Error{Code: CodeCorrupt, Path: t.on.path, Err: err, Msg: fmt.Sprintf("the team meta key %s of workspace %s cannot be read: %v", t.keys.meta(), t.on.root, err)}
			}
		}
		if m.Schema > currentSchema() {
			return 0, &Error{Code: CodeCorrupt, Path: t.on.path,
				Msg: fmt.Sprintf("the team state %s of workspace %s was written by a newer agentd (schema %d > %d); upgrade agentd to open it", t.keys.prefix, t.on.root, m.Schema, currentSchema())}
		}
	}
	rev := resp.Header.Revision
	lives, err := t.cli.Get(ctx, t.keys.lives(), clientv3.WithPrefix(), clientv3.WithRev(rev))
	if err != nil {
		return 0, t.unavailable("reading the live daemons", err, false)
	}
	t.liveMu.Lock()
	for _, kv := range lives.Kvs {
		t.live[t.liveName(string(kv.Key))] = true
	}
	t.liveMu.Unlock()
	if t.identity != "" {
		if err := t.takeLease(ctx); err != nil {
			return 0, t.unavailable("taking the daemon's lease", err, false)
		}
	}
	return rev, nil
}

func (t *teamStore) liveName(key string) string {
	name, _ := url.PathUnescape(strings.TrimPrefix(key, t.keys.lives()))
	return name
}

// takeLease grants this daemon's lease, puts its live key and keeps the
// lease alive until the store closes.
func (t *teamStore) takeLease(ctx context.Context) error {
	l, err := t.cli.Grant(ctx, int64(TeamLeaseTTL/time.Second))
	if err != nil {
		return err
	}
	info, _ := json.Marshal(ownerInfo{Pid: os.Getpid(), StartedAt: t.on.now().UTC()})
	if _, err := t.cli.Put(ctx, t.keys.live(t.identity), string(info), clientv3.WithLease(l.ID)); err != nil {
		return err
	}
	ka, err := t.cli.KeepAlive(t.ctx, l.ID)
	if err != nil {
		return err
	}
	t.liveMu.Lock()
	t.lease = l.ID
	t.live[t.identity] = true
	t.liveMu.Unlock()
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		for range ka { // closed when the lease is gone or the store closes
		}
		t.liveMu.Lock()
		if t.lease == l.ID {
			t.lease = 0
		}
		t.liveMu.Unlock()
	}()
	return nil
}

// Alive says whether the daemon of that identity (a service clock) holds
// its lease on the team of w, asking etcd (a linearizable read); when etcd
// does not answer, from the live keys last seen. Always false for a folder
// served by bbolt.
func (w *Workspace) Alive(identity string) bool {
	t := w.team()
	if t == nil || identity == "" {
		return false
	}
	ctx, cancel := t.opCtx()
	defer cancel()
	resp, err := t.cli.Get(ctx, t.keys.live(identity), clientv3.WithCountOnly())
	if err != nil {
		return t.Alive(identity)
	}
	return resp.Count > 0
}

// Stale says whether w's state may be behind: a team store that cannot
// reach etcd serves the last state it saw (docs/team.md, "Faults"). Always
// false for bbolt.
func (w *Workspace) Stale() bool {
	t := w.team()
	return t != nil && t.stale.Load()
}

func (t *teamStore) setStale(v bool) {
	if t.stale.Swap(v) == v {
		return
	}
	if v {
		t.on.log.Warn("etcd unreachable: serving the last known state, marked stale", "workspace", t.on.root, "team", t.id)
	} else {
		t.on.log.Info("etcd reachable again", "workspace", t.on.root, "team", t.id)
	}
	t.on.stale(v)
}

// unavailable is the error of an etcd call that failed: CodeUnavailable;
// write says whether a change was refused (it then wraps ErrNotSaved). It
// marks an open store stale; a store still opening serves no state, so
// its failure to open marks nothing and tells no client.
func (t *teamStore) unavailable(what string, err error, write bool) error {
	if t.ctx.Err() != nil {
		return fmt.Errorf("workspace %s: %w", t.on.root, ErrClosed)
	}
	if t.serving.Load() {
		t.setStale(true)
	}
	cause := err
	if write {
		cause = fmt.Errorf("%w: %w", ErrNotSaved, err)
	}
	return &Error{Code: CodeUnavailable, Path: t.on.path, Err: cause,
		Msg: fmt.Sprintf("workspace %s is shared through etcd (team %s at %s), which did not answer or refused this machine: %s failed: %v; nothing was written locally; check the cluster or this machine's etcd settings (docs/team.md)",
			t.on.root, t.id, strings.Join(t.endpoints, ","), what, err)}
}

func (t *teamStore) opCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.ctx, teamOpTimeout)
}

func (t *teamStore) Get(name string) (storage.Record, error) {
	ctx, cancel := t.opCtx()
	defer cancel()
	resp, err := t.cli.Get(ctx, t.keys.session(name))
	if err != nil {
		return storage.Record{}, t.unavailable(fmt.Sprintf("reading session %q", name), err, false)
	}
	t.setStale(false)
	if len(resp.Kvs) == 0 {
		return storage.Record{}, nil
	}
	return storage.Record{Data: resp.Kvs[0].Value, Version: resp.Kvs[0].ModRevision}, nil
}

func (t *teamStore) List() ([]storage.Named, error) {
	ctx, cancel := t.opCtx()
	defer cancel()
	resp, err := t.cli.Get(ctx, t.keys.sessions(), clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return nil, t.unavailable("listing sessions", err, false)
	}
	t.setStale(false)
	out := make([]storage.Named, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		name, err := url.PathUnescape(strings.TrimPrefix(string(kv.Key), t.keys.sessions()))
		if err != nil {
			continue
		}
		out = append(out, storage.Named{Name: name, Data: kv.Value})
	}
	// Escaped names sort as their keys; sort as the names do.
	slices.SortFunc(out, func(a, b storage.Named) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (t *teamStore) History(name string, limit int, before uint64) ([][]byte, bool, error) {
	ctx, cancel := t.opCtx()
	defer cancel()
	end := clientv3.GetPrefixRangeEnd(t.keys.history(name))
	if before > 0 {
		end = t.keys.event(name, before)
	}
	resp, err := t.cli.Get(ctx, t.keys.history(name), clientv3.WithRange(end),
		clientv3.WithSort(clientv3.SortByKey, clientv3.SortDescend), clientv3.WithLimit(int64(limit)+1))
	if err != nil {
		return nil, false, t.unavailable(fmt.Sprintf("reading the history of session %q", name), err, false)
	}
	t.setStale(false)
	var raw [][]byte
	size := 0
	for _, kv := range resp.Kvs {
		if len(raw) == limit || len(raw) > 0 && size+len(kv.Value) > MaxHistoryPageBytes {
			return raw, true, nil
		}
		size += len(kv.Value)
		raw = append(raw, kv.Value)
	}
	return raw, false, nil
}

// Commit writes p in one Txn, if the session is still at version p.Base.
func (t *teamStore) Commit(p *storage.Commit) error {
	ctx, cancel := t.opCtx()
	defer cancel()
	sk := t.keys.session(p.Session)
	if p.Base == 0 {
		n, err := t.cli.Get(ctx, t.keys.sessions(), clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			return t.unavailable(fmt.Sprintf("counting the sessions to store session %q", p.Session), err, true)
		}
		if n.Count >= int64(maxSessions) {
			return &storage.LimitError{Session: p.Session, Stored: int(n.Count), Max: maxSessions}
		}
	}
	ops := []clientv3.Op{clientv3.OpPut(sk, string(p.Record))}
	idx := t.index(p.Session)
	var rec []byte
	keep := 0
	if ev := p.Event; ev != nil {
		if !idx.loaded || idx.last+1 < ev.Seq { // events of other daemons to learn first
			if err := t.catchUp(ctx, p.Session, idx); err != nil {
				return t.unavailable(fmt.Sprintf("reading the history of session %q", p.Session), err, true)
			}
		}
		rec = ev.Encode(ev.Seq)
		keep = idx.keepFrom(ev.Seq, int64(len(rec)))
		ops = append(ops, clientv3.OpPut(t.keys.event(p.Session, ev.Seq), string(rec)), clientv3.OpPut(t.keys.change(p.Session), string(p.Flags)))
		if keep > 0 {
			ops = append(ops, clientv3.OpDelete(t.keys.history(p.Session), clientv3.WithRange(t.keys.event(p.Session, idx.seqs[keep-1]+1))))
		}
	}
	mark := writeMark{key: sk, value: p.Record}
	if p.Event != nil {
		mark = writeMark{key: t.keys.event(p.Session, p.Event.Seq), value: rec}
	}
	deadline, _ := ctx.Deadline()
	out, err := sendWrite(t.ctx, t.cli, deadline, clientv3.Compare(clientv3.ModRevision(sk), "=", p.Base), ops, sk, mark)
	if err != nil {
		return t.writeFailed(fmt.Sprintf("writing session %q", p.Session), err, out.sent)
	}
	t.setStale(false)
	resp := out.resp
	if out.mine {
		resp.Succeeded, resp.Header.Revision = true, out.version
	}
	if !resp.Succeeded {
		p.Fresh = storage.Record{}
		if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) == 1 {
			p.Fresh = storage.Record{Data: kvs[0].Value, Version: kvs[0].ModRevision}
		}
		return storage.ErrConflict
	}
	p.Version = resp.Header.Revision
	if p.Event != nil {
		idx.add(keep, p.Event.Seq, int64(len(rec)))
	}
	return nil
}

func (t *teamStore) index(name string) *histIndex {
	t.histMu.Lock()
	defer t.histMu.Unlock()
	idx := t.hist[name]
	if idx == nil {
		idx = &histIndex{}
		t.hist[name] = idx
	}
	return idx
}

// catchUp reads the events of session name that idx does not know yet
// (all of them the first time).
func (t *teamStore) catchUp(ctx context.Context, name string, idx *histIndex) error {
	from := t.keys.history(name)
	if idx.loaded {
		from = t.keys.event(name, idx.last+1)
	}
	resp, err := t.cli.Get(ctx, from, clientv3.WithRange(clientv3.GetPrefixRangeEnd(t.keys.history(name))),
		clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return err
	}
	idx.loaded = true
	for _, kv := range resp.Kvs {
		seq, err := strconv.ParseUint(strings.TrimPrefix(string(kv.Key), t.keys.history(name)), 10, 64)
		if err != nil || seq <= idx.last {
			continue
		}
		idx.add(idx.keepFrom(seq, int64(len(kv.Value))), seq, int64(len(kv.Value)))
	}
	return nil
}

// keepFrom returns how many of the oldest events go when an event seq of
// size bytes is appended: those at or below seq-maxHistory, then more while
// the history is over maxHistoryBytes (never the new one), as appendEvent.
func (h *histIndex) keepFrom(seq uint64, size int64) int {
	var cut uint64
	if seq > uint64(maxHistory) {
		cut = seq - uint64(maxHistory)
	}
	total := h.bytes + size
	i := 0
	for i < len(h.seqs) && (h.seqs[i] <= cut || total > maxHistoryBytes) {
		total -= h.sizes[i]
		i++
	}
	return i
}

// add drops the drop oldest events and appends seq.
func (h *histIndex) add(drop int, seq uint64, size int64) {
	for _, s := range h.sizes[:drop] {
		h.bytes -= s
	}
	h.seqs = append(h.seqs[drop:], seq)
	h.sizes = append(h.sizes[drop:], size)
	h.bytes += size
	h.last = max(h.last, seq)
}

func (t *teamStore) Close() error {
	t.liveMu.Lock()
	lease := t.lease
	t.liveMu.Unlock()
	if lease != 0 {
		// Revoked now, the other daemons see this one gone at once.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, _ = t.cli.Revoke(ctx, lease)
		cancel()
	}
	t.cancel()
	t.wg.Wait()
	return t.cli.Close()
}

// watchLoop relays the changes of other daemons, in revision order, from
// revision from on. A watch that ends (a member gone, no leader) is
// started again from the next revision not seen; one that falls behind a
// compaction re-reads every session.
func (t *teamStore) watchLoop(from int64) {
	defer t.wg.Done()
	for t.ctx.Err() == nil {
		ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(t.ctx))
		for resp := range t.cli.Watch(ctx, t.keys.prefix, clientv3.WithPrefix(), clientv3.WithRev(from), clientv3.WithProgressNotify()) {
			if resp.CompactRevision != 0 {
				if rev, err := t.resync(); err == nil {
					from = rev + 1
				}
				break
			}
			if resp.Err() != nil {
				break
			}
			if resp.IsProgressNotify() {
				from = max(from, resp.Header.Revision+1)
				continue
			}
			t.apply(resp.Events)
			if n := len(resp.Events); n > 0 {
				from = max(from, resp.Events[n-1].Kv.ModRevision+1)
			}
		}
		cancel()
		select {
		case <-t.ctx.Done():
		case <-time.After(teamRetryInterval):
		}
	}
}

// apply hands the session writes of events to the workspace, each with
// the change flags and history event written in the same transaction.
func (t *teamStore) apply(events []*clientv3.Event) {
	for i := 0; i < len(events); {
		rev := events[i].Kv.ModRevision
		j := i
		flags := map[string]*changeFlags{}
		evs := map[string][]byte{}
		for ; j < len(events) && events[j].Kv.ModRevision == rev; j++ {
			e := events[j]
			key := string(e.Kv.Key)
			switch rest := strings.TrimPrefix(key, t.keys.prefix); {
			case e.Type == clientv3.EventTypeDelete && strings.HasPrefix(rest, "live/"):
				t.peerGone(t.liveName(key))
			case e.Type == clientv3.EventTypePut && strings.HasPrefix(rest, "live/"):
				t.liveMu.Lock()
				t.live[t.liveName(key)] = true
				t.liveMu.Unlock()
			case e.Type == clientv3.EventTypePut && strings.HasPrefix(rest, "c/"):
				var f changeFlags
				if json.Unmarshal(e.Kv.Value, &f) == nil {
					name, _ := url.PathUnescape(strings.TrimPrefix(rest, "c/"))
					flags[name] = &f
				}
			case e.Type == clientv3.EventTypePut && strings.HasPrefix(rest, "h/"):
				esc, _, _ := strings.Cut(strings.TrimPrefix(rest, "h/"), "/")
				name, _ := url.PathUnescape(esc)
				evs[name] = e.Kv.Value
			}
		}
		for k := i; k < j; k++ {
			e := events[k]
			rest := strings.TrimPrefix(string(e.Kv.Key), t.keys.prefix)
			if e.Type != clientv3.EventTypePut || !strings.HasPrefix(rest, "s/") {
				continue
			}
			name, err := url.PathUnescape(strings.TrimPrefix(rest, "s/"))
			if err != nil {
				continue
			}
			t.on.remote(name, e.Kv.Value, e.Kv.ModRevision, flags[name], evs[name])
		}
		i = j
	}
}

// resync re-reads every session after the watch fell behind a compaction
// and returns the revision read at.
func (t *teamStore) resync() (int64, error) {
	ctx, cancel := t.opCtx()
	defer cancel()
	resp, err := t.cli.Get(ctx, t.keys.prefix, clientv3.WithPrefix())
	if err != nil {
		return 0, err
	}
	t.liveMu.Lock()
	was := t.live
	t.live = map[string]bool{}
	for _, kv := range resp.Kvs {
		if strings.HasPrefix(string(kv.Key), t.keys.lives()) {
			t.live[t.liveName(string(kv.Key))] = true
		}
	}
	t.liveMu.Unlock()
	for id := range was {
		if !t.Alive(id) {
			t.peerGone(id)
		}
	}
	byKey := map[string][]byte{}
	for _, kv := range resp.Kvs {
		byKey[string(kv.Key)] = kv.Value
	}
	for _, kv := range resp.Kvs {
		rest, ok := strings.CutPrefix(string(kv.Key), t.keys.sessions())
		if !ok {
			continue
		}
		name, err := url.PathUnescape(rest)
		if err != nil {
			continue
		}
		// The change flags and event of the session's last change, when
		// they are of its revision, say what it was.
		var flags *changeFlags
		var ev []byte
		if s, _, err := decodeSessionRecord(kv.Value); err == nil {
			var f changeFlags
			if json.Unmarshal(byKey[t.keys.change(name)], &f) == nil && f.Revision == s.Revision {
				flags = &f
			}
			ev = byKey[t.keys.event(name, s.Revision)]
		}
		t.on.remote(name, kv.Value, kv.ModRevision, flags, ev)
	}
	return resp.Header.Revision, nil
}

// Alive reports whether identity's live key is known.
func (t *teamStore) Alive(identity string) bool {
	t.liveMu.Lock()
	defer t.liveMu.Unlock()
	return t.live[identity]
}

// peerGone records that a daemon's live key is gone (its lease expired or
// was revoked) and tells Options.OnPeerGone, on a goroutine of its own.
func (t *teamStore) peerGone(identity string) {
	t.liveMu.Lock()
	delete(t.live, identity)
	t.liveMu.Unlock()
	if identity == t.identity || t.on.peerGone == nil {
		return
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		t.on.peerGone(identity)
	}()
}

// probeLoop checks every teamProbeInterval that the cluster answers a
// linearizable read, keeping Stale up to date, and takes the lease again
// when it was lost while the cluster was away. After a failed probe it
// has gRPC connect again at once: its backoff between attempts grows to
// two minutes, so after an outage of half a minute the cluster, back,
// was reached only some 10 s later, and the folder stayed stale that long
// (docs/team.md, "Faults").
func (t *teamStore) probeLoop() {
	defer t.wg.Done()
	tick := time.NewTicker(teamProbeInterval)
	defer tick.Stop()
	for {
		select {
		case <-t.ctx.Done():
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(t.ctx, teamProbeInterval)
		_, err := t.cli.Get(ctx, t.keys.meta())
		if err == nil && t.identity != "" {
			t.liveMu.Lock()
			lost := t.lease == 0
			t.liveMu.Unlock()
			if lost {
				err = t.takeLease(ctx)
			}
		}
		cancel()
		if t.ctx.Err() != nil {
			return
		}
		if err != nil {
			t.cli.ActiveConnection().ResetConnectBackoff()
		}
		t.setStale(err != nil)
	}
}
