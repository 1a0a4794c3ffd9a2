package workspace

import (
	"errors"
	"fmt"
	"sync"

	"go.etcd.io/bbolt"

	"github.com/agentd/agentd/goal"
)

// Group commit (docs/performance.md, "Group commit"; docs/reliability.md,
// Durability). Every Update hands its encoded change to commit, which
// returns once a bbolt transaction holding it has committed (fsynced) or
// failed. One Update at a time leads: it writes every change waiting in
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
	name   string
	data   []byte       // the session record
	ev     encodedEvent // the history event, unless quiet
	quiet  bool         // no event
	before history      // the history's size before the change (the session's)

	// For a team store (team.go): the event's Seq (the session's new
	// Revision), the version the change was made on, and what clients of
	// other daemons are told; set on return: ver once committed, fresh and
	// freshVer on errConflict.
	seq      uint64
	base     int64
	flags    changeFlags
	ver      int64
	fresh    []byte
	freshVer int64

	// Set by the leader before wake is closed.
	held history // the history's size after the change, once committed
	err  error   // nil: committed; else an *Error refusal or an ErrNotSaved error
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

// commit writes p, alone or with other sessions' changes, and returns its
// outcome (p.err; p.held when committed). p.name's session lock must be
// held.
func (w *Workspace) commit(p *pendingCommit) error {
	g := &w.group
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

	w.commitGroup(batch)

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
func (w *Workspace) commitGroup(batch []*pendingCommit) {
	err := protect(func() error { return w.db.Update(w.writeBatch(batch)) })
	if errors.Is(err, errNothingToCommit) {
		err = nil
	}
	if err != nil && len(batch) > 1 {
		for i := range batch {
			w.commitGroup(batch[i : i+1])
		}
		return
	}
	for _, p := range batch {
		if err != nil {
			p.err = fmt.Errorf("%w: session %q of workspace %s: %w", ErrNotSaved, p.name, w.root, err)
		}
		if !p.leads {
			p.done = true
			close(p.wake)
		}
	}
}

// writeBatch returns the transaction function that writes batch.
func (w *Workspace) writeBatch(batch []*pendingCommit) func(*bbolt.Tx) error {
	return func(tx *bbolt.Tx) error {
		// This function must leave nothing behind when its transaction
		// fails: every attempt starts from the pending changes as queued.
		b := tx.Bucket(bucketSessions)
		wrote := false
		stored, added := -1, 0 // sessions stored before this transaction (counted on first need), and new ones in it
		for _, p := range batch {
			p.held, p.err = p.before, nil
			if b.Get([]byte(p.name)) == nil {
				if stored < 0 {
					stored = b.Stats().KeyN // committed pages only: the new ones of this transaction are added
				}
				if n := stored + added; n >= maxSessions {
					p.err = &Error{Code: goal.CodeArgsInvalid, Path: w.path,
						Msg: fmt.Sprintf("session %q would be new, but workspace %s already has %d sessions, the most a folder keeps (%d); use one of its sessions (agentd.sessions lists them)", p.name, w.root, n, maxSessions)}
					continue
				}
				added++
			}
			wrote = true
			if err := b.Put([]byte(p.name), p.data); err != nil {
				return err
			}
			if !p.quiet {
				if err := appendEvent(tx, p.name, p.ev, &p.held); err != nil {
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
