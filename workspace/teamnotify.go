package workspace

import (
	"encoding/json"

	"slices"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/workspace/storage"
)

// fromWatch takes a session write seen by the team's watch, another
// daemon's or this one's own, into the cache and tells subscribers of it
// (docs/team.md, "How notifications flow"). The watch is the one source of
// a team folder's notices: it delivers every write of the team's keys
// once, in revision order, while Update's own commit and its conflicts
// may cache a session before the watch brings the writes that made it.
// So the cache takes what is newer than what it holds (by version, part
// by part: applyRemote), and
// the notice goes out for every write whose session revision is above the
// last one told (sessionState.told), whatever was cached meanwhile: each
// change reaches each subscriber once, in revision order. A quiet change
// (counters only, no new revision, no history event) is cached and not
// told.
func (w *Workspace) fromWatch(name string, rec storage.Record, rawFlags, ev []byte) {
	if w.closed.Load() {
		return
	}
	st := w.state(name)
	st.mu.Lock()
	defer st.mu.Unlock()
	prev := st.cur.Load()
	s, err := w.applyRemote(name, st, rec)
	if err != nil {
		w.reg.log.Error("a session written by another daemon cannot be read", "workspace", w.root, "session", name, "err", err)
		return
	}
	// A change that is told wrote its history event in the same
	// transaction; a quiet one wrote none. A write made outside agentd
	// (straight into etcd) has no event either, but it moved the revision
	// past what this daemon held: it is told too, as a goal.progress,
	// so that no panel keeps showing what etcd no longer holds.
	e, _, err := decodeEventRecord(ev)
	withEvent := ev != nil && err == nil && e.Seq == s.Revision
	outside := ev == nil && prev != nil && s.Revision > prev.Revision
	if !withEvent && !outside || s.Revision <= st.told {
		return
	}
	st.told = s.Revision
	ch := Change{Kind: goal.Change{Kind: goal.ChangeProgress}.EventKind(), Goal: true, Todos: s.TodosRevision == s.Revision}
	if withEvent {
		ch.Kind, ch.Actor, ch.Reason = e.Kind, goal.Actor(e.Actor), e.Reason
	}
	var flags changeFlags
	if rawFlags != nil && json.Unmarshal(rawFlags, &flags) == nil && flags.Revision == s.Revision {
		flags.apply(&ch)
	}
	w.reg.publish(Notice{Workspace: w, Session: cloneSession(s), Change: ch})
}

// applyRemote takes rec, what a write the watch saw put of session name
// (its parts; a whole record of an earlier agentd), into the cache part by
// part where it is newer than the cached part, and returns the session as
// that write left it: the cached parts with those it put. A session not
// cached is read first, unless the write put all of it. st.mu must be held.
func (w *Workspace) applyRemote(name string, st *sessionState, rec storage.Record) (Session, error) {
	if rec.Parts == nil {
		s, err := w.decodeSession(name, rec.Data)
		if err == nil && (st.cur.Load() == nil || rec.Version > max(st.base, slices.Max(st.vers[:]))) {
			if _, err = w.setLoaded(name, st, rec); err == nil {
				w.feedSession(st.cur.Load())
			}
		}
		return s, err
	}
	if st.cur.Load() == nil {
		var err error
		if len(rec.Parts) == numParts {
			_, err = w.setLoaded(name, st, rec)
		} else {
			_, err = w.load(name, st)
		}
		if err != nil {
			return Session{}, err
		}
	}
	in, vers := storedParts(rec)
	merged, written, mv := st.enc, st.enc, st.vers
	newer := false
	for i := range in {
		if in[i] == nil {
			continue
		}
		written[i] = in[i]
		if vers[i] > mv[i] {
			merged[i], mv[i], newer = in[i], vers[i], true
		}
	}
	if newer {
		s, err := w.decodeParts(name, merged)
		if err != nil {
			return Session{}, err
		}
		_, enc, err := encodeParts(s)
		if err != nil {
			return Session{}, err
		}
		st.cur.Store(&s)
		st.enc, st.vers = enc, mv
		if len(rec.Parts) == numParts { // a first write, or the one that deleted the whole record
			st.base, st.whole = 0, false
		}
		w.feedSession(&s)
	}
	if merged.changed(&written) == 0 {
		return *st.cur.Load(), nil
	}
	return w.decodeParts(name, written)
}
