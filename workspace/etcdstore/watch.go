package etcdstore

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentd/agentd/workspace/storage"
)

// One watch per team prefix (docs/team.md, "Faults"): the folders of one
// team in a daemon share a watch of the team's keys, which the cluster
// keeps while any of them is open and fans out to each (teamWatch). A
// store subscribes before it reads the state it starts from, and drops
// the events at or below that revision: every later one reaches it.

// teamWatch is the watch of one team's keys on a cluster and the stores
// it relays to.
type teamWatch struct {
	c      *Cluster
	keys   Keys
	cancel context.CancelFunc
	subs   map[*watchSub]bool // guarded by c.watchMu
}

// watchSub is what the watch relays to one store, in order: events, and
// a mark where the watch fell behind a compaction (the store reads every
// session again).
type watchSub struct {
	mu     sync.Mutex
	queue  []watchItem
	signal chan struct{} // one pending wake-up
}

type watchItem struct {
	events []*clientv3.Event
	resync bool
}

func (w *watchSub) push(it watchItem) {
	w.mu.Lock()
	w.queue = append(w.queue, it)
	w.mu.Unlock()
	select {
	case w.signal <- struct{}{}:
	default:
	}
}

func (w *watchSub) take() []watchItem {
	w.mu.Lock()
	defer w.mu.Unlock()
	q := w.queue
	w.queue = nil
	return q
}

// subscribe returns a subscription to the watch of team k, starting the
// watch (from the revision the cluster is at) if no store of k has one.
func (c *Cluster) subscribe(ctx context.Context, k Keys) (*watchSub, error) {
	sub := &watchSub{signal: make(chan struct{}, 1)}
	c.watchMu.Lock()
	defer c.watchMu.Unlock()
	if w := c.watches[k]; w != nil {
		w.subs[sub] = true
		return sub, nil
	}
	resp, err := c.cli.Get(ctx, k.Meta(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(c.ctx)
	w := &teamWatch{c: c, keys: k, cancel: cancel, subs: map[*watchSub]bool{sub: true}}
	c.watches[k] = w
	c.wg.Go(func() { w.run(wctx, resp.Header.Revision+1) })
	return sub, nil
}

// unsubscribe ends sub; the last one of a team ends its watch.
func (c *Cluster) unsubscribe(k Keys, sub *watchSub) {
	c.watchMu.Lock()
	defer c.watchMu.Unlock()
	w := c.watches[k]
	if w == nil {
		return
	}
	delete(w.subs, sub)
	if len(w.subs) == 0 {
		w.cancel()
		delete(c.watches, k)
	}
}

// deliver hands it to every subscriber.
func (w *teamWatch) deliver(it watchItem) {
	w.c.watchMu.Lock()
	defer w.c.watchMu.Unlock()
	for sub := range w.subs {
		sub.push(it)
	}
}

// run watches the team's keys from revision from on. A watch that ends (a
// member gone, no leader) is started again from the next revision not
// delivered; one that fell behind a compaction starts again from the
// revision now, after a mark that has every store read its state again.
func (w *teamWatch) run(ctx context.Context, from int64) {
	cli := w.c.cli
	for ctx.Err() == nil {
		wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		for resp := range cli.Watch(wctx, w.keys.prefix, clientv3.WithPrefix(), clientv3.WithRev(from), clientv3.WithProgressNotify()) {
			if resp.CompactRevision != 0 {
				if now, err := cli.Get(wctx, w.keys.Meta(), clientv3.WithKeysOnly()); err == nil {
					from = now.Header.Revision + 1
					w.deliver(watchItem{resync: true})
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
			if n := len(resp.Events); n > 0 {
				w.deliver(watchItem{events: resp.Events})
				from = max(from, resp.Events[n-1].Kv.ModRevision+1)
			}
		}
		cancel()
		select {
		case <-ctx.Done():
		case <-time.After(retryInterval):
		}
	}
}

// relay applies what the team's watch delivers, from revision from on
// (the one Open read at, plus one), until the store closes.
func (s *Store) relay(from int64) {
	defer s.wg.Done()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.sub.signal:
		}
		for _, it := range s.sub.take() {
			if it.resync {
				from = s.resyncUntilRead()
				continue
			}
			evs := it.events
			for len(evs) > 0 && evs[0].Kv.ModRevision < from {
				evs = evs[1:]
			}
			if n := len(evs); n > 0 {
				s.apply(evs)
				from = evs[n-1].Kv.ModRevision + 1
			}
		}
	}
}

// resyncUntilRead reads every session again (resync), trying every
// retryInterval until it could or the store closes; it returns the
// revision after the one read at.
func (s *Store) resyncUntilRead() int64 {
	for {
		rev, err := s.resync()
		if err == nil || s.ctx.Err() != nil {
			return rev + 1
		}
		select {
		case <-s.ctx.Done():
		case <-time.After(retryInterval):
		}
	}
}

// apply hands the session writes of events to Options.Remote, once per
// session and revision with every part that revision wrote, each with the
// change flags and history event written in the same transaction.
func (s *Store) apply(events []*clientv3.Event) {
	for i := 0; i < len(events); {
		rev := events[i].Kv.ModRevision
		j := i
		flags := map[string][]byte{}
		evs := map[string][]byte{}
		for ; j < len(events) && events[j].Kv.ModRevision == rev; j++ {
			e := events[j]
			key := string(e.Kv.Key)
			switch rest := strings.TrimPrefix(key, s.keys.prefix); {
			case e.Type == clientv3.EventTypeDelete && strings.HasPrefix(rest, "live/"):
				s.peerGone(s.liveName(key))
			case e.Type == clientv3.EventTypePut && strings.HasPrefix(rest, "live/"):
				s.liveMu.Lock()
				s.live[s.liveName(key)] = true
				s.liveMu.Unlock()
			case e.Type == clientv3.EventTypePut && strings.HasPrefix(rest, "c/"):
				name, _ := url.PathUnescape(strings.TrimPrefix(rest, "c/"))
				flags[name] = e.Kv.Value
			case e.Type == clientv3.EventTypePut && strings.HasPrefix(rest, "h/"):
				esc, _, _ := strings.Cut(strings.TrimPrefix(rest, "h/"), "/")
				name, _ := url.PathUnescape(esc)
				evs[name] = e.Kv.Value
			}
		}
		recs := map[string]*storage.Record{}
		var names []string
		for _, e := range events[i:j] {
			name, part, ok := s.keys.sessionKey(string(e.Kv.Key))
			if e.Type != clientv3.EventTypePut || !ok {
				continue
			}
			if recs[name] == nil {
				recs[name] = &storage.Record{}
				names = append(names, name)
			}
			addKey(recs[name], part, e.Kv.Value, e.Kv.ModRevision)
		}
		for _, name := range names {
			s.on.Remote(name, *recs[name], flags[name], evs[name])
		}
		i = j
	}
}

// resync re-reads every session after the watch fell behind a compaction
// and returns the revision read at.
func (s *Store) resync() (int64, error) {
	ctx, cancel := s.opCtx()
	defer cancel()
	resp, err := s.cli.Get(ctx, s.keys.prefix, clientv3.WithPrefix())
	if err != nil {
		return 0, err
	}
	s.liveMu.Lock()
	was := s.live
	s.live = map[string]bool{}
	for _, kv := range resp.Kvs {
		if strings.HasPrefix(string(kv.Key), s.keys.lives()) {
			s.live[s.liveName(string(kv.Key))] = true
		}
	}
	s.liveMu.Unlock()
	for id := range was {
		if !s.seenAlive(id) {
			s.peerGone(id)
		}
	}
	// Sorted by key: a session's newest event is the last of its history.
	byKey := map[string][]byte{}
	newest := map[string][]byte{}
	for _, kv := range resp.Kvs {
		byKey[string(kv.Key)] = kv.Value
		if rest, ok := strings.CutPrefix(string(kv.Key), s.keys.prefix+"h/"); ok {
			esc, _, _ := strings.Cut(rest, "/")
			newest[esc] = kv.Value
		}
	}
	for _, n := range s.group(resp.Kvs) {
		// The change flags and the newest event of the session: Remote
		// takes them when they are of the session's revision.
		esc := url.PathEscape(n.Name)
		s.on.Remote(n.Name, n.Record, byKey[s.keys.change(n.Name)], newest[esc])
	}
	return resp.Header.Revision, nil
}

// peerGone records that a daemon's live key is gone (its lease expired or
// was revoked) and tells Options.PeerGone, on a goroutine of its own.
func (s *Store) peerGone(identity string) {
	s.liveMu.Lock()
	delete(s.live, identity)
	s.liveMu.Unlock()
	if identity == s.identity() || s.on.PeerGone == nil {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.on.PeerGone(identity)
	}()
}
