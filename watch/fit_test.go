package watch

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestFit: a line is cut by the cells a terminal gives it, not by bytes
// or runes: wide runes take two cells, an emoji sequence (a family, a
// flag) is one grapheme two cells wide and is never split, and the cut
// shows "…".
func TestFit(t *testing.T) {
	for _, tc := range []struct {
		in    string
		cells int
		want  string
	}{
		{"short line", 20, "short line"},
		{"exactly twenty cells", 20, "exactly twenty cells"},
		{"claude · goal active · 3/20 turns", 20, "claude · goal activ…"},
		{"解析器を書く解析器を書く", 20, "解析器を書く解析器…"},
		{"now: 解析器を書く解析器", 20, "now: 解析器を書く解…"},
		{"ab👨‍👩‍👧‍👦👨‍👩‍👧‍👦👨‍👩‍👧‍👦👨‍👩‍👧‍👦👨‍👩‍👧‍👦👨‍👩‍👧‍👦👨‍👩‍👧‍👦👨‍👩‍👧‍👦👨‍👩‍👧‍👦👨‍👩‍👧‍👦", 20, "ab👨‍👩‍👧‍👦👨‍👩‍👧‍👦👨‍👩‍👧‍👦👨‍👩‍👧‍👦👨‍👩‍👧‍👦👨‍👩‍👧‍👦👨‍👩‍👧‍👦👨‍👩‍👧‍👦…"},
		{"🇯🇵🇯🇵🇯🇵🇯🇵🇯🇵🇯🇵🇯🇵🇯🇵🇯🇵🇯🇵🇯🇵", 20, "🇯🇵🇯🇵🇯🇵🇯🇵🇯🇵🇯🇵🇯🇵🇯🇵🇯🇵…"},
		{"anything", 0, ""},
	} {
		got := Fit(tc.in, tc.cells)
		if got != tc.want {
			t.Errorf("Fit(%q, %d) = %q, want %q", tc.in, tc.cells, got, tc.want)
		}
		if w := ansi.StringWidth(got); w > tc.cells {
			t.Errorf("Fit(%q, %d) is %d cells wide", tc.in, tc.cells, w)
		}
		if !strings.HasPrefix(tc.in, strings.TrimSuffix(got, "…")) {
			t.Errorf("Fit(%q, %d) = %q is not a start of it", tc.in, tc.cells, got)
		}
	}
}
