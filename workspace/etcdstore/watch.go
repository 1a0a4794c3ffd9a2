package etcdstore

import (
	"context"
	"net/url"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// watchLoop relays the changes of other daemons, in revision order, from
// revision from on. A watch that ends (a member gone, no leader) is
// started again from the next revision not seen; one that falls behind a
// compaction re-reads every session.
func (s *Store) watchLoop(from int64) {
	defer s.wg.Done()
	for s.ctx.Err() == nil {
		ctx, cancel := context.WithCancel(clientv3.WithRequireLeader(s.ctx))
		for resp := range s.cli.Watch(ctx, s.keys.prefix, clientv3.WithPrefix(), clientv3.WithRev(from), clientv3.WithProgressNotify()) {
			if resp.CompactRevision != 0 {
				if rev, err := s.resync(); err == nil {
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
			s.apply(resp.Events)
			if n := len(resp.Events); n > 0 {
				from = max(from, resp.Events[n-1].Kv.ModRevision+1)
			}
		}
		cancel()
		select {
		case <-s.ctx.Done():
		case <-time.After(retryInterval):
		}
	}
}

// apply hands the session writes of events to Options.Remote, each with
// the change flags and history event written in the same transaction.
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
		for k := i; k < j; k++ {
			e := events[k]
			rest := strings.TrimPrefix(string(e.Kv.Key), s.keys.prefix)
			if e.Type != clientv3.EventTypePut || !strings.HasPrefix(rest, "s/") {
				continue
			}
			name, err := url.PathUnescape(strings.TrimPrefix(rest, "s/"))
			if err != nil {
				continue
			}
			s.on.Remote(name, e.Kv.Value, e.Kv.ModRevision, flags[name], evs[name])
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
	for _, kv := range resp.Kvs {
		rest, ok := strings.CutPrefix(string(kv.Key), s.keys.sessions())
		if !ok {
			continue
		}
		name, err := url.PathUnescape(rest)
		if err != nil {
			continue
		}
		// The change flags and the newest event of the session: Remote
		// takes them when they are of the session's revision.
		s.on.Remote(name, kv.Value, kv.ModRevision, byKey[s.keys.change(name)], newest[rest])
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

// retakeLease registers this daemon again, under a new identity, when its
// lease was lost while the cluster was away (fence.go); the cluster's
// prober calls it after each probe the cluster answered.
func (s *Store) retakeLease() { s.reregister() }
