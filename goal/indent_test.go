package goal

import (
	"encoding/json"
	"testing"
)

// TestIndent checks indent against json.MarshalIndent, byte for byte, on
// values with empty and nested containers and strings holding JSON's
// punctuation and escapes.
func TestIndent(t *testing.T) {
	for _, v := range []any{
		map[string]any{},
		[]any{},
		"a",
		map[string]any{"goal": nil},
		map[string]any{"a": []any{}, "b": map[string]any{}, "c": []any{1, "x", true, nil, []any{map[string]any{}}}},
		map[string]any{"s": `quote " backslash \ {[,:]} <&> é ` + "\n\t\u2028", `k"{`: map[string]any{"n": -1.5e10}},
		[]any{[]any{[]any{}}, map[string]any{"x": map[string]any{"y": []any{"z"}}}},
	} {
		compact, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.MarshalIndent(v, "", "  ")
		if got := indent(compact); got != string(want) {
			t.Errorf("indent(%s) =\n%s\nwant\n%s", compact, got, want)
		}
	}
}

// FuzzIndent checks indent against json.Indent on any valid compact JSON.
func FuzzIndent(f *testing.F) {
	f.Add(`{"goal":{"objective":"a \"b\" {c}","usage":{"turns":[1,2]},"x":[],"y":{}}}`)
	f.Fuzz(func(t *testing.T, s string) {
		var v any
		if json.Unmarshal([]byte(s), &v) != nil {
			return
		}
		compact, _ := json.Marshal(v)
		want, _ := json.MarshalIndent(v, "", "  ")
		if got := indent(compact); got != string(want) {
			t.Errorf("indent(%s) =\n%s\nwant\n%s", compact, got, want)
		}
	})
}
