package workspace

import (
	"encoding/json"

	"github.com/agentd/agentd/goal"
)

// fromWatch takes a session write seen by the team's watch, another
// daemon's or this one's own, into the cache and tells subscribers of it
// (docs/team.md, "How notifications flow"). The watch is the one source of
// a team folder's notices: it delivers every write of the team's keys
// once, in revision order, while Update's own commit and its conflicts
// may cache a session before the watch brings the writes that made it.
// So the cache takes what is newer than what it holds (by version), and
// the notice goes out for every write whose session revision is above the
// last one told (sessionState.told), whatever was cached meanwhile: each
// change reaches each subscriber once, in revision order. A quiet change
// (counters only, no new revision, no history event) is cached and not
// told.
func (w *Workspace) fromWatch(name string, data []byte, ver int64, rawFlags, ev []byte) {
	if w.closed.Load() {
		return
	}
	st := w.state(name)
	st.mu.Lock()
	defer st.mu.Unlock()
	s, err := w.decodeSession(name, data)
	if err != nil {
		w.reg.log.Error("a session written by another daemon cannot be read", "workspace", w.root, "session", name, "err", err)
		return
	}
	prev := st.cur.Load()
	if prev == nil || ver > st.ver {
		cached := s
		st.cur.Store(&cached)
		st.ver = ver
		w.feedSession(&cached)
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
