package workspace

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentd/agentd/workspace/storage"
)

// A session in parts (docs/team.md, "A session in parts"): a session's
// record is made of parts that change independently, each a JSON object
// whose fields are disjoint from the others', so that the parts decoded
// into one sessionRecord give the whole record. A team's store keeps each
// part under a key of its own, and a commit compares only the parts its
// change read (storage.Interface); the folder's bbolt file keeps the whole
// record, as before.

// Parts is a set of the parts of a session's record.
type Parts uint8

// The parts of a session's record.
const (
	// PartHead: v, name, revision, updatedAt and requests; every change
	// that is not quiet writes it (the revision).
	PartHead Parts = 1 << iota
	// PartTodo: the todo list, its revision, the subagents' lists and the
	// count of the main agent's TodoList writes (todo.Usage.Writes).
	PartTodo
	// PartUsage: the stale todo reminder's counters but Writes (todo.Usage).
	PartUsage
	// PartGoal: the goal and its pending cancel notice.
	PartGoal
	// PartTurns: the turns and the outstanding continuation.
	PartTurns
	// PartQueue: the queue and auto-advance.
	PartQueue

	// AllParts is every part: what a change that names none reads.
	AllParts = PartHead | PartTodo | PartUsage | PartGoal | PartTurns | PartQueue
)

// numParts is the number of parts; partNames names each, in the order of
// their bits: the names a store keeps them under.
const numParts = 6

var partNames = [numParts]string{"head", "todo", "usage", "goal", "turns", "queue"}

func (p Parts) has(i int) bool { return p&(1<<i) != 0 }

// String names the parts of p, for messages.
func (p Parts) String() string {
	out := ""
	for i, name := range partNames {
		if p.has(i) {
			if out != "" {
				out += ","
			}
			out += name
		}
	}
	return out
}

// partData is the encoding of each part of a record, by bit order.
type partData [numParts][]byte

// The JSON object of each part but todo (todoPartRecord).
type (
	headPartRecord struct {
		V         int             `json:"v"`
		Name      string          `json:"name"`
		Revision  uint64          `json:"revision"`
		UpdatedAt time.Time       `json:"updatedAt"`
		Requests  []requestRecord `json:"requests,omitempty"`
	}
	usagePartRecord struct {
		TodoUsage todoUsageRecord `json:"todoUsage"`
	}
	goalOnlyRecord struct {
		Goal goalPartRecord `json:"goal"`
	}
	turnsOnlyRecord struct {
		Goal turnsPartRecord `json:"goal"`
	}
	queueOnlyRecord struct {
		Goal queuePartRecord `json:"goal"`
	}
)

// splitRecord returns the encoding of each part of rec.
func splitRecord(rec *sessionRecord) (partData, error) {
	values := [numParts]any{
		headPartRecord{V: rec.V, Name: rec.Name, Revision: rec.Revision, UpdatedAt: rec.UpdatedAt, Requests: rec.Requests},
		rec.todoPartRecord,
		usagePartRecord{TodoUsage: rec.TodoUsage},
		goalOnlyRecord{Goal: rec.Goal.goalPartRecord},
		turnsOnlyRecord{Goal: rec.Goal.turnsPartRecord},
		queueOnlyRecord{Goal: rec.Goal.queuePartRecord},
	}
	var d partData
	for i, v := range values {
		var err error
		if d[i], err = json.Marshal(v); err != nil {
			return partData{}, fmt.Errorf("encoding the %s part: %w", partNames[i], err)
		}
	}
	return d, nil
}

// joinParts decodes the parts of a record into one (a part absent leaves
// its fields zero).
func joinParts(d partData) (sessionRecord, error) {
	var rec sessionRecord
	for i, data := range d {
		if data == nil {
			continue
		}
		if err := json.Unmarshal(data, &rec); err != nil {
			return sessionRecord{}, fmt.Errorf("the %s part: %w", partNames[i], err)
		}
	}
	return rec, nil
}

// encodeParts returns the record of s whole and in parts.
func encodeParts(s Session) (whole []byte, d partData, err error) {
	rec := sessionToRecord(s)
	if whole, err = json.Marshal(rec); err != nil {
		return nil, partData{}, fmt.Errorf("encoding the session record: %w", err)
	}
	d, err = splitRecord(&rec)
	return whole, d, err
}

// changed returns the parts whose encodings differ between a and b.
func (a *partData) changed(b *partData) Parts {
	var p Parts
	for i := range a {
		if string(a[i]) != string(b[i]) {
			p |= 1 << i
		}
	}
	return p
}

// storedParts returns the parts of rec, a record read in parts, and their
// versions.
func storedParts(rec storage.Record) (d partData, vers [numParts]int64) {
	for i, name := range partNames {
		if p, ok := rec.Parts[name]; ok {
			d[i], vers[i] = p.Data, p.Version
		}
	}
	return d, vers
}

// decodeStored decodes rec, the stored record of session name, whole or
// in parts.
func (w *Workspace) decodeStored(name string, rec storage.Record) (Session, error) {
	if rec.Parts == nil {
		return w.decodeSession(name, rec.Data)
	}
	d, _ := storedParts(rec)
	return w.decodeParts(name, d)
}

// decodeParts decodes the parts of session name.
func (w *Workspace) decodeParts(name string, d partData) (Session, error) {
	rec, err := joinParts(d)
	if err != nil {
		return Session{}, w.corruptRecord(fmt.Sprintf("session %q", name), err)
	}
	if err := w.checkRecordVersion(fmt.Sprintf("session %q", name), rec.V, sessionRecordVersion); err != nil {
		return Session{}, err
	}
	s := sessionFromRecord(rec)
	s.Name = name
	return s, nil
}

// commitParts is what a change writes and compares of its session's
// parts: wrote the parts whose encoding changed (cur's in st.enc, the new
// ones in d), all of them when the session was read whole (st.whole);
// reads what the change declared (Change.Reads; none: every part), and
// head whenever it writes it (the revision moves). A change that wrote a
// part it did not declare reading is refused: comparing only what it
// declared, it could overwrite a change of that part it never saw.
func (w *Workspace) commitParts(name string, st *sessionState, d *partData, declared Parts) (write map[string][]byte, read map[string]int64, err error) {
	changed := st.enc.changed(d)
	reads := declared
	if reads == 0 {
		reads = AllParts
	}
	if extra := changed &^ reads &^ PartHead; extra != 0 {
		return nil, nil, fmt.Errorf("%w: session %q of workspace %s: internal error: the change wrote the parts %s but declared reading %s only", ErrNotSaved, name, w.root, extra, reads)
	}
	reads |= changed & PartHead
	if st.whole {
		changed = AllParts
	}
	write, read = map[string][]byte{}, map[string]int64{}
	for i, n := range partNames {
		if changed.has(i) {
			write[n] = d[i]
		}
		if reads.has(i) {
			read[n] = st.vers[i]
		}
	}
	return write, read, nil
}
