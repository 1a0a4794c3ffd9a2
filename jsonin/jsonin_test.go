package jsonin

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentd/agentd/commands/protocol"
)

// TestCheckDuplicates: the scan of values without a Go type to check
// against names the object holding the key twice, at any depth.
func TestCheckDuplicates(t *testing.T) {
	tests := []struct{ raw, want string }{
		{`{"a":1,"b":{"a":2},"c":[{"a":1},{"b":2}]}`, ""},
		{`{"value":1,"unit":"turns","value":2}`, `input: key "value" appears twice`},
		{`{"a":{"b":[1,{"c":1,"c":2}]}}`, `input.a.b[1]: key "c" appears twice`},
		{`{"a":[{"x":1},{"x":1,"y":[],"x":2}]}`, `input.a[1]: key "x" appears twice`},
		{`{"a":"b","b":"a"}`, ""},
	}
	for _, tt := range tests {
		s := scanner{data: []byte(tt.raw)}
		err := s.text(dups, nil, reflect.Value{}, "input")
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || err.Error() != tt.want) {
			t.Errorf("scan of %s = %v, want %q", tt.raw, err, tt.want)
		}
		var v any // a value of interface type gets the same check through Decode
		if err := Decode(json.RawMessage(`{"v":`+tt.raw+`}`), &struct {
			V *any `json:"v"`
		}{V: &v}, "input"); (err == nil) != (tt.want == "") {
			t.Errorf("Decode of %s inside an object = %v", tt.raw, err)
		}
	}
}

type sample struct {
	Name  string   `json:"name" jsonin:"required"`
	Count int      `json:"count"`
	Tags  []string `json:"tags,omitempty"`
	Flag  bool     `json:"-"`
}

// TestDecodeErrors: each problem is reported with its kind, the field
// concerned and a message naming the place.
func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		raw  string
		want Error
	}{
		{`{"count":1}`, Error{Problem: Missing, Field: "name", msg: `in: field "name" is required`}},
		{`{"name":null}`, Error{Problem: Missing, Field: "name", msg: `in: field "name" is required`}},
		{`{"name":"a","count":"x"}`, Error{Problem: WrongType, Field: "count", Want: "a whole number", msg: `in: field "count" must be a whole number, got string`}},
		{`{"name":"a","tags":null}`, Error{Problem: WrongType, Field: "tags", Want: "an array", msg: `in.tags must be an array, got null`}},
		{`{"name":"a","Flag":true}`, Error{Problem: Unknown, Field: "Flag", Known: []string{"name", "count", "tags"}, msg: `in: unknown field "Flag"`}},
		{`{"name":"a","name":"b"}`, Error{Problem: Duplicate, Field: "name", msg: `in: key "name" appears twice`}},
		{`[1]`, Error{Problem: NotObject, msg: `in must be a JSON object, got an array`}},
		{`{"name":`, Error{Problem: Malformed, msg: `in: malformed JSON: it ends too early`}},
		{`{"name":"a"} {}`, Error{Problem: Malformed, msg: `in: unexpected data after the object`}},
		{`{"count":"x","bogus":1}`, Error{Problem: Unknown, Field: "bogus", Known: []string{"name", "count", "tags"}, msg: `in: unknown field "bogus"`}},
		{`{"count":"x"}`, Error{Problem: Missing, Field: "name", msg: `in: field "name" is required`}},
	}
	for _, tt := range tests {
		var s sample
		err := Decode(json.RawMessage(tt.raw), &s, "in")
		var got *Error
		if !errors.As(err, &got) {
			t.Errorf("Decode(%s) = %v, want an *Error", tt.raw, err)
			continue
		}
		if diff := cmp.Diff(tt.want, *got, cmp.AllowUnexported(Error{})); diff != "" {
			t.Errorf("Decode(%s) (-want +got):\n%s", tt.raw, diff)
		}
		if code := protocol.ErrorCode(err); code != CodeArgsInvalid {
			t.Errorf("Decode(%s): code %q", tt.raw, code)
		}
	}
	for _, raw := range []string{``, `null`, `[]`, `[ ]`} {
		var v struct {
			Count int `json:"count"`
		}
		if err := Decode(json.RawMessage(raw), &v, "in"); err != nil {
			t.Errorf("Decode(%q) = %v, want the empty object", raw, err)
		}
	}
}

// TestDecodeGiven: a field tagged `jsonin:"given"` must be present and
// may be null.
func TestDecodeGiven(t *testing.T) {
	type given struct {
		Command *string `json:"command" jsonin:"given"`
	}
	for raw, want := range map[string]string{
		`{}`:                 `in: field "command" is required (null is allowed)`,
		`[]`:                 `in: field "command" is required (null is allowed)`,
		`null`:               `in: field "command" is required (null is allowed)`,
		`{"command":null}`:   "",
		`{"command":"true"}`: "",
	} {
		var g given
		err := Decode(json.RawMessage(raw), &g, "in")
		var got *Error
		switch {
		case want == "" && err != nil:
			t.Errorf("Decode(%s) = %v", raw, err)
		case want != "" && (!errors.As(err, &got) || got.Problem != Missing || got.Field != "command" || got.Error() != want):
			t.Errorf("Decode(%s) = %v, want %q", raw, err, want)
		}
	}
}

// TestFields: the JSON names in declaration order, embedded fields
// included, and the required ones.
func TestFields(t *testing.T) {
	type embedded struct {
		sample
		Extra string `json:"extra" jsonin:"required"`
	}
	names, required := Fields(reflect.TypeFor[*embedded]())
	if diff := cmp.Diff([]string{"name", "count", "tags", "extra"}, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"name", "extra"}, required); diff != "" {
		t.Errorf("required (-want +got):\n%s", diff)
	}
}
