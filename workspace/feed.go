package workspace

import (
	"log/slog"
	"sync"
	"sync/atomic"
)

// The commit feed (Registry.Feed) is for an observer that must follow
// every stored session of every open folder, such as the task-file watcher
// (workspace/taskfile): it sees quiet commits too, which notices leave out,
// each stored session as it stands when its folder opens, and the opening
// and closing of each store. Nothing in this package reads what it carries.

// FeedKind says what a FeedEvent reports.
type FeedKind int

const (
	// FeedSession: Session is the session as committed (here, or in a
	// team folder by another daemon), or, while its folder opens, as
	// stored. The session's lock is held: fn must not block and must not
	// call Update of that session.
	FeedSession FeedKind = iota
	// FeedOpened: every stored session of the folder was fed; Open returns
	// once fn returns. No lock is held: fn may call Update.
	FeedOpened
	// FeedClosing: the folder's store is about to close; its sessions will
	// not change any more.
	FeedClosing
)

// FeedEvent is one event of the commit feed.
type FeedEvent struct {
	Kind      FeedKind
	Workspace *Workspace
	// Session is the committed session for FeedSession, nil otherwise.
	// It is the cached one, shared: read it, never change it.
	Session *Session
}

// Feed registers fn for the commit feed of every workspace of the
// registry, from the next event on (a folder already open is not fed
// again). It is called after each commit, Quiet ones included, under the
// session's lock, so one session's events come in commit order. A panic in
// fn is logged. The returned func unregisters; it may be called more than
// once.
func (r *Registry) Feed(fn func(FeedEvent)) (cancel func()) {
	return r.feed.add(fn)
}

// feedSession feeds the committed session s of w. The session's lock is
// held.
func (w *Workspace) feedSession(s *Session) {
	w.reg.feed.each(w.reg.log, func(fn func(FeedEvent)) {
		fn(FeedEvent{Kind: FeedSession, Workspace: w, Session: s})
	}, "workspace", w.root, "session", s.Name)
}

// feedOpened feeds every stored session of w, each under its lock so that
// a concurrent change (a team folder's watch) is not overtaken, then
// FeedOpened (Open, after OnOpen).
func (w *Workspace) feedOpened() {
	if w.reg.feed.empty() {
		return
	}
	sessions, err := w.Sessions()
	if err != nil {
		w.reg.log.Warn("cannot read the sessions to feed them to the observers of commits", "workspace", w.root, "err", err)
		return
	}
	for _, s := range sessions {
		st := w.state(s.Name)
		st.mu.Lock()
		if cur, err := w.load(s.Name, st); err == nil {
			w.feedSession(cur)
		}
		st.mu.Unlock()
	}
	w.reg.feed.each(w.reg.log, func(fn func(FeedEvent)) { fn(FeedEvent{Kind: FeedOpened, Workspace: w}) }, "workspace", w.root)
}

// feedClosing feeds FeedClosing for w.
func (w *Workspace) feedClosing() {
	w.reg.feed.each(w.reg.log, func(fn func(FeedEvent)) { fn(FeedEvent{Kind: FeedClosing, Workspace: w}) }, "workspace", w.root)
}

// subscribers is a list of callbacks, copied on write, read without a
// lock (notices and the commit feed).
type subscribers[F any] struct {
	mu   sync.Mutex
	seq  uint64
	list atomic.Pointer[[]subscriber[F]]
}

type subscriber[F any] struct {
	id uint64
	fn F
}

// add registers fn and returns its removal.
func (l *subscribers[F]) add(fn F) (cancel func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	id := l.seq
	var next []subscriber[F]
	if cur := l.list.Load(); cur != nil {
		next = append(next, *cur...)
	}
	next = append(next, subscriber[F]{id: id, fn: fn})
	l.list.Store(&next)
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		cur := l.list.Load()
		if cur == nil {
			return
		}
		var next []subscriber[F]
		for _, s := range *cur {
			if s.id != id {
				next = append(next, s)
			}
		}
		l.list.Store(&next)
	}
}

func (l *subscribers[F]) empty() bool {
	cur := l.list.Load()
	return cur == nil || len(*cur) == 0
}

// each calls call with every callback, logging a panic of one at Error
// (with attrs) and going on with the next.
func (l *subscribers[F]) each(log *slog.Logger, call func(F), attrs ...any) {
	cur := l.list.Load()
	if cur == nil {
		return
	}
	for _, s := range *cur {
		func() {
			defer func() {
				if v := recover(); v != nil {
					log.Error("workspace subscriber panicked", append(attrs, "panic", v)...)
				}
			}()
			call(s.fn)
		}()
	}
}
