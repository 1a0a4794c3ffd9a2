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
	}
	for _, tt := range tests {
		var a historyArgs
		err := decodeStrict(json.RawMessage(tt.raw), &a, "arguments")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("decodeStrict(%s) = %v, want it to say %q", tt.raw, err, tt.want)
		}
	}
}
