package goal

import (
	"encoding/json"
	"os"
	"testing"
)

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

// formatVectors are the shared vectors of testdata/format.json: the
// extension and the Neovim plugin run the same file, so all three clients
// write a goal alike.
type formatVectors struct {
	Tokens []struct {
		N    int64  `json:"n"`
		Want string `json:"want"`
	} `json:"tokens"`
	Elapsed []struct {
		Ms   int64  `json:"ms"`
		Want string `json:"want"`
	} `json:"elapsed"`
	Stats []struct {
		Turns       int64  `json:"turns"`
		Tokens      int64  `json:"tokens"`
		WallClockMs int64  `json:"wallClockMs"`
		Want        string `json:"want"`
	} `json:"stats"`
}

func TestFormatVectors(t *testing.T) {
	raw, err := os.ReadFile("testdata/format.json")
	if err != nil {
		t.Fatal(err)
	}
	var v formatVectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Tokens) == 0 || len(v.Elapsed) == 0 || len(v.Stats) == 0 {
		t.Fatalf("testdata/format.json lacks vectors: %d tokens, %d elapsed, %d stats", len(v.Tokens), len(v.Elapsed), len(v.Stats))
	}
	for _, c := range v.Tokens {
		if got := FormatTokens(c.N); got != c.Want {
			t.Errorf("FormatTokens(%d) = %q, want %q", c.N, got, c.Want)
		}
	}
	for _, c := range v.Elapsed {
		if got := FormatElapsed(c.Ms); got != c.Want {
			t.Errorf("FormatElapsed(%d) = %q, want %q", c.Ms, got, c.Want)
		}
	}
	for _, c := range v.Stats {
		if got := FormatStats(c.Turns, c.Tokens, c.WallClockMs); got != c.Want {
			t.Errorf("FormatStats(%d, %d, %d) = %q, want %q", c.Turns, c.Tokens, c.WallClockMs, got, c.Want)
		}
	}
}
