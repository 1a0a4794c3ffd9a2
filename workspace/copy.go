package workspace

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/agentd/agentd/goal"
)

// cloneSession returns a copy of s that shares no mutable memory with it,
// so that callers may change what they get (Update's fn, View, notices).
func cloneSession(s Session) Session {
	s.Todos = slices.Clone(s.Todos) // todo.Item holds strings only
	s.Goal = cloneGoal()(s.Goal)
	return s
}

// storedForm returns the session that a reader of data, the stored record
// of s (encodeSession(s)), gets: what decodeSession(name, data) returns,
// without decoding data when a copy of s says the same. The record keeps
// every field of s (TestRecordRoundTrip); its JSON drops only monotonic
// clock readings (dropped here too), an empty list of turns (read as nil,
// as cloneSession makes it) and a time's location (a reader gets the same
// instant and zone offset). Two things it changes are not copied: a string
// that is not valid UTF-8 (stored with U+FFFD in place of its bad bytes)
// and a zone offset with seconds (stored in whole minutes); data is decoded
// for those, as for any U+FFFD in data. TestStoredFormIsWhatIsRead checks
// that the two agree.
func (w *Workspace) storedForm(name string, s Session, data []byte) (Session, error) {
	if bytes.Contains(data, []byte(`\ufffd`)) || bytes.Contains(data, []byte("\uFFFD")) {
		return w.decodeSession(name, data)
	}
	c := cloneSession(s)
	ok := storedTime(&c.UpdatedAt)
	if g := c.Goal.Goal; g != nil {
		ok = storedTime(&g.ActiveSince) && storedTime(&g.CreatedAt) && storedTime(&g.UpdatedAt) && ok
		if t := g.TaskFile; t != nil && t.ModifiedAt != nil {
			ok = storedTime(t.ModifiedAt) && ok
		}
	}
	for i := range c.Goal.Queue {
		ok = storedTime(&c.Goal.Queue[i].AddedAt) && ok
	}
	if !ok {
		return w.decodeSession(name, data)
	}
	return c, nil
}

// storedTime drops t's monotonic clock reading, as its JSON does, and says
// whether its JSON keeps the instant: a zone offset of whole minutes.
func storedTime(t *time.Time) bool {
	*t = t.Round(0)
	_, offset := t.Zone()
	return offset%60 == 0
}

// cloneGoal picks, once, the cheapest deep copy of goal.State: its own
// Clone method if package goal provides one, a plain assignment when the
// type holds no pointers, slices, maps or interfaces, else a JSON round
// trip (the store keeps it as JSON anyway, so nothing else survives).
var cloneGoal = sync.OnceValue(func() func(goal.State) goal.State {
	var zero goal.State
	if _, ok := any(zero).(interface{ Clone() goal.State }); ok {
		return func(g goal.State) goal.State { return any(g).(interface{ Clone() goal.State }).Clone() }
	}
	if _, ok := any(&zero).(interface{ Clone() goal.State }); ok {
		return func(g goal.State) goal.State { return any(&g).(interface{ Clone() goal.State }).Clone() }
	}
	if isFlat(reflect.TypeFor[goal.State]()) {
		return func(g goal.State) goal.State { return g }
	}
	return func(g goal.State) goal.State {
		data, err := json.Marshal(g)
		if err != nil {
			return g // cannot happen for a stored state: it was encoded to be stored
		}
		var out goal.State
		if json.Unmarshal(data, &out) != nil {
			return g
		}
		return out
	}
})

// isFlat says whether a value of type t can be copied by assignment without
// sharing mutable memory. time.Time counts as flat: its location pointer
// is immutable.
func isFlat(t reflect.Type) bool {
	if t == reflect.TypeFor[time.Time]() {
		return true
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String:
		return true
	case reflect.Array:
		return isFlat(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !isFlat(t.Field(i).Type) {
				return false
			}
		}
		return true
	default:
		return false
	}
}
