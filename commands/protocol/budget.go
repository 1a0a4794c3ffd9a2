package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"unicode/utf8"
)

// LimitUpdate is one field of a user's budget change (docs/protocol.md §3,
// agentd.goal.setBudget): absent (Set false, the limit is kept), null (Set
// true, Value nil: the limit is removed) or a number (Set true, *Value).
// Its UnmarshalJSON tells the three apart when it is a struct field; a
// client leaves an unset one out with the omitzero option.
type LimitUpdate struct {
	Set   bool
	Value *float64
}

// Limit is a LimitUpdate that sets the limit to v.
func Limit(v float64) LimitUpdate { return LimitUpdate{Set: true, Value: &v} }

// NoLimit is a LimitUpdate that removes the limit.
func NoLimit() LimitUpdate { return LimitUpdate{Set: true} }

// UnmarshalJSON accepts null or a JSON number. Anything else, and a number
// beyond float64 (1e400), is a *json.UnmarshalTypeError, which the decoder
// completes with the field's name.
func (u *LimitUpdate) UnmarshalJSON(b []byte) error {
	u.Set = true
	u.Value = nil
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && strings.HasPrefix(typeErr.Value, "number") {
			return &json.UnmarshalTypeError{Value: "a number out of range (" + shortLine(string(b), 40) + ")", Type: reflect.TypeOf(v)}
		}
		return err
	}
	u.Value = &v
	return nil
}

// MarshalJSON writes null for a removed limit and the number for a set
// one.
func (u LimitUpdate) MarshalJSON() ([]byte, error) {
	if u.Value == nil {
		return []byte("null"), nil
	}
	return json.Marshal(*u.Value)
}

// BudgetUpdate is a user's budget change: each field absent, null or a
// number (docs/protocol.md §3). WallClockMs is in milliseconds.
type BudgetUpdate struct {
	Turns       LimitUpdate `json:"turns,omitzero"`
	Tokens      LimitUpdate `json:"tokens,omitzero"`
	WallClockMs LimitUpdate `json:"wallClockMs,omitzero"`
}

// shortLine is s on one line, cut to n characters, for an error that
// quotes what a client sent.
func shortLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > n {
		s = string([]rune(s)[:n-1]) + "…"
	}
	return s
}
