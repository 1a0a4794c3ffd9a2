package etcdstore

import (
	"context"
	"strconv"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentd/agentd/workspace/storage"
)

// histIndex is what a store knows of a session's stored history: the seq
// and size of each event, oldest first, to bound it as boltstore does
// (the same rule on the same events deletes the same ones, whichever
// daemon applies it).
type histIndex struct {
	loaded bool
	seqs   []uint64
	sizes  []int64
	bytes  int64
	last   uint64 // the highest seq known
}

func (s *Store) index(name string) *histIndex {
	s.histMu.Lock()
	defer s.histMu.Unlock()
	idx := s.hist[name]
	if idx == nil {
		idx = &histIndex{}
		s.hist[name] = idx
	}
	return idx
}

// catchUp reads the events of session name that idx does not know yet
// (all of them the first time).
func (s *Store) catchUp(ctx context.Context, name string, idx *histIndex, lim storage.Limits) error {
	from := s.keys.history(name)
	if idx.loaded {
		from = s.keys.Event(name, idx.last+1)
	}
	resp, err := s.cli.Get(ctx, from, clientv3.WithRange(clientv3.GetPrefixRangeEnd(s.keys.history(name))),
		clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return err
	}
	idx.loaded = true
	for _, kv := range resp.Kvs {
		seq, err := strconv.ParseUint(strings.TrimPrefix(string(kv.Key), s.keys.history(name)), 10, 64)
		if err != nil || seq <= idx.last {
			continue
		}
		idx.add(idx.keepFrom(seq, int64(len(kv.Value)), lim), seq, int64(len(kv.Value)))
	}
	return nil
}

// keepFrom returns how many of the oldest events go when an event seq of
// size bytes is appended: those at or below seq-MaxHistory, then more
// while the history is over MaxHistoryBytes (never the new one).
func (h *histIndex) keepFrom(seq uint64, size int64, lim storage.Limits) int {
	var cut uint64
	if seq > uint64(lim.MaxHistory) {
		cut = seq - uint64(lim.MaxHistory)
	}
	total := h.bytes + size
	i := 0
	for i < len(h.seqs) && (h.seqs[i] <= cut || total > lim.MaxHistoryBytes) {
		total -= h.sizes[i]
		i++
	}
	return i
}

// learn adds to idx event key of size bytes, of another daemon, that a
// commit of event seq read, when idx does not know it yet.
func (s *Store) learn(name string, idx *histIndex, key string, size int, seq uint64) {
	n, err := strconv.ParseUint(strings.TrimPrefix(key, s.keys.history(name)), 10, 64)
	if err == nil && n > idx.last && n < seq {
		idx.add(0, n, int64(size))
	}
}

// dropBelow drops the events below seq cut (deleted by a commit).
func (h *histIndex) dropBelow(cut uint64) {
	i := 0
	for i < len(h.seqs) && h.seqs[i] < cut {
		h.bytes -= h.sizes[i]
		i++
	}
	h.seqs, h.sizes = h.seqs[i:], h.sizes[i:]
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
