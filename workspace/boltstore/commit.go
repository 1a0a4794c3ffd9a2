package boltstore

import (
	"errors"
	"sync"

	"go.etcd.io/bbolt"

	"github.com/agentd/agentd/workspace/storage"
)

// Group commit (docs/performance.md, "Group commit"; docs/reliability.md,
// Durability). Every commit of the state file's store (Store.Commit,
// called by Update) returns once a bbolt transaction holding it has
// committed (fsynced) or failed. One Update at a time leads: it writes every change waiting in
// the queue, its own first, in one transaction, so changes of different
// sessions that arrive while a commit is being written and fsynced share
// the next one, and one fsync serves them all. A change that finds no
// commit under way leads at once: a lone writer never waits for company.
// The per-session lock, held by Update across commit, keeps at most one
// change of a session in the queue, so the changes of one session commit
// in order.

// maxGroupCommit bounds the changes written in one transaction (at most
// about 32 MiB at the largest records); more wait for the next one.
const maxGroupCommit = 64

// errNothingToCommit rolls back a transaction whose changes were all refused.
var errNothingToCommit = errors.New("nothing to commit")

// pendingCommit is one session's change waiting for its transaction.
type pendingCommit struct {
	c      *storage.Commit
	before history // the history's size before the change (the session's)

	// Set by the leader before wake is closed.
	held history // the history's size after the change, once committed
	err  error   // nil: committed; else a *storage.LimitError or the cause
	done bool    // false: woken to lead the next transaction
	wake chan struct{}

	leads bool // set by the leader on its own change, whose wake it does not close
}

// groupCommit is the queue of a workspace's pending changes.
type groupCommit struct {
	mu      sync.Mutex
	queue   []*pendingCommit
	leading bool // a leader is writing a transaction; queue is empty when false
}

// Commit writes c, alone or with other sessions' changes. c.Session's
// commits must not run concurrently (storage.Interface).
func (b *Store) Commit(c *storage.Commit) error {
	p := &pendingCommit{c: c, before: b.historyOf(c.Session)}
	if err := b.commit(p); err != nil {
		return err
	}
	if c.Event != nil {
		b.setHistory(c.Session, p.held)
	}
	return nil
}

// commit writes p and returns its outcome (p.err; p.held when committed).
func (b *Store) commit(p *pendingCommit) error {
	g := &b.group
	p.wake = make(chan struct{})
	g.mu.Lock()
	g.queue = append(g.queue, p)
	lead := !g.leading
	g.leading = true
	g.mu.Unlock()
	if !lead {
		if <-p.wake; p.done {
			return p.err
		}
		// Promoted by the previous leader: p is first in the queue.
	}

	p.leads = true
	g.mu.Lock()
	n := min(len(g.queue), maxGroupCommit)
	batch := g.queue[:n:n]
	g.queue = g.queue[n:]
	g.mu.Unlock()

	b.commitGroup(batch)

	g.mu.Lock()
	if len(g.queue) > 0 {
		close(g.queue[0].wake) // done stays false: it leads the next transaction
	} else {
		g.leading = false
		g.queue = nil
	}
	g.mu.Unlock()
	return p.err
}

// commitGroup writes the changes of batch (each of another session) in one
// transaction and completes each. When that transaction fails and holds
// more than one change, each is written again in a transaction of its own,
// so that the change that made it fail (one too large for the file's size
// limit, say) fails alone and the others are saved.
//
// A panic in bbolt becomes the error of the batch (protect), so that the
// queue always gets its next leader.
func (b *Store) commitGroup(batch []*pendingCommit) {
	err := Protect(func() error { return b.db.Update(b.writeBatch(batch)) })
	if errors.Is(err, errNothingToCommit) {
		err = nil
	}
	if err != nil && len(batch) > 1 {
		for i := range batch {
			b.commitGroup(batch[i : i+1])
		}
		return
	}
	for _, p := range batch {
		if err != nil {
			p.err = err
		}
		if !p.leads {
			p.done = true
			close(p.wake)
		}
	}
}

// writeBatch returns the transaction function that writes batch.
func (b *Store) writeBatch(batch []*pendingCommit) func(*bbolt.Tx) error {
	return func(tx *bbolt.Tx) error {
		// This function must leave nothing behind when its transaction
		// fails: every attempt starts from the pending changes as queued.
		sb := tx.Bucket(BucketSessions)
		lim := b.limits()
		wrote := false
		stored, added := -1, 0 // sessions stored before this transaction (counted on first need), and new ones in it
		for _, p := range batch {
			p.held, p.err = p.before, nil
			name := []byte(p.c.Session)
			if sb.Get(name) == nil {
				if stored < 0 {
					stored = sb.Stats().KeyN // committed pages only: the new ones of this transaction are added
				}
				if n := stored + added; n >= lim.MaxSessions {
					p.err = &storage.LimitError{Session: p.c.Session, Stored: n, Max: lim.MaxSessions}
					continue
				}
				added++
			}
			wrote = true
			if err := sb.Put(name, p.c.Record); err != nil {
				return err
			}
			if p.c.Event != nil {
				if err := appendEvent(tx, p.c.Session, p.c.Event, &p.held, lim); err != nil {
					return err
				}
			}
		}
		if !wrote {
			return errNothingToCommit // every change refused: no commit, no fsync
		}
		return nil
	}
}
