package workspace

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentd/agentd/workspace/etcdstore"
	"github.com/agentd/agentd/workspace/storage"
)

// Options configure a Registry.
type Options struct {
	// StateDir is the root of agentd's state (docs/protocol.md §1: --state-dir);
	// required. It and its workspaces directory are created with mode 0700
	// when missing.
	StateDir string
	// Logger receives the package's logs; nil discards them.
	Logger *slog.Logger
	// Now is the wall clock for UpdatedAt, history times and file names;
	// nil means time.Now.
	Now func() time.Time
	// LockTimeout bounds the wait for another process's lock on a state
	// file; 0 means 1s (docs/protocol.md §1: "never waits more than about 1 s").
	LockTimeout time.Duration
	// LockedHint, if set, ends the message of a CodeLocked refusal: what
	// the person can do about it, in the words of the program that opened
	// the folder (agentd's command line suggests its --remote=auto).
	LockedHint string
	// OnOpen, if set, is called once right after a store is opened and
	// migrated, before Open returns the workspace (agentd uses it to pause
	// goals left active by a previous run, docs/runtime.md §2.3). w is fully
	// usable; other Opens of the same folder wait for it. An error closes
	// the store and is returned by Open, wrapped.
	OnOpen func(w *Workspace) error
	// Team is this machine's etcd settings for team folders (docs/team.md).
	Team TeamOptions
	// Identity names this process in the teams of the folders it opens: a
	// daemon's live key, held under a lease of etcdstore.LeaseTTL while the
	// folder is open (agentd uses its service clock, the Owner of the turns
	// it drives). "" takes no lease (a one-shot command).
	Identity string
	// NewIdentity, if set, gives the process a new identity, in place of
	// Identity, once a team folder's lease was lost: the process registers
	// again under it before it writes (docs/team.md, "Fencing").
	NewIdentity func() string
	// OnPeerGone, if set, is called when the live key of another daemon of
	// a team folder disappears (its lease expired: it died, or it closed
	// the folder), on a goroutine of its own; agentd applies the restart
	// rule to the turns it left live (docs/team.md, "Liveness").
	OnPeerGone func(w *Workspace, identity string)

	// WrapStore, if set, wraps the store of each folder opened: tests put
	// a store that fails on purpose (storetest.FailFirst) under the
	// commands. A wrapper that has an Unwrap method returning the store it
	// wraps keeps what depends on the kind of store (Shared, Stale, Alive).
	WrapStore func(storage.Interface) storage.Interface

	maxSize int // tests: bbolt's MaxSize, to make commits fail
}

// wrap applies Options.WrapStore to s.
func (r *Registry) wrap(s storage.Interface) storage.Interface {
	if r.opts.WrapStore == nil {
		return s
	}
	return r.opts.WrapStore(s)
}

// Registry is the process-wide set of open workspace folders: one store
// per folder, shared by every connection through reference counting
// (docs/architecture.md, "State and concurrency"). Its methods are safe for
// concurrent use.
type Registry struct {
	opts Options
	log  *slog.Logger

	mu      sync.Mutex
	closed  bool
	open    map[string]*Workspace    // by root, including stores still opening
	closing map[string]chan struct{} // by root: closed when the last Release has closed the store
	retired map[*Workspace]bool      // reopened (Reopen), still held: each closes at its last Release

	clients etcdstore.Clients // one etcd client per cluster, shared by the team folders

	idMu sync.Mutex
	id   string // this process's identity in teams (identity.go)

	subs subscribers[func(Notice)]    // Subscribe
	feed subscribers[func(FeedEvent)] // Feed (feed.go)
}

// NewRegistry returns an empty registry. Nothing is opened or created on
// disk until Open.
func NewRegistry(opts Options) *Registry {
	r := &Registry{
		opts:    opts,
		log:     opts.Logger,
		open:    make(map[string]*Workspace),
		closing: make(map[string]chan struct{}),
		retired: make(map[*Workspace]bool),
		id:      opts.Identity,
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	return r
}

func (r *Registry) now() time.Time {
	if r.opts.Now != nil {
		return r.opts.Now()
	}
	return time.Now()
}

func (r *Registry) lockTimeout() time.Duration {
	if r.opts.LockTimeout > 0 {
		return r.opts.LockTimeout
	}
	return time.Second
}

// Open returns the workspace of the folder at root, an absolute path (Open
// cleans it again), opening its store on first use. Every successful Open
// needs one Release. Once the store is open (and OnOpen done) its stored
// sessions are fed to the commit feed (Feed), and Open returns after its
// observers handled FeedOpened: the task-file watcher records there a
// change made while the folder was closed.
//
// Opening waits at most LockTimeout for another process's file lock, then
// fails with an *Error of code "workspace.locked" naming the holder's pid.
// A state file bbolt cannot use is moved aside and a fresh one started (see
// Recovered). A file written by a newer agentd is refused with code
// "workspace.corrupt" and left as it is (docs/protocol.md §1).
func (r *Registry) Open(root string) (*Workspace, error) {
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("workspace: folder path %q is not absolute", root)
	}
	root = filepath.Clean(root)
	for {
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return nil, ErrClosed
		}
		if done := r.closing[root]; done != nil {
			// The last Release is closing this folder's store: wait, so that
			// this process does not contend with itself for the file lock.
			r.mu.Unlock()
			<-done
			continue
		}
		if w := r.open[root]; w != nil {
			w.refs++
			r.mu.Unlock()
			<-w.ready
			if w.openErr != nil {
				return nil, w.openErr
			}
			return w, nil
		}
		w := &Workspace{
			reg:      r,
			root:     root,
			refs:     1,
			ready:    make(chan struct{}),
			sessions: make(map[string]*sessionState),
		}
		r.open[root] = w
		r.mu.Unlock()

		err := r.openStore(w)
		if err == nil && r.opts.OnOpen != nil {
			if err = r.opts.OnOpen(w); err != nil {
				err = fmt.Errorf("workspace %s: preparing the opened store: %w", root, err)
				_ = w.closeStore()
			}
		}
		if err == nil {
			w.feedOpened()
		}

		r.mu.Lock()
		if err == nil && r.closed {
			err = ErrClosed
			_ = w.closeStore()
		}
		if err != nil {
			w.openErr = err
			delete(r.open, root)
		}
		close(w.ready)
		r.mu.Unlock()
		if err != nil {
			return nil, err
		}
		return w, nil
	}
}

// Close closes every open store, whatever its reference count (process
// shutdown). Later calls on its workspaces return ErrClosed, and so does
// Open.
func (r *Registry) Close() error {
	r.mu.Lock()
	r.closed = true
	var all []*Workspace
	for _, w := range r.open {
		all = append(all, w)
	}
	for w := range r.retired {
		all = append(all, w)
	}
	clear(r.open)
	clear(r.retired)
	r.mu.Unlock()

	var errs []error
	for _, w := range all {
		<-w.ready
		if w.openErr == nil {
			errs = append(errs, w.closeStore())
		}
	}
	return errors.Join(errs...)
}

// Subscribe registers fn for the notices of every workspace of the
// registry. fn is called after each commit (never for Quiet changes), with
// that session's lock held, so the notices of one session arrive in
// revision order (docs/architecture.md). fn must not block and must not call
// Update on the same session: enqueue and return. A panic in fn is logged
// and does not fail the Update. The returned func unsubscribes; it may be
// called more than once.
func (r *Registry) Subscribe(fn func(Notice)) (cancel func()) {
	return r.subs.add(fn)
}

// publish hands n to every subscriber, each with its own copy of the
// session.
func (r *Registry) publish(n Notice) {
	r.subs.each(r.log, func(fn func(Notice)) {
		n := n
		n.Session = cloneSession(n.Session)
		fn(n)
	}, "workspace", n.Workspace.root, "session", n.Session.Name)
}

// publishStore tells subscribers that w's team store became stale (etcd
// unreachable) or fresh again: a Notice with Store set and no session.
func (r *Registry) publishStore(w *Workspace, stale bool) {
	r.publish(Notice{Workspace: w, Store: &StoreStatus{Stale: stale}})
}

// Reopen makes the next Open of the folder at root open its store afresh
// (its team file was accepted: AcceptTeam). The workspace open now, if
// any, is retired: its holders keep it until they move to the new one
// (Workspace.Retired says they should), and its store closes at its last
// Release. Its subscribers get a store notice (not stale), so clients read
// the state again, which moves them. Reports whether a workspace was
// retired.
func (r *Registry) Reopen(root string) bool {
	root = filepath.Clean(root)
	r.mu.Lock()
	w := r.open[root]
	r.mu.Unlock()
	if w == nil {
		return false
	}
	<-w.ready
	r.mu.Lock()
	if r.closed || r.open[root] != w || w.openErr != nil {
		r.mu.Unlock()
		return false
	}
	delete(r.open, root)
	r.retired[w] = true
	w.retired.Store(true)
	r.mu.Unlock()
	r.publishStore(w, false)
	return true
}

// release drops one reference of w; the last closes its store.
func (r *Registry) release(w *Workspace) {
	r.mu.Lock()
	if w.refs <= 0 {
		r.mu.Unlock()
		r.log.Error("workspace released more often than opened", "workspace", w.root)
		return
	}
	w.refs--
	if w.refs > 0 {
		r.mu.Unlock()
		return
	}
	if r.retired[w] {
		delete(r.retired, w)
		r.mu.Unlock()
		if err := w.closeStore(); err != nil {
			r.log.Error("closing the reopened workspace's old store failed", "workspace", w.root, "err", err)
		}
		return
	}
	if r.open[w.root] != w { // Registry.Close got there first
		r.mu.Unlock()
		return
	}
	delete(r.open, w.root)
	done := make(chan struct{})
	r.closing[w.root] = done
	r.mu.Unlock()

	if err := w.closeStore(); err != nil {
		r.log.Error("closing the workspace store failed", "workspace", w.root, "err", err)
	}

	r.mu.Lock()
	delete(r.closing, w.root)
	close(done)
	r.mu.Unlock()
}
