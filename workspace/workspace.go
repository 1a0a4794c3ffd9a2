package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/todo"
	"github.com/agentd/agentd/workspace/etcdstore"
	"github.com/agentd/agentd/workspace/storage"
)

// Bounds of a session's history (docs/reliability.md, Limits). Appending an
// event deletes the oldest ones, in the same transaction, until at most
// MaxHistory events are kept and their stored records (the JSON of each
// event) take at most MaxHistoryBytes together; the newest event is always
// kept. The other limits keep one event far below MaxHistoryBytes (the
// largest, a todo list write at todo.MaxListBytes with the list before it,
// about 514 KiB), so a history always holds its 7 newest events at least.
// With bbolt's page overhead a history takes at most about 11 MiB of the
// file.
const (
	MaxHistory      = 10000
	MaxHistoryBytes = 4 << 20 // 4 MiB
)

// MaxHistoryPageBytes bounds one page of History: the stored records of the
// events it returns take at most 1 MiB together, except that a page always
// holds at least one event when the history has one.
const MaxHistoryPageBytes = storage.MaxHistoryPageBytes

// MaxSessions bounds the stored sessions of one folder: an Update that would
// store a session beyond it is refused with goal.CodeArgsInvalid, naming the
// limit; the sessions already stored go on as before (docs/reliability.md,
// Limits). It also bounds the agentd.sessions reply.
const MaxSessions = 1000

// maxHistory, maxHistoryBytes and maxSessions are MaxHistory,
// MaxHistoryBytes and MaxSessions; tests lower them.
var (
	maxHistory      = MaxHistory
	maxHistoryBytes = int64(MaxHistoryBytes)
	maxSessions     = MaxSessions
)

// limits is the stores' bounds in force (storage.Limits).
func limits() storage.Limits {
	return storage.Limits{MaxSessions: maxSessions, MaxHistory: maxHistory, MaxHistoryBytes: maxHistoryBytes}
}

// defaultHistoryLimit is what History returns when asked for limit <= 0
// (docs/protocol.md §3, agentd.history: limit defaults to 50).
const defaultHistoryLimit = 50

// Workspace is one open workspace folder: its store and the in-memory
// cache of its sessions. Get one from Registry.Open; its methods are safe
// for concurrent use until its last Release.
type Workspace struct {
	reg       *Registry
	root      string
	dir       string            // <StateDir>/workspaces/<wsfolder.FolderKey(root)>
	path      string            // dir/state.db, or what names a team's etcd state
	store     storage.Interface // the state file's (workspace/boltstore) or the team's (workspace/etcdstore)
	recovered string
	approved  approvals // the approved check commands (approvals.go)

	// Guarded by reg.mu.
	refs    int
	ready   chan struct{} // closed once opening has finished
	openErr error         // set before ready is closed

	closed    atomic.Bool
	retired   atomic.Bool // Registry.Reopen: a new Open gets another Workspace
	closeOnce sync.Once
	closeErr  error

	mu       sync.RWMutex
	sessions map[string]*sessionState
}

// sessionState is the lock and the cache of one session.
type sessionState struct {
	mu  sync.Mutex              // held by Update for a whole change, and while loading
	cur atomic.Pointer[Session] // the committed session; nil until loaded; never mutated
	// enc is the encoding of each part of cur (parts.go), to tell the
	// parts a change wrote.
	enc partData
	// vers are the versions of cur's parts and base the version of its
	// whole record (storage.Record): for a team store, the etcd revisions
	// of their last writes, which an Update compares. whole says cur was
	// read whole, or never written: its next commit writes every part.
	vers  [numParts]int64
	base  int64
	whole bool
	// told is the revision of the last change told to subscribers from a
	// team's watch (teamnotify.go); guarded by mu.
	told uint64
}

// Root returns the folder path: absolute and cleaned.
func (w *Workspace) Root() string { return w.root }

// Retired reports whether the folder was reopened (Registry.Reopen): a
// holder should Open it again, which gives the new store, and Release
// this one.
func (w *Workspace) Retired() bool { return w.retired.Load() }

// Shared says whether a team store (etcd) serves the folder (docs/team.md).
func (w *Workspace) Shared() bool { return w.team() != nil }

// team returns the team store serving w, nil for a folder served by its
// state file. It looks through wrappers (storetest.FailFirst) that say
// what they wrap.
func (w *Workspace) team() *etcdstore.Store {
	s := w.store
	for {
		switch v := s.(type) {
		case *etcdstore.Store:
			return v
		case interface{ Unwrap() storage.Interface }:
			s = v.Unwrap()
		default:
			return nil
		}
	}
}

// Release drops one reference taken by Registry.Open; the last one closes
// the store, releasing its file lock.
func (w *Workspace) Release() { w.reg.release(w) }

// Recovered returns, when Open found the state file unusable and moved it
// aside, a message for the user saying so and naming the moved file
// (docs/protocol.md §1: the user is told with window/showMessage); "" otherwise.
func (w *Workspace) Recovered() string { return w.recovered }

func (w *Workspace) closeStore() error {
	w.closeOnce.Do(func() {
		w.feedClosing()
		w.closed.Store(true)
		if w.store != nil {
			w.closeErr = w.store.Close()
		}
	})
	return w.closeErr
}

func (w *Workspace) errClosed() error {
	return fmt.Errorf("workspace %s: %w", w.root, ErrClosed)
}

// sessionName maps "" to DefaultSession.
func sessionName(name string) string {
	if name == "" {
		return DefaultSession
	}
	return name
}

func (w *Workspace) state(name string) *sessionState {
	w.mu.RLock()
	st := w.sessions[name]
	w.mu.RUnlock()
	if st != nil {
		return st
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if st = w.sessions[name]; st == nil {
		st = &sessionState{}
		w.sessions[name] = st
	}
	return st
}

// load returns the cached session, reading it from the store on first use.
// st.mu must be held.
func (w *Workspace) load(name string, st *sessionState) (*Session, error) {
	if s := st.cur.Load(); s != nil {
		return s, nil
	}
	rec, err := w.store.Get(name)
	if err != nil {
		return nil, w.readError(fmt.Sprintf("reading session %q", name), err)
	}
	return w.setLoaded(name, st, rec)
}

// setLoaded decodes rec, the stored record of session name (none: a new
// session), and makes it the cached session. st.mu must be held.
func (w *Workspace) setLoaded(name string, st *sessionState, rec storage.Record) (*Session, error) {
	s := newSession(name)
	if rec.Data != nil || rec.Parts != nil {
		var err error
		if s, err = w.decodeStored(name, rec); err != nil {
			return nil, err
		}
	}
	_, enc, err := encodeParts(s)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: session %q: %w", w.root, name, err)
	}
	st.cur.Store(&s)
	st.enc, st.base, st.whole = enc, rec.Version, rec.Parts == nil
	_, st.vers = storedParts(rec)
	return &s, nil
}

// readError wraps an error of reading the store: an *Error of code
// CodeUnavailable when a team store cannot reach etcd, else the cause with
// what was being read.
func (w *Workspace) readError(what string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return fmt.Errorf("workspace %s: %s: %w", w.root, what, err)
}

func newSession(name string) Session {
	return Session{Name: name, Todos: []todo.Item{}}
}

func (w *Workspace) decodeSession(name string, data []byte) (Session, error) {
	s, v, err := decodeSessionRecord(data)
	if err != nil {
		return Session{}, w.corruptRecord(fmt.Sprintf("session %q", name), err)
	}
	if err := w.checkRecordVersion(fmt.Sprintf("session %q", name), v, sessionRecordVersion); err != nil {
		return Session{}, err
	}
	s.Name = name
	return s, nil
}

func (w *Workspace) decodeEvent(name string, data []byte) (Event, error) {
	what := fmt.Sprintf("a history event of session %q", name)
	ev, v, err := decodeEventRecord(data)
	if err != nil {
		return Event{}, w.corruptRecord(what, err)
	}
	if err := w.checkRecordVersion(what, v, eventRecordVersion); err != nil {
		return Event{}, err
	}
	return ev, nil
}

// errNewerRecord is the cause of the refusal of a record a newer agentd
// wrote.
var errNewerRecord = errors.New("a record of a newer agentd")

func (w *Workspace) checkRecordVersion(what string, got, want int) error {
	switch {
	case got > want:
		return &Error{Code: CodeCorrupt, Err: errNewerRecord,
			Msg: fmt.Sprintf("%s in %s was written by a newer agentd (record version %d > %d); upgrade agentd", what, w.path, got, want)}
	case got < 1:
		return w.corruptRecord(what, fmt.Errorf("record version %d", got))
	}
	return nil
}

func (w *Workspace) corruptRecord(what string, err error) error {
	return &Error{Code: CodeCorrupt, Err: err,
		Msg: fmt.Sprintf("%s of workspace %s cannot be read from %s: %v", what, w.root, w.path, err)}
}

// View returns a private copy of the session. A session that does not exist
// yet reads as a fresh one (Revision 0, empty Todos) and is not created.
// After the first read of a session this is a memory read: it never waits
// for an Update. "" means DefaultSession.
func (w *Workspace) View(session string) (Session, error) {
	name := sessionName(session)
	if w.closed.Load() {
		return Session{}, w.errClosed()
	}
	st := w.state(name)
	if s := st.cur.Load(); s != nil {
		return cloneSession(*s), nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	s, err := w.load(name, st)
	if err != nil {
		return Session{}, err
	}
	return cloneSession(*s), nil
}

// Update changes one session under that session's lock (other sessions are
// not held up). fn gets a private copy of the session (a fresh one with
// Name set and empty Todos when the session is new) and reports what it
// did:
//   - fn returns an error: nothing is written; the error is returned as is.
//   - a zero Change (Kind "" and not Quiet): nothing is written; the
//     unchanged session is returned.
//   - otherwise one bbolt transaction (shared with changes of other
//     sessions waiting at the same time: workspace/boltstore, docs/performance.md
//     "Group commit") writes the session and, unless
//     change.Quiet, bumps Revision by 1, sets TodosRevision = Revision when
//     change.Todos, sets UpdatedAt = Now() (UTC) and appends the history
//     event {seq, at, actor, kind, reason, revision, before, payload}
//     (revision = the new Revision, before and payload = JSON of
//     change.Before and change.Payload), deleting the oldest events beyond MaxHistory events
//     or MaxHistoryBytes. A Quiet change sets UpdatedAt only when it stores
//     the session for the first time (a TodoList read records its use), so
//     every stored session has a real UpdatedAt. Name, Revision,
//     TodosRevision and UpdatedAt are the store's: fn's edits of them are
//     ignored. Nil Todos are stored as [].
//   - a change that would store a new session while the folder already
//     holds MaxSessions is refused with an *Error of code goal.CodeArgsInvalid;
//     nothing is written.
//
// After the commit, still under the session lock, subscribers get a Notice
// (not for Quiet changes), so notices of one session are in revision order
// (docs/architecture.md, "State and concurrency"); in a team folder the
// notice comes from the team's watch instead, shortly after (fromWatch). It returns the committed
// session as a private copy, exactly as a later View or a restart reads it.
//
// It returns only after that transaction committed (fsynced). A failed
// commit returns an error wrapping ErrNotSaved and the cause; the session
// keeps reading as before, and the changes of other sessions that shared
// the transaction are written again without it. fn runs under the session
// lock: it must be quick, do no I/O and not call Update of the same session.
//
// The store's commit is compare-and-set (storage.Interface states the
// contract): when the session changed since it was read (another daemon
// of a team wrote it), fn runs again on what is stored now, at most
// maxUpdateAttempts times, so fn must be pure: set what it reports to the
// caller, never accumulate across calls; a change that conflicts on every
// attempt fails with an *Error of code CodeContended wrapping ErrNotSaved.
// With etcd unreachable the change fails with an *Error of code
// CodeUnavailable wrapping ErrNotSaved, and nothing is written on this
// machine.
func (w *Workspace) Update(session string, fn func(s *Session) (Change, error)) (Session, error) {
	name := sessionName(session)
	if w.closed.Load() {
		return Session{}, w.errClosed()
	}
	st := w.state(name)
	st.mu.Lock()
	defer st.mu.Unlock()
	defer w.yieldTurn(name)
	cur, err := w.load(name, st)
	if err != nil {
		return Session{}, err
	}
	for attempt := 1; ; attempt++ {
		committed, ch, err := w.update(name, st, cur, fn)
		if errors.Is(err, storage.ErrConflict) && attempt < maxUpdateAttempts {
			// Another daemon of the team wrote the session: run fn again
			// on what it wrote (Commit.Fresh, now the cached session), after a
			// pause that lets two daemons writing in a loop take turns.
			if cur = st.cur.Load(); cur != nil {
				time.Sleep(conflictBackoff(attempt))
				continue
			}
		}
		if errors.Is(err, storage.ErrConflict) {
			return Session{}, &Error{Code: CodeContended, Err: fmt.Errorf("%w: %w", ErrNotSaved, err),
				Msg: fmt.Sprintf("session %q of workspace %s kept changing under this change: other daemons of the team wrote it first %d times in a row; nothing was written; try again", name, w.root, attempt)}
		}
		if err != nil || committed == nil {
			if err == nil {
				return cloneSession(*cur), nil
			}
			return Session{}, err
		}
		if !ch.Quiet && w.team() == nil {
			// A team folder's notices come from its watch (fromWatch).
			w.reg.publish(Notice{Workspace: w, Session: *committed, Change: ch})
		}
		return cloneSession(*committed), nil
	}
}

// yieldTurn gives up the turn a team store took on session name for this
// daemon (docs/team.md, "A far machine") when Update ends without the
// commit that releases it; nothing when it holds none.
func (w *Workspace) yieldTurn(name string) {
	if t := w.team(); t != nil {
		t.Yield(name)
	}
}

// maxUpdateAttempts bounds how often Update runs its function when other
// daemons of a team keep writing the same session (compare-and-set
// conflicts, docs/team.md).
const maxUpdateAttempts = 100

// conflictBackoff is the pause before Update's next attempt after its
// attempt-th conflict: random, below 1 ms doubled per conflict up to 32 ms.
// Without it the daemon that just wrote, its cache already fresh, wins
// every race against the one that must run fn again, which can lose
// maxUpdateAttempts times in a row.
func conflictBackoff(attempt int) time.Duration {
	return rand.N(time.Millisecond << min(attempt-1, 5))
}

// update is one attempt of Update on cur, the cached session: it runs fn,
// and writes what it did. committed is nil when fn changed nothing (or
// failed). A conflict leaves the session the store found cached.
// st.mu must be held.
func (w *Workspace) update(name string, st *sessionState, cur *Session, fn func(s *Session) (Change, error)) (committed *Session, ch Change, err error) {
	s := cloneSession(*cur)
	ch, err = fn(&s)
	if err != nil {
		return nil, ch, err
	}
	if ch.Kind == "" && !ch.Quiet {
		return nil, ch, nil
	}
	ev, err := w.stamp(name, cur, &s, ch)
	if err != nil {
		return nil, ch, err
	}
	data, enc, err := encodeParts(s)
	if err != nil {
		return nil, ch, fmt.Errorf("%w: session %q of workspace %s: %w", ErrNotSaved, name, w.root, err)
	}
	if ch.Quiet && st.enc.changed(&enc) == 0 {
		return nil, ch, nil // a quiet change that changed nothing stored
	}
	write, read, err := w.commitParts(name, st, &enc, ch.Reads)
	if err != nil {
		return nil, ch, err
	}
	stored, err := w.storedForm(name, s, data)
	if err != nil {
		return nil, ch, fmt.Errorf("%w: %w", ErrNotSaved, err)
	}
	flags, err := flagsOf(s.Revision, ch)
	if err != nil {
		return nil, ch, fmt.Errorf("%w: session %q of workspace %s: encoding the change: %w", ErrNotSaved, name, w.root, err)
	}
	c := &storage.Commit{Session: name, Record: data, Parts: write, Read: read, Event: ev, Base: st.base, Flags: flags}
	if err := w.store.Commit(c); err != nil {
		return nil, ch, w.commitError(name, st, c, err)
	}
	st.cur.Store(&stored)
	for i, n := range partNames {
		if _, ok := write[n]; ok {
			st.vers[i] = c.Version
		}
	}
	st.enc, st.base, st.whole = enc, 0, false
	w.feedSession(&stored)
	return &stored, ch, nil
}

// stamp sets on s, fn's result on cur, what the store keeps (its name,
// revisions and time, Todos never nil) and returns the history event of
// ch (nil for a quiet change).
func (w *Workspace) stamp(name string, cur, s *Session, ch Change) (*storage.Event, error) {
	s.Name = name
	if s.Todos == nil {
		s.Todos = []todo.Item{}
	}
	s.Revision, s.TodosRevision, s.UpdatedAt = cur.Revision, cur.TodosRevision, cur.UpdatedAt
	now := w.reg.now().UTC()
	if s.UpdatedAt.IsZero() {
		s.UpdatedAt = now
	}
	if ch.Quiet {
		return nil, nil
	}
	s.Revision++
	if ch.Todos {
		s.TodosRevision = s.Revision
	}
	s.UpdatedAt = now
	e := Event{At: now, Actor: string(ch.Actor), Kind: ch.Kind, Reason: ch.Reason, Revision: s.Revision}
	var err error
	if ch.Payload != nil {
		if e.Payload, err = json.Marshal(ch.Payload); err != nil {
			return nil, fmt.Errorf("%w: session %q of workspace %s: encoding the history payload of %q: %w", ErrNotSaved, name, w.root, ch.Kind, err)
		}
	}
	if ch.Before != nil {
		if e.Before, err = json.Marshal(ch.Before); err != nil {
			return nil, fmt.Errorf("%w: session %q of workspace %s: encoding the state before %q: %w", ErrNotSaved, name, w.root, ch.Kind, err)
		}
	}
	// Encoded here, outside the transaction, which only adds the Seq.
	enc, err := encodeEventRecord(e)
	if err != nil {
		return nil, fmt.Errorf("%w: session %q of workspace %s: encoding the history event: %w", ErrNotSaved, name, w.root, err)
	}
	return &storage.Event{Seq: s.Revision, Encode: enc.withSeq}, nil
}

// commitError is what Update makes of the error of a commit: a conflict
// caches the session the store found; a store's limit becomes a refusal
// naming it; a failed write wraps ErrNotSaved.
func (w *Workspace) commitError(name string, st *sessionState, c *storage.Commit, err error) error {
	var limit *storage.LimitError
	var coded *Error
	switch {
	case errors.Is(err, storage.ErrConflict):
		if _, derr := w.setLoaded(name, st, c.Fresh); derr != nil {
			return derr
		}
		return err
	case errors.As(err, &limit):
		return &Error{Code: goal.CodeArgsInvalid,
			Msg: fmt.Sprintf("session %q would be new, but workspace %s already has %d sessions, the most a folder keeps (%d); use one of its sessions (agentd.sessions lists them)", name, w.root, limit.Stored, limit.Max)}
	case errors.As(err, &coded):
		return err
	}
	return fmt.Errorf("%w: session %q of workspace %s: %w", ErrNotSaved, name, w.root, err)
}

// Sessions returns every stored session (not the fresh ones only read by
// View), sorted by name (byte order), as private copies. A session whose
// record cannot be read (a team's etcd holds whatever anyone who can
// write it put there, docs/security.md) is left out and logged: it costs
// only itself, answering its error when it is named, and not the folder's
// opening on every machine.
func (w *Workspace) Sessions() ([]Session, error) {
	if w.closed.Load() {
		return nil, w.errClosed()
	}
	raw, err := w.store.List()
	if err != nil {
		return nil, w.readError("listing sessions", err)
	}
	out := make([]Session, 0, len(raw))
	for _, r := range raw {
		s, err := w.decodeStored(r.Name, r.Record)
		if err != nil {
			w.reg.log.Error("a stored session cannot be read; it is left out", "workspace", w.root, "session", r.Name, "err", err)
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// HistoryPage is one page of a session's history.
type HistoryPage struct {
	Events []Event // newest first; never nil
	// More says older events exist that are not in Events: the next page
	// is History with before = the Seq of the last event in Events.
	More bool
}

// History returns the newest events of the session with a Seq below before
// (before 0: the newest events of all), newest first: at most limit of them
// (limit <= 0 means 50, docs/protocol.md §3 agentd.history), and no more than
// fit in MaxHistoryPageBytes of stored records, but at least one when there
// is one. A session without history gives an empty page. Each event's seq
// is below before and below the event before it, so a caller that pages on
// the last seq always goes down: an event that breaks that order is a
// corrupt one. In a team folder a stored value that is not an event, or
// breaks that order, is left out (logged), so a page may hold fewer events
// than it read; an event of a newer agentd is refused (workspace.corrupt)
// there too.
func (w *Workspace) History(session string, limit int, before uint64) (HistoryPage, error) {
	name := sessionName(session)
	if w.closed.Load() {
		return HistoryPage{}, w.errClosed()
	}
	if limit <= 0 {
		limit = defaultHistoryLimit
	}
	raw, more, err := w.store.History(name, limit, before)
	if err != nil {
		return HistoryPage{}, w.readError(fmt.Sprintf("reading the history of session %q", name), err)
	}
	page := HistoryPage{Events: make([]Event, 0, len(raw)), More: more}
	prev := before // every event's seq is below the one before it: the callers page on it
	for _, data := range raw {
		ev, err := w.decodeEvent(name, data)
		if err == nil && (ev.Seq == 0 || prev > 0 && ev.Seq >= prev) {
			err = w.corruptRecord(fmt.Sprintf("a history event of session %q", name), fmt.Errorf("seq %d is not below %d, the seq it is stored under or before", ev.Seq, prev))
		}
		switch {
		case err != nil && w.Shared() && !errors.Is(err, errNewerRecord):
			// Whoever can write the team's etcd can put anything under the
			// history's prefix (docs/security.md, "Who is who"): a value
			// that is not an event agentd wrote costs its own entry, not
			// the session's history, undo and check provenance. An event of
			// a newer agentd is not left out: an undo would revert an older
			// change over it.
			w.reg.log.Warn("a history event in etcd cannot be read; it is left out", "workspace", w.root, "session", name, "err", err)
		case err != nil:
			return HistoryPage{}, err
		default:
			page.Events = append(page.Events, ev)
			prev = ev.Seq
		}
	}
	return page, nil
}
