package commands

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestUnwrapArguments: the shapes of PROTOCOL.md §3.
func TestUnwrapArguments(t *testing.T) {
	tests := []struct {
		raw, want, wantErr string
	}{
		{raw: "", want: "{}"},
		{raw: "null", want: "{}"},
		{raw: "[]", want: "{}"},
		{raw: "[{}]", want: "{}"},
		{raw: "[[]]", want: "{}"},
		{raw: "[null]", want: "{}"},
		{raw: `[{"a":1}]`, want: `{"a":1}`},
		{raw: `{"a":1}`, wantErr: "must be an array"},
		{raw: `[1]`, wantErr: "arguments[0] must be an object, got a number"},
		{raw: `[{}, {}]`, wantErr: "one object, got 2"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got, err := UnwrapArguments(json.RawMessage(tt.raw))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || ErrorCode(err) != CodeArgsInvalid {
					t.Fatalf("got %s, %v; want args.invalid containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

// TestDecodeStrictNamesTheField: errors name what is wrong.
func TestDecodeStrictNamesTheField(t *testing.T) {
	tests := []struct{ raw, want string }{
		{`{"limit":"x"}`, `field "limit" must be a whole number, got string`},
		{`{"limt":5}`, `unknown field "limt"`},
		{`{"limit":5} {}`, "unexpected data after the object"},
		{`[1]`, "must be a JSON object, got an array"},
		{`{"limit":`, "malformed JSON"},
		{`{"LIMIT":5}`, `unknown field "LIMIT"`},
	}
	for _, tt := range tests {
		var a historyArgs
		err := decodeStrict(json.RawMessage(tt.raw), &a, "arguments")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("decodeStrict(%s) = %v, want it to say %q", tt.raw, err, tt.want)
		}
	}
}

// TestDecodeStrictExactCase: keys must match exactly at every level, even
// where encoding/json would accept another case.
func TestDecodeStrictExactCase(t *testing.T) {
	tests := []struct{ raw, want string }{
		{`{"items":[{"title":"a","status":"pending","Status":"done"}]}`, `arguments.items[0]: unknown field "Status"`},
		{`{"Items":[]}`, `unknown field "Items"`},
		{`{"Session":"s","items":[]}`, `unknown field "Session"`},
		{`{"session":"s","items":[{"title":"a","status":"pending"}],"expectedRevision":3}`, ""},
	}
	for _, tt := range tests {
		var a todoSetArgs
		err := decodeStrict(json.RawMessage(tt.raw), &a, "arguments")
		if tt.want == "" {
			if err != nil {
				t.Errorf("decodeStrict(%s) = %v, want success", tt.raw, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("decodeStrict(%s) = %v, want it to say %q", tt.raw, err, tt.want)
		}
	}
	var b goalBudgetArgs
	if err := decodeStrict(json.RawMessage(`{"turns":3,"wallClockMs":null}`), &b, "arguments"); err != nil || !b.Turns.Set || !b.WallClockMs.Set {
		t.Errorf("budget args: %v %+v", err, b)
	}
}
