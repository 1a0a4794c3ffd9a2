package todo

import (
	"reflect"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentd/agentd/jsonin"
)

// TestSchemaMatchesInput: InputSchema declares exactly Input's JSON fields
// (none required: no "todos" is a read) and, for each item, exactly Item's.
// The item schema requires title and status while the decoder does not:
// Normalize refuses a missing one as empty, with words that say what to do.
func TestSchemaMatchesInput(t *testing.T) {
	keys := func(schema map[string]any) []string {
		props, _ := schema["properties"].(map[string]any)
		var out []string
		for k := range props {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	sorted := func(s []string) []string { return slices.Sorted(slices.Values(s)) }
	names, required := jsonin.Fields(reflect.TypeFor[Input]())
	if diff := cmp.Diff(sorted(names), keys(InputSchema)); diff != "" {
		t.Errorf("schema properties vs Input fields (-struct +schema):\n%s", diff)
	}
	if _, ok := InputSchema["required"]; ok || len(required) > 0 {
		t.Errorf("required: schema %v, struct %v; want none", InputSchema["required"], required)
	}
	items := InputSchema["properties"].(map[string]any)["todos"].(map[string]any)["items"].(map[string]any)
	itemNames, _ := jsonin.Fields(reflect.TypeFor[Item]())
	if diff := cmp.Diff(sorted(itemNames), keys(items)); diff != "" {
		t.Errorf("item schema properties vs Item fields (-struct +schema):\n%s", diff)
	}
	if diff := cmp.Diff(sorted(itemNames), sorted(items["required"].([]string))); diff != "" {
		t.Errorf("item schema required (-Item fields +schema):\n%s", diff)
	}
}

// TestDecodeInput: a read, a write, an empty list, and the refusals that
// name the place.
func TestDecodeInput(t *testing.T) {
	for _, raw := range []string{``, `null`, `{}`, `[]`} {
		if in, err := DecodeInput([]byte(raw)); err != nil || in.Todos != nil {
			t.Errorf("DecodeInput(%q) = %+v, %v; want a read", raw, in, err)
		}
	}
	if in, err := DecodeInput([]byte(`{"todos":[]}`)); err != nil || in.Todos == nil || len(*in.Todos) != 0 {
		t.Errorf("an empty list: %+v, %v", in, err)
	}
	for raw, want := range map[string]string{
		`{"todos":null}`:                         `TodoList input.todos must be an array, got null`,
		`{"todos":[{"title":"a","Status":"x"}]}`: `TodoList input.todos[0]: unknown field "Status"`,
		`{"todos":[],"todos":[]}`:                `TodoList input: key "todos" appears twice`,
	} {
		if _, err := DecodeInput([]byte(raw)); err == nil || err.Error() != want {
			t.Errorf("DecodeInput(%s) = %v, want %q", raw, err, want)
		}
	}
}
