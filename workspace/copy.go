package workspace

import (
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
