package goal

import (
	"fmt"
	"strconv"
)

// FormatElapsed writes a duration in milliseconds as UpdateGoal's stats do
// (docs/runtime.md §2.8): "45s" below a minute, "2m05s" below an hour, else
// "1h05m". Parts are truncated, never rounded up.
func FormatElapsed(ms int64) string {
	s := max(0, ms) / 1000
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
}

// FormatTokens writes a token count (docs/runtime.md §2.8): the plain number
// below 1000, "12.3k" below a million, else "1.2M". The decimal is
// truncated, so 999999 is "999.9k", never "1000.0k".
func FormatTokens(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000:
		return tenths(n/100) + "k"
	}
	return tenths(n/100_000) + "M"
}

func tenths(t int64) string { return fmt.Sprintf("%d.%d", t/10, t%10) }

// FormatStats is the stats line of a terminal UpdateGoal (docs/runtime.md §2.8):
// "Worked 3 turns over 2m05s, using 12.3k tokens."; "1 turn", "1 token".
func FormatStats(turns, tokens, wallClockMs int64) string {
	return fmt.Sprintf("Worked %s over %s, using %s.", Plural(turns, "turn"), FormatElapsed(wallClockMs), PluralShown(FormatTokens(tokens), tokens, "token"))
}

// Plural is n and a noun, singular only at exactly 1: "1 turn", "0 turns",
// "5 turns". All text for people and models counts with it or PluralShown.
func Plural(n int64, noun string) string {
	return PluralShown(strconv.FormatInt(n, 10), n, noun)
}

// PluralShown is Plural with n written as shown ("12.3k" for 12345 tokens).
func PluralShown(shown string, n int64, noun string) string {
	if n == 1 {
		return shown + " " + noun
	}
	return shown + " " + noun + "s"
}
