package protocol

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestCommandsTable: every command of the table has a unique agentd. id, a
// doc, an Args struct that embeds Common, so the dispatcher can read its
// common fields, and a Result struct.
func TestCommandsTable(t *testing.T) {
	seen := map[CommandID]bool{}
	for _, c := range Commands {
		if seen[c.ID] || !strings.HasPrefix(string(c.ID), "agentd.") {
			t.Errorf("command id %q is duplicated or not under agentd.", c.ID)
		}
		seen[c.ID] = true
		if c.Doc == "" || c.ArgsDoc == "" {
			t.Errorf("%s has no doc or no ARGS doc", c.ID)
		}
		if !reflect.PointerTo(c.Args).Implements(reflect.TypeFor[Args]()) {
			t.Errorf("%s: *%v does not embed Common", c.ID, c.Args)
		}
		if c.Result == nil || c.Result.Kind() != reflect.Struct || c.Result.PkgPath() != reflect.TypeFor[Spec]().PkgPath() {
			t.Errorf("%s: result %v is not a struct of this package", c.ID, c.Result)
		}
		if got, ok := Lookup(c.ID); !ok || got.ID != c.ID {
			t.Errorf("Lookup(%s) = %v, %v", c.ID, got, ok)
		}
	}
	if _, ok := Lookup("agentd.nope"); ok {
		t.Error("Lookup found a command the table does not declare")
	}
}

// TestBudgetUpdateRoundTrip: a budget change a client encodes leaves out
// what it keeps, sends null for what it removes and the number for what it
// sets, and decodes back to the same change.
func TestBudgetUpdateRoundTrip(t *testing.T) {
	a := GoalSetBudgetArgs{BudgetUpdate: BudgetUpdate{Turns: Limit(20), Tokens: NoLimit()}}
	raw, err := json.Marshal(a)
	if err != nil || string(raw) != `{"turns":20,"tokens":null}` {
		t.Fatalf("Marshal = %s, %v; want turns 20, tokens null, no wallClockMs", raw, err)
	}
	var back GoalSetBudgetArgs
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if !back.Turns.Set || *back.Turns.Value != 20 || !back.Tokens.Set || back.Tokens.Value != nil || back.WallClockMs.Set {
		t.Errorf("decoded %+v, want turns 20, tokens removed, wallClockMs kept", back)
	}
}
