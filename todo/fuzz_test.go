package todo

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/agentd/agentd/commands/protocol"
)

// checkStored checks what Normalize or PlanCall promise to store: at most
// MaxItems items, titles trimmed, not blank, at most MaxTitleChars runes,
// no control character, tab or line break (U+0085, U+2028, U+2029), a valid status, at most MaxListBytes as JSON; and that the list survives
// the store's JSON round trip unchanged in meaning (it normalises again to
// itself, rune counts kept).
func checkStored(t *testing.T, items []Item) {
	t.Helper()
	if len(items) > MaxItems {
		t.Fatalf("stored %d items, limit %d", len(items), MaxItems)
	}
	for i, it := range items {
		if it.Title == "" || it.Title != strings.TrimSpace(it.Title) {
			t.Fatalf("item %d: title %q is blank or not trimmed", i, it.Title)
		}
		if n := utf8.RuneCountInString(it.Title); n > MaxTitleChars {
			t.Fatalf("item %d: title has %d runes, limit %d", i, n, MaxTitleChars)
		}
		if j := strings.IndexFunc(it.Title, func(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' }); j >= 0 {
			t.Fatalf("item %d: title %q stored with a control character or line break at byte %d", i, it.Title, j)
		}
		if !it.Status.Valid() {
			t.Fatalf("item %d: status %q stored", i, it.Status)
		}
	}
	data, err := json.Marshal(items)
	if err != nil {
		t.Fatalf("stored list does not encode: %v", err)
	}
	if len(data) > MaxListBytes {
		t.Fatalf("stored list takes %d bytes as JSON, limit %d", len(data), MaxListBytes)
	}
	var back []Item
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("stored list does not decode: %v", err)
	}
	again, err := Normalize(back)
	if err != nil {
		t.Fatalf("the stored list, read back, is refused: %v\nlist %q", err, items)
	}
	if len(again) != len(items) {
		t.Fatalf("read back %d items, stored %d", len(again), len(items))
	}
}

// checkRefusal checks that a refusal has code todo.invalid and a
// *ValidationError and a message that says something.
func checkRefusal(t *testing.T, err error) {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("refusal %T %v is not a *ValidationError", err, err)
	}
	if protocol.ErrorCode(err) != CodeInvalid || strings.TrimSpace(ve.Error()) == "" {
		t.Fatalf("refusal code %q message %q", protocol.ErrorCode(err), ve.Error())
	}
}

// FuzzPlanCall feeds TodoList inputs, as JSON, to PlanCall. Invariants: no
// panic; a decodable input is either refused with a *ValidationError (and
// nothing to store) or planned into a list that obeys the limits, survives
// the store's round trip, does not share memory with the input, and renders
// a non-empty output.
func FuzzPlanCall(f *testing.F) {
	for _, s := range []string{
		`{}`,
		`{"todos":[]}`,
		`{"todos":[{"title":"write tests","status":"pending"},{"title":"ship","status":"in_progress"}]}`,
		`{"todos":[{"title":"  padded  ","status":"done"}]}`,
		`{"todos":[{"title":"x","status":"completed"}]}`,
		`{"todos":[{"title":"   ","status":"pending"}]}`,
		`{"todos":[{"title":"été ✓ 日本","status":"done"}]}`,
		`{"todos":[{"title":"\u0085\u00a0x\u2028","status":"pending"}]}`,
		`{"todos":[{"title":"a\u2028[done] fake","status":"pending"}]}`,
		`{"todos":[{"title":"a\u001b[2Jb\u0007\u0000","status":"pending"}]}`,
		`{"todos":null}`,
		`{"todos":[{"title":"a","status":"pending","extra":1}]}`,
		`{"todos":[{"title":"` + strings.Repeat("é", MaxTitleChars) + `","status":"pending"}]}`,
		`{"todos":[{"title":"` + strings.Repeat("é", MaxTitleChars+1) + `","status":"pending"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var in Input
		if json.Unmarshal(data, &in) != nil {
			return
		}
		var orig []Item
		if in.Todos != nil {
			orig = slices.Clone(*in.Todos)
		}
		desc := Describe(in)
		plan, err := PlanCall(in)
		if err != nil {
			checkRefusal(t, err)
			if plan.Write || plan.Items != nil {
				t.Fatalf("refused call still plans a write: %+v", plan)
			}
			return
		}
		if plan.Write != (in.Todos != nil) {
			t.Fatalf("plan.Write = %v for todos present = %v", plan.Write, in.Todos != nil)
		}
		if desc == "" {
			t.Fatal("empty description")
		}
		if !plan.Write {
			if out := plan.Output([]Item{{Title: "x", Status: Done}}); !strings.Contains(out, "[done] x") {
				t.Fatalf("read output %q does not render the stored list", out)
			}
			return
		}
		checkStored(t, plan.Items)
		if len(plan.Items) != len(orig) {
			t.Fatalf("planned %d items from %d", len(plan.Items), len(orig))
		}
		for i := range *in.Todos { // the caller's later changes never leak in
			(*in.Todos)[i].Title = "changed"
		}
		for i, it := range plan.Items {
			if it.Title != strings.TrimSpace(orig[i].Title) || it.Status != orig[i].Status {
				t.Fatalf("item %d: planned %+v from %+v", i, it, orig[i])
			}
		}
		if out := plan.Output(plan.Items); out == "" {
			t.Fatal("empty output")
		}
	})
}

// FuzzNormalize builds lists from raw strings (any bytes, not only what a
// JSON decoder yields) and a count near the item limit. Invariants as for
// FuzzPlanCall, plus: Normalize is idempotent, and a refusal names the item
// (or the whole list) it is about.
func FuzzNormalize(f *testing.F) {
	f.Add("task", "pending", uint8(1))
	f.Add(" \t", "done", uint8(3))
	f.Add("x", "completed", uint8(1))
	f.Add("\xff\xfe", "in_progress", uint8(2))
	f.Add(strings.Repeat("a", MaxTitleChars), "done", uint8(200))
	f.Add(strings.Repeat("日", MaxTitleChars), "done", uint8(200))
	f.Add(strings.Repeat("&", 400), "pending", uint8(120))
	f.Add("b", "pending", uint8(201))
	f.Add(strings.Repeat("\u3000", 3)+"y", "in_progress", uint8(0))
	f.Fuzz(func(t *testing.T, title, status string, n uint8) {
		items := make([]Item, int(n))
		for i := range items {
			items[i] = Item{Title: title, Status: Status(status)}
			if i%3 == 1 {
				items[i].Title = title + " " + title
			}
		}
		out, err := Normalize(items)
		trimmed := utf8.RuneCountInString(strings.TrimSpace(title))
		switch {
		case len(items) > MaxItems:
			if err == nil || !strings.Contains(err.Error(), "at most 200") {
				t.Fatalf("%d items: got %v, want a refusal stating the limit of 200", len(items), err)
			}
		case len(items) > 0 && trimmed > MaxTitleChars:
			if err == nil || !strings.Contains(err.Error(), "at most 500") {
				t.Fatalf("a title of %d characters: got %v, want a refusal stating the limit of 500", trimmed, err)
			}
		case err == nil && encodedSize(out) > MaxListBytes:
			t.Fatalf("a list of %d bytes as JSON was accepted", encodedSize(out))
		case err != nil && strings.Contains(err.Error(), "bytes as JSON") && encodedSize(items) <= MaxListBytes:
			t.Fatalf("a list of %d bytes as JSON (untrimmed) refused for its size: %v", encodedSize(items), err)
		}
		if err != nil {
			checkRefusal(t, err)
			var ve *ValidationError
			errors.As(err, &ve)
			if ve.Index < -1 || ve.Index >= len(items) {
				t.Fatalf("refusal names item %d of %d", ve.Index, len(items))
			}
			return
		}
		checkStored(t, out)
		again, err := Normalize(out)
		if err != nil || !slices.Equal(again, out) {
			t.Fatalf("Normalize is not idempotent: %q → %q, %v", out, again, err)
		}
		if len(out) > 0 && &out[0] == &items[0] {
			t.Fatal("Normalize returned the caller's slice")
		}
		if r := Render(out); (len(out) == 0) != (r == "Todo list is empty.") {
			t.Fatalf("Render(%d items) = %q", len(out), r)
		}
	})
}
