package taskfile

import (
	"strings"
	"testing"

	"github.com/agentd/agentd/goal"
)

// TestCountCheckboxes: the checkbox forms of docs/task-files.md
// ("Checkboxes") count, look-alikes and fenced code blocks do not.
func TestCountCheckboxes(t *testing.T) {
	tests := []struct {
		name, text     string
		checked, total int // total 0: nil
	}{
		{"empty", "", 0, 0},
		{"no checkboxes", "# Task\n\nplain text\n- a bullet\n", 0, 0},
		{"the three forms", "- [ ] a\n- [x] b\n* [X] c\n", 2, 3},
		{"plus bullets", "+ [ ] a\n+ [x] b\n", 1, 2},
		{"indented items", "- [ ] a\n  - [x] b\n\t* [ ] c\n        + [X] d\n", 2, 4},
		{"CRLF line ends", "- [ ] a\r\n- [x] b\r\n", 1, 2},
		{"no final newline", "- [x] a", 1, 1},
		{"a box with no text", "- [ ]\n- [x]\n", 1, 2},
		{"a tab after the bullet and the box", "-\t[x]\tdone\n", 1, 1},
		{"several spaces after the bullet", "-   [ ] a\n", 0, 1},
		{"no space after the bullet", "-[ ] a\n", 0, 0},
		{"text right after the box", "- [x]done\n", 0, 0},
		{"other marks in the box", "- [-] a\n- [/] b\n- [xx] c\n- [] d\n", 0, 0},
		{"a link, not a box", "- [x](http://example.com)\n", 0, 0},
		{"numbered items", "1. [ ] a\n2) [x] b\n", 0, 0},
		{"quoted items", "> - [ ] a\n", 0, 0},
		{"inside a backtick fence", "- [ ] a\n```\n- [ ] b\n- [x] c\n```\n- [x] d\n", 1, 2},
		{"inside a tilde fence with an info string", "~~~markdown\n- [ ] b\n~~~\n- [ ] a\n", 0, 1},
		{"a shorter fence does not close", "````\n```\n- [ ] b\n````\n- [x] a\n", 1, 1},
		{"the other fence character does not close", "```\n~~~\n- [ ] b\n```\n- [ ] a\n", 0, 1},
		{"a fence line with text after it does not close", "```\n``` x\n- [ ] b\n```\n- [ ] a\n", 0, 1},
		{"a fence indented four spaces is no fence", "    ```\n- [ ] a\n", 0, 1},
		{"an unclosed fence runs to the end", "- [x] a\n```\n- [ ] b\n", 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CountCheckboxes([]byte(tt.text))
			if tt.total == 0 {
				if got != nil {
					t.Errorf("got %+v, want nil", *got)
				}
				return
			}
			if got == nil || *got != (goal.Checkboxes{Checked: tt.checked, Total: tt.total}) {
				t.Errorf("got %+v, want %d/%d", got, tt.checked, tt.total)
			}
		})
	}
}

// FuzzCountCheckboxes: any content gives nil or 0 <= checked <= total,
// total at most the number of lines, and adding an open checkbox line
// outside any fence adds exactly one to total.
func FuzzCountCheckboxes(f *testing.F) {
	for _, s := range []string{"- [ ] a\n- [x] b\n", "```\n- [ ] a\n```\n", "* [X]\r\n+ [ ]", "~~~~\n~~~\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := CountCheckboxes([]byte(s))
		lines := strings.Count(s, "\n") + 1
		if c != nil && (c.Total <= 0 || c.Checked < 0 || c.Checked > c.Total || c.Total > lines) {
			t.Fatalf("%q: %+v", s, *c)
		}
		if strings.Contains(s, "```") || strings.Contains(s, "~~~") {
			return
		}
		more := CountCheckboxes([]byte("- [ ] added\n" + s))
		total := 0
		if c != nil {
			total = c.Total
		}
		if more == nil || more.Total != total+1 {
			t.Fatalf("%q: adding a checkbox line gave %+v after %+v", s, more, c)
		}
	})
}
