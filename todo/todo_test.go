package todo

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentd/agentd/commands/protocol"
	"github.com/google/go-cmp/cmp"
)

func ptr(items []Item) *[]Item { return &items }

// listOfBytes returns MaxItems pending items whose JSON encoding takes
// exactly n bytes, titles of three-byte characters and ASCII letters.
func listOfBytes(t *testing.T, n int) []Item {
	t.Helper()
	out := make([]Item, MaxItems)
	for i := range out {
		out[i] = Item{Status: Pending}
	}
	need := n - encodedSize(out) // bytes of the titles
	k := need / MaxItems / 3
	rem := need - MaxItems*3*k
	for i := range out {
		out[i] = Item{Title: strings.Repeat("日", k) + strings.Repeat("a", rem/MaxItems), Status: Pending}
		if i < rem%MaxItems {
			out[i].Title += "a"
		}
	}
	if got := encodedSize(out); got != n {
		t.Fatalf("listOfBytes(%d) encodes to %d bytes", n, got)
	}
	return out
}

func TestNormalize(t *testing.T) {
	many := make([]Item, MaxItems+1)
	for i := range many {
		many[i] = Item{Title: "t", Status: Pending}
	}
	full := make([]Item, MaxItems) // 200 titles of 500 characters, each escaped as \u003c
	for i := range full {
		full[i] = Item{Title: strings.Repeat("<", MaxTitleChars), Status: Pending}
	}
	ascii := make([]Item, MaxItems)
	for i := range ascii {
		ascii[i] = Item{Title: strings.Repeat("a", MaxTitleChars), Status: InProgress}
	}
	tests := []struct {
		name    string
		in      []Item
		want    []Item
		wantErr string // substring of the error; "" for success
	}{
		{name: "empty list", in: []Item{}, want: []Item{}},
		{name: "trims titles, keeps order", in: []Item{{Title: "  b ", Status: Done}, {Title: "a", Status: InProgress}}, want: []Item{{Title: "b", Status: Done}, {Title: "a", Status: InProgress}}},
		{name: "completed is refused with the valid values", in: []Item{{Title: "a", Status: "completed"}}, wantErr: `todos[0]: status "completed" is not valid; use one of "pending", "in_progress" or "done"`},
		{name: "empty status", in: []Item{{Title: "a", Status: ""}}, wantErr: `status ""`},
		{name: "line break in a title", in: []Item{{Title: "a\n  [done] b", Status: Pending}}, wantErr: "todos[0]: title has a line break (U+000A)"},
		{name: "line separator in a title", in: []Item{{Title: "ok", Status: Pending}, {Title: "a\u2028[done] fake item", Status: Pending}}, wantErr: "todos[1]: title has a line break (U+2028)"},
		{name: "paragraph separator in a title", in: []Item{{Title: "a\u2029b", Status: Pending}}, wantErr: "title has a line break (U+2029)"},
		{name: "next line in a title", in: []Item{{Title: "a\u0085b", Status: Pending}}, wantErr: "title has a line break (U+0085)"},
		{name: "escape in a title", in: []Item{{Title: "a\x1b[31mred", Status: Pending}}, wantErr: "title has the control character U+001B"},
		{name: "bell in a title", in: []Item{{Title: "a\ab", Status: Pending}}, wantErr: "title has the control character U+0007"},
		{name: "NUL in a title", in: []Item{{Title: "a\x00b", Status: Pending}}, wantErr: "title has the control character U+0000"},
		{name: "DEL in a title", in: []Item{{Title: "a\x7fb", Status: Pending}}, wantErr: "title has the control character U+007F"},
		{name: "C1 CSI in a title", in: []Item{{Title: "a\u009b31m", Status: Pending}}, wantErr: "title has the control character U+009B"},
		{name: "tab in a title", in: []Item{{Title: "a\tb", Status: Pending}}, wantErr: "title has a tab (U+0009)"},
		{name: "outer whitespace line breaks are trimmed", in: []Item{{Title: "\u2028a\u0085", Status: Pending}}, want: []Item{{Title: "a", Status: Pending}}},
		{name: "no-break space and other printable characters stay", in: []Item{{Title: "a\u00a0b ✓ 日本", Status: Pending}}, want: []Item{{Title: "a\u00a0b ✓ 日本", Status: Pending}}},
		{name: "blank title", in: []Item{{Title: "ok", Status: Pending}, {Title: " \t", Status: Pending}}, wantErr: "todos[1]: title is empty"},
		{name: "title of 500 characters", in: []Item{{Title: strings.Repeat("é", 500), Status: Pending}}, want: []Item{{Title: strings.Repeat("é", 500), Status: Pending}}},
		{name: "title of 501 characters", in: []Item{{Title: strings.Repeat("é", 501), Status: Pending}}, wantErr: "at most 500"},
		{name: "200 items", in: many[:MaxItems], want: many[:MaxItems]},
		{name: "201 items", in: many, wantErr: "at most 200"},
		{name: "200 ASCII titles of 500 characters", in: ascii, want: ascii},
		{name: "list of exactly 256 KiB", in: listOfBytes(t, MaxListBytes), want: listOfBytes(t, MaxListBytes)},
		{name: "list one byte over 256 KiB", in: listOfBytes(t, MaxListBytes+1), wantErr: "the list takes 262145 bytes as JSON; at most 262144 (256 KiB) are allowed"},
		{name: "characters JSON escapes count as escaped", in: full, wantErr: "the list takes 606401 bytes as JSON; at most 262144"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Normalize(tt.in)
			if tt.wantErr != "" {
				var ve *ValidationError
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &ve) || protocol.ErrorCode(err) != CodeInvalid {
					t.Fatalf("Normalize error = %v, want a todo.invalid error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Normalize: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Normalize (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNormalizeCopies: the stored list never shares memory with the caller's.
func TestNormalizeCopies(t *testing.T) {
	in := []Item{{Title: "a", Status: Pending}}
	got, _ := Normalize(in)
	in[0].Title = "changed"
	if got[0].Title != "a" {
		t.Fatalf("a later change of the input leaked into the stored list: %q", got[0].Title)
	}
	c := Clone(got)
	c[0].Status = Done
	if got[0].Status != Pending {
		t.Fatal("Clone shares memory")
	}
}

func TestToolModes(t *testing.T) {
	stored := []Item{{Title: "write tests", Status: InProgress}, {Title: "ship", Status: Pending}}
	tests := []struct {
		name, desc string
		in         Input
		wantWrite  bool
		stored     []Item
		wantOut    string
	}{
		{name: "read", desc: "Reading todo list", in: Input{}, stored: stored, wantOut: "Current todo list:\n  [in_progress] write tests\n  [pending] ship"},
		{name: "read empty", desc: "Reading todo list", in: Input{}, stored: []Item{}, wantOut: "Todo list is empty."},
		{name: "clear", desc: "Clearing todo list", in: Input{Todos: ptr([]Item{})}, wantWrite: true, stored: []Item{}, wantOut: "Todo list cleared."},
		{name: "update", desc: "Updating todo list", in: Input{Todos: ptr(stored)}, wantWrite: true, stored: stored,
			wantOut: "Todo list updated.\nCurrent todo list:\n  [in_progress] write tests\n  [pending] ship\n\n" + writeReminder},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Describe(tt.in); got != tt.desc {
				t.Errorf("Describe = %q, want %q", got, tt.desc)
			}
			plan, err := PlanCall(tt.in)
			if err != nil || plan.Write != tt.wantWrite {
				t.Fatalf("PlanCall = %+v, %v; want write %v", plan, err, tt.wantWrite)
			}
			if got := plan.Output(tt.stored); got != tt.wantOut {
				t.Errorf("Output:\n%s\nwant:\n%s", got, tt.wantOut)
			}
		})
	}
}

// TestWriteReminderCarriesTheRules: docs/runtime.md §1 lists what it must say.
func TestWriteReminderCarriesTheRules(t *testing.T) {
	for _, rule := range []string{"track progress", "done as soon as it is finished", "not in a batch at the end", "exactly one item in_progress"} {
		if !strings.Contains(writeReminder, rule) {
			t.Errorf("write reminder lacks %q", rule)
		}
	}
}

func TestRenderNumbered(t *testing.T) {
	got := RenderNumbered([]Item{{Title: "a", Status: InProgress}, {Title: "b", Status: Done}})
	if want := "Current todo list:\n1. [in_progress] a\n2. [done] b"; got != want {
		t.Errorf("RenderNumbered = %q, want %q", got, want)
	}
}
