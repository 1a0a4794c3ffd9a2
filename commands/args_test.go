package commands

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentd/agentd/commands/protocol"

	"github.com/agentd/agentd/jsonin"
	"github.com/agentd/agentd/reminder"
	"github.com/agentd/agentd/service"
	"github.com/agentd/agentd/workspace"
)

// TestUnwrapArguments: the shapes of docs/protocol.md §3.
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
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || protocol.ErrorCode(err) != protocol.CodeArgsInvalid {
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
		var a protocol.HistoryArgs
		err := jsonin.Decode(json.RawMessage(tt.raw), &a, "arguments")
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
		var a protocol.TodoSetArgs
		err := jsonin.Decode(json.RawMessage(tt.raw), &a, "arguments")
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
	var b protocol.GoalSetBudgetArgs
	if err := jsonin.Decode(json.RawMessage(`{"turns":3,"wallClockMs":null}`), &b, "arguments"); err != nil || !b.Turns.Set || !b.WallClockMs.Set {
		t.Errorf("budget args: %v %+v", err, b)
	}
}

// TestDecodeStrictInputs: the rules normalize adds to encoding/json
// (docs/protocol.md §3.1): [] is {} where an object is expected, a key
// twice is refused, null is no array and no array item.
func TestDecodeStrictInputs(t *testing.T) {
	tests := []struct {
		name, raw string
		want      string // the error says this; "" for success
		check     func(a protocol.TurnEndArgs) bool
	}{
		{"[] for the whole arguments", `[]`, "", func(a protocol.TurnEndArgs) bool { return a.TurnID == "" }},
		{"[] for a nested object", `{"turnId":"t","error":[]}`, "", func(a protocol.TurnEndArgs) bool { return a.Error != nil && a.Error.Kind == "" }},
		{"[ ] with spaces", `{"turnId":"t","error":[ ]}`, "", func(a protocol.TurnEndArgs) bool { return a.Error != nil }},
		{"null for an optional object", `{"turnId":"t","error":null}`, "", func(a protocol.TurnEndArgs) bool { return a.Error == nil }},
		{"a key twice at the top", `{"turnId":"a","turnId":"b"}`, `arguments: key "turnId" appears twice`, nil},
		{"a key twice in a nested object", `{"turnId":"t","error":{"kind":"x","kind":"y"}}`, `arguments.error: key "kind" appears twice`, nil},
		{"a non-empty array for an object", `{"turnId":"t","error":[1]}`, `field "error" must be an object`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a protocol.TurnEndArgs
			err := jsonin.Decode(json.RawMessage(tt.raw), &a, "arguments")
			if tt.want == "" {
				if err != nil || !tt.check(a) {
					t.Fatalf("decodeStrict(%s) = %v, %+v", tt.raw, err, a)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("decodeStrict(%s) = %v, want it to say %q", tt.raw, err, tt.want)
			}
		})
	}
	for raw, want := range map[string]string{
		`{"items":null}`:                        `arguments.items must be an array, got null`,
		`{"items":[null]}`:                      `arguments.items[0] must be an object, got null`,
		`{"items":[{"title":"a","title":"b"}]}`: `arguments.items[0]: key "title" appears twice`,
	} {
		var a protocol.TodoSetArgs
		if err := jsonin.Decode(json.RawMessage(raw), &a, "arguments"); err == nil || err.Error() != want {
			t.Errorf("decodeStrict(%s) = %v, want %q", raw, err, want)
		}
	}
	var s protocol.TodoSetArgs
	if err := jsonin.Decode(json.RawMessage(`{"items":[]}`), &s, "arguments"); err != nil || s.Items == nil || len(*s.Items) != 0 {
		t.Errorf("an empty items array: %v %+v", err, s)
	}
}

// TestConfigureEmptyTables: initializationOptions and settings sent as []
// (an empty Lua table) are empty objects; a key twice is refused.
func TestConfigureEmptyTables(t *testing.T) {
	svc := service.New(workspace.Options{StateDir: t.TempDir()}, service.OneShot)
	defer svc.Close()
	cl := NewClient(svc, Defaults{})
	defer cl.Close()
	for _, raw := range []string{`[]`, `{"settings":[]}`, `{"session":"s","settings":[ ]}`} {
		if _, err := cl.Configure(json.RawMessage(raw)); err != nil {
			t.Errorf("Configure(%s) = %v, want success", raw, err)
		}
	}
	if d := cl.Defaults(); d.Session != "s" || d.Settings != reminder.DefaultSettings() {
		t.Errorf("defaults after empty settings = %+v", d)
	}
	if _, err := cl.ConfigureSettings(json.RawMessage(`{"settings":{"agentd":[]}}`)); err != nil {
		t.Errorf("ConfigureSettings with agentd [] = %v", err)
	}
	for raw, want := range map[string]string{
		`{"session":"a","session":"b"}`:                              `initializationOptions: key "session" appears twice`,
		`{"settings":{"todoReminderSteps":1,"todoReminderSteps":2}}`: `initializationOptions.settings: key "todoReminderSteps" appears twice`,
		"{\"session\":\"\xff\"}":                                     `field "session" must be valid UTF-8`,
		`{"session":"\udc80"}`:                                       `field "session" must be valid UTF-8`,
		`{"settings":[1]}`:                                           `initializationOptions.settings must be an object, got an array`,
	} {
		if _, err := cl.Configure(json.RawMessage(raw)); err == nil || !strings.Contains(err.Error(), want) || protocol.ErrorCode(err) != protocol.CodeArgsInvalid {
			t.Errorf("Configure(%s) = %v, want args.invalid saying %q", raw, err, want)
		}
	}
}

// TestCheckNameUTF8: two different invalid byte strings never name one
// session; a name holding U+FFFD (what decoders make of them) is refused.
func TestCheckNameUTF8(t *testing.T) {
	for _, name := range []string{"\xff", "a\xfeb", "\ufffd", "x\ufffd"} {
		if err := checkName("session", name); err == nil || protocol.ErrorCode(err) != protocol.CodeArgsInvalid {
			t.Errorf("checkName(%q) = %v, want args.invalid", name, err)
		}
	}
	for _, name := range []string{"default", "café", "日本", "a b"} {
		if err := checkName("session", name); err != nil {
			t.Errorf("checkName(%q) = %v", name, err)
		}
	}
}
