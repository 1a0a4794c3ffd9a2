package workspace

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"go.etcd.io/bbolt"

	"github.com/agentd/agentd/todo"
)

// MaxHistory is the number of history events kept per session; appending
// one more deletes the oldest, in the same transaction.
const MaxHistory = 10000

// maxHistory is MaxHistory; tests lower it.
var maxHistory = MaxHistory

// defaultHistoryLimit is what History returns when asked for limit <= 0
// (PROTOCOL.md §3, agentd.history: limit defaults to 50).
const defaultHistoryLimit = 50

// Workspace is one open workspace folder: its store and the in-memory
// cache of its sessions. Get one from Registry.Open; its methods are safe
// for concurrent use until its last Release.
type Workspace struct {
	reg       *Registry
	root      string
	dir       string // <StateDir>/workspaces/<FolderKey(root)>
	path      string // dir/state.db
	db        *bbolt.DB
	recovered string

	// Guarded by reg.mu.
	refs    int
	ready   chan struct{} // closed once opening has finished
	openErr error         // set before ready is closed

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error

	mu       sync.RWMutex
	sessions map[string]*sessionState
}

// sessionState is the lock and the cache of one session.
type sessionState struct {
	mu  sync.Mutex              // held by Update for a whole change, and while loading
	cur atomic.Pointer[Session] // the committed session; nil until loaded; never mutated
}

// Root returns the folder path: absolute and cleaned.
func (w *Workspace) Root() string { return w.root }

// Release drops one reference taken by Registry.Open; the last one closes
// the store, releasing its file lock.
func (w *Workspace) Release() { w.reg.release(w) }

// Recovered returns, when Open found the state file unusable and moved it
// aside, a message for the user saying so and naming the moved file
// (PROTOCOL.md §1: the user is told with window/showMessage); "" otherwise.
func (w *Workspace) Recovered() string { return w.recovered }

func (w *Workspace) closeStore() error {
	w.closeOnce.Do(func() {
		w.reg.watch.dropWorkspace(w)
		w.closed.Store(true)
		if w.db != nil {
			w.closeErr = w.db.Close()
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
	var data []byte
	err := w.db.View(func(tx *bbolt.Tx) error {
		data = bytes.Clone(tx.Bucket(bucketSessions).Get([]byte(name)))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("workspace %s: reading session %q: %w", w.root, name, err)
	}
	s := newSession(name)
	if data != nil {
		if s, err = w.decodeSession(name, data); err != nil {
			return nil, err
		}
	}
	st.cur.Store(&s)
	return &s, nil
}

func newSession(name string) Session {
	return Session{Name: name, Todos: []todo.Item{}}
}

// storedSession is the record of the sessions bucket.
type storedSession struct {
	V int `json:"v"`
	Session
}

// storedEvent is the record of a history bucket.
type storedEvent struct {
	V int `json:"v"`
	Event
}

func (w *Workspace) decodeSession(name string, data []byte) (Session, error) {
	var rec storedSession
	if err := json.Unmarshal(data, &rec); err != nil {
		return Session{}, w.corruptRecord(fmt.Sprintf("session %q", name), err)
	}
	if err := w.checkRecordVersion(fmt.Sprintf("session %q", name), rec.V, sessionRecordVersion); err != nil {
		return Session{}, err
	}
	s := rec.Session
	s.Name = name
	if s.Todos == nil {
		s.Todos = []todo.Item{}
	}
	return s, nil
}

func (w *Workspace) decodeEvent(name string, data []byte) (Event, error) {
	var rec storedEvent
	what := fmt.Sprintf("a history event of session %q", name)
	if err := json.Unmarshal(data, &rec); err != nil {
		return Event{}, w.corruptRecord(what, err)
	}
	if err := w.checkRecordVersion(what, rec.V, eventRecordVersion); err != nil {
		return Event{}, err
	}
	return rec.Event, nil
}

func (w *Workspace) checkRecordVersion(what string, got, want int) error {
	switch {
	case got > want:
		return &Error{Code: CodeCorrupt, Path: w.path,
			Msg: fmt.Sprintf("%s in %s was written by a newer agentd (record version %d > %d); upgrade agentd", what, w.path, got, want)}
	case got < 1:
		return w.corruptRecord(what, fmt.Errorf("record version %d", got))
	}
	return nil
}

func (w *Workspace) corruptRecord(what string, err error) error {
	return &Error{Code: CodeCorrupt, Path: w.path, Err: err,
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
//   - otherwise one bbolt transaction writes the session and, unless
//     change.Quiet, bumps Revision by 1, sets TodosRevision = Revision when
//     change.Todos, sets UpdatedAt = Now() (UTC) and appends the history
//     event {seq, at, actor, kind, reason, payload} (payload = JSON of
//     change.Payload), deleting the oldest events beyond MaxHistory. Name,
//     Revision, TodosRevision and UpdatedAt are the store's: fn's edits of
//     them are ignored. Nil Todos are stored as [].
//
// After the commit, still under the session lock, subscribers get a Notice
// (not for Quiet changes), so notices of one session are in revision order
// (ARCHITECTURE.md, "State and concurrency"). It returns the committed
// session as a private copy, exactly as a later View or a restart reads it.
//
// A failed commit returns an error wrapping ErrNotSaved and the cause; the
// session keeps reading as before. fn runs under the session lock: it must
// be quick, do no I/O and not call Update of the same session.
func (w *Workspace) Update(session string, fn func(s *Session) (Change, error)) (Session, error) {
	name := sessionName(session)
	if w.closed.Load() {
		return Session{}, w.errClosed()
	}
	st := w.state(name)
	st.mu.Lock()
	defer st.mu.Unlock()
	cur, err := w.load(name, st)
	if err != nil {
		return Session{}, err
	}

	s := cloneSession(*cur)
	ch, err := fn(&s)
	if err != nil {
		return Session{}, err
	}
	if ch.Kind == "" && !ch.Quiet {
		return cloneSession(*cur), nil
	}

	s.Name = name
	if s.Todos == nil {
		s.Todos = []todo.Item{}
	}
	s.Revision, s.TodosRevision, s.UpdatedAt = cur.Revision, cur.TodosRevision, cur.UpdatedAt
	var ev Event
	if !ch.Quiet {
		now := w.reg.now().UTC()
		s.Revision++
		if ch.Todos {
			s.TodosRevision = s.Revision
		}
		s.UpdatedAt = now
		ev = Event{At: now, Actor: ch.Actor, Kind: ch.Kind, Reason: ch.Reason}
		if ch.Payload != nil {
			if ev.Payload, err = json.Marshal(ch.Payload); err != nil {
				return Session{}, fmt.Errorf("%w: session %q of workspace %s: encoding the history payload of %q: %w", ErrNotSaved, name, w.root, ch.Kind, err)
			}
		}
	}
	data, err := json.Marshal(storedSession{V: sessionRecordVersion, Session: s})
	if err != nil {
		return Session{}, fmt.Errorf("%w: session %q of workspace %s: encoding the session: %w", ErrNotSaved, name, w.root, err)
	}
	// The cache and the result are decoded from the bytes written, so they
	// are private and equal to what a restart reads.
	committed, err := w.decodeSession(name, data)
	if err != nil {
		return Session{}, fmt.Errorf("%w: %w", ErrNotSaved, err)
	}

	err = w.db.Update(func(tx *bbolt.Tx) error {
		if err := tx.Bucket(bucketSessions).Put([]byte(name), data); err != nil {
			return err
		}
		if ch.Quiet {
			return nil
		}
		return appendEvent(tx, name, ev)
	})
	if err != nil {
		return Session{}, fmt.Errorf("%w: session %q of workspace %s: %w", ErrNotSaved, name, w.root, err)
	}
	st.cur.Store(&committed)
	w.reg.watch.watchTaskFile(w, name, referencedTaskFile(committed.Goal))

	if !ch.Quiet {
		w.reg.publish(Notice{Workspace: w, Session: committed, Change: ch})
	}
	return cloneSession(committed), nil
}

// appendEvent appends ev to the history of session name, taking the next
// sequence number of its bucket, and deletes events beyond maxHistory.
func appendEvent(tx *bbolt.Tx, name string, ev Event) error {
	hb, err := tx.Bucket(bucketHistory).CreateBucketIfNotExists([]byte(name))
	if err != nil {
		return err
	}
	if ev.Seq, err = hb.NextSequence(); err != nil {
		return err
	}
	data, err := json.Marshal(storedEvent{V: eventRecordVersion, Event: ev})
	if err != nil {
		return err
	}
	if err := hb.Put(seqKey(ev.Seq), data); err != nil {
		return err
	}
	if ev.Seq <= uint64(maxHistory) {
		return nil
	}
	// Keys are contiguous sequence numbers, oldest first: usually exactly
	// one key is at or below the cut.
	cut := ev.Seq - uint64(maxHistory)
	c := hb.Cursor()
	for k, _ := c.First(); k != nil && (len(k) != 8 || binary.BigEndian.Uint64(k) <= cut); k, _ = c.First() {
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return nil
}

// Sessions returns every stored session (not the fresh ones only read by
// View), sorted by name (byte order), as private copies.
func (w *Workspace) Sessions() ([]Session, error) {
	if w.closed.Load() {
		return nil, w.errClosed()
	}
	type kv struct {
		name string
		data []byte
	}
	var raw []kv
	err := w.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketSessions).ForEach(func(k, v []byte) error {
			raw = append(raw, kv{string(k), bytes.Clone(v)})
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("workspace %s: listing sessions: %w", w.root, err)
	}
	out := make([]Session, 0, len(raw))
	for _, r := range raw { // bbolt iterates in key order
		s, err := w.decodeSession(r.name, r.data)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// History returns the newest events of the session, newest first, at most
// limit of them (limit <= 0 means 50, PROTOCOL.md §3 agentd.history). A
// session without history gives an empty, non-nil slice.
func (w *Workspace) History(session string, limit int) ([]Event, error) {
	name := sessionName(session)
	if w.closed.Load() {
		return nil, w.errClosed()
	}
	if limit <= 0 {
		limit = defaultHistoryLimit
	}
	var raw [][]byte
	err := w.db.View(func(tx *bbolt.Tx) error {
		hb := tx.Bucket(bucketHistory).Bucket([]byte(name))
		if hb == nil {
			return nil
		}
		c := hb.Cursor()
		for k, v := c.Last(); k != nil && len(raw) < limit; k, v = c.Prev() {
			raw = append(raw, bytes.Clone(v))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("workspace %s: reading the history of session %q: %w", w.root, name, err)
	}
	out := make([]Event, 0, len(raw))
	for _, data := range raw {
		ev, err := w.decodeEvent(name, data)
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, nil
}
