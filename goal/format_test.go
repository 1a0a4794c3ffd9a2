package goal

import "testing"

func TestFormatElapsed(t *testing.T) {
	tests := []struct {
		ms   int64
		want string
	}{
		{0, "0s"},
		{45_999, "45s"},
		{59_000, "59s"},
		{60_000, "1m00s"},
		{125_000, "2m05s"},
		{3_599_000, "59m59s"},
		{3_600_000, "1h00m"},
		{3_900_000, "1h05m"},
		{90_000_000, "25h00m"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := FormatElapsed(tt.ms); got != tt.want {
				t.Errorf("FormatElapsed(%d): got %q, want %q", tt.ms, got, tt.want)
			}
		})
	}
}

func TestFormatTokens(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0"},
		{999, "999"},
		{1000, "1.0k"},
		{12_345, "12.3k"},
		{999_999, "999.9k"},
		{1_000_000, "1.0M"},
		{1_234_567, "1.2M"},
		{45_600_000, "45.6M"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := FormatTokens(tt.n); got != tt.want {
				t.Errorf("FormatTokens(%d): got %q, want %q", tt.n, got, tt.want)
			}
		})
	}
}

func TestFormatStats(t *testing.T) {
	tests := []struct {
		turns, tokens, ms int64
		want              string
	}{
		{1, 999, 45_000, "Worked 1 turn over 45s, using 999 tokens."},
		{3, 12_345, 125_000, "Worked 3 turns over 2m05s, using 12.3k tokens."},
		{0, 1_234_567, 3_900_000, "Worked 0 turns over 1h05m, using 1.2M tokens."},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := FormatStats(tt.turns, tt.tokens, tt.ms); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
