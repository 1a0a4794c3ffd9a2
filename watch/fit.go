package watch

import "github.com/charmbracelet/x/ansi"

// Fit is s cut to at most cells terminal cells, counted by what a terminal
// shows (a wide rune takes two, an emoji sequence one grapheme's width),
// with "…" where it was cut: for a line that is redrawn in place, which a
// wrap would break (`agentd run`'s status line). s is text with no
// terminal controls (commands.VisibleText).
func Fit(s string, cells int) string {
	return ansi.Truncate(s, max(cells, 0), "…")
}
