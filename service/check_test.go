package service

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentd/agentd/goal"
)

// TestTailBuffer: however much is written, in whatever pieces, the buffer
// holds at most 2×MaxCheckTailBytes and the tail is the last bytes, cut at
// a character boundary, with the note after it, within MaxCheckTailBytes.
func TestTailBuffer(t *testing.T) {
	var tb tailBuffer
	line := strings.Repeat("é", 50) + "\n" // 101 bytes, two-byte characters
	for range 20000 {
		tb.Write([]byte(line))
		if len(tb.buf) > 2*goal.MaxCheckTailBytes {
			t.Fatalf("buffer holds %d bytes", len(tb.buf))
		}
	}
	tb.Write([]byte("THE END\n"))
	got := tb.text("")
	if len(got) > goal.MaxCheckTailBytes || !utf8.ValidString(got) || !strings.HasSuffix(got, "é\nTHE END\n") {
		t.Errorf("tail of %d bytes, valid %v, ends %q", len(got), utf8.ValidString(got), got[max(0, len(got)-20):])
	}
	if len(got) < goal.MaxCheckTailBytes-2 {
		t.Errorf("tail of %d bytes, want about %d", len(got), goal.MaxCheckTailBytes)
	}
	if tb.total != int64(20000*len(line)+8) {
		t.Errorf("total %d", tb.total)
	}
	noted := tb.text("agentd: the check was killed: x")
	if len(noted) > goal.MaxCheckTailBytes || !strings.HasSuffix(noted, "THE END\nagentd: the check was killed: x\n") {
		t.Errorf("noted tail ends %q (%d bytes)", noted[max(0, len(noted)-60):], len(noted))
	}

	var one tailBuffer
	one.Write([]byte(strings.Repeat("x", 3*goal.MaxCheckTailBytes) + "\xff"))
	if got := one.text("n"); len(got) > goal.MaxCheckTailBytes || !utf8.ValidString(got) || !strings.HasSuffix(got, "x\uFFFD\nn\n") {
		t.Errorf("one big write with invalid UTF-8: %d bytes, ends %q", len(got), got[max(0, len(got)-10):])
	}
	var none tailBuffer
	if got := none.text("agentd: the check did not start: x"); got != "agentd: the check did not start: x\n" {
		t.Errorf("empty tail with a note: %q", got)
	}
}

// TestTailBufferRedactsAcrossCuts: a secret is redacted wherever it falls,
// also when it straddles the point where the buffer dropped older output
// or where the stored tail begins: no end of it of 4 bytes or more is
// left at the tail's start.
func TestTailBufferRedactsAcrossCuts(t *testing.T) {
	secret := "correct-horse-battery-staple"
	for _, before := range []int{0, 100, goal.MaxCheckTailBytes - 10, 2*goal.MaxCheckTailBytes + len(secret) - 5, 3 * goal.MaxCheckTailBytes} {
		for after := goal.MaxCheckTailBytes - len(secret); after <= goal.MaxCheckTailBytes+len(secret)+2; after++ {
			for _, chunk := range []int{1, 7, 4096, 1 << 20} {
				tb := newTailBuffer([]string{secret})
				out := strings.Repeat("a", before) + secret + strings.Repeat("b", after)
				for i := 0; i < len(out); i += chunk {
					tb.Write([]byte(out[i:min(len(out), i+chunk)]))
				}
				got := tb.text("")
				if strings.Contains(got, secret) || len(got) > goal.MaxCheckTailBytes {
					t.Fatalf("before %d after %d chunk %d: the secret is shown (%d bytes)", before, after, chunk, len(got))
				}
				for k := 4; k < len(secret); k++ {
					if strings.HasPrefix(got, secret[len(secret)-k:]) {
						t.Fatalf("before %d after %d chunk %d: the tail begins with the secret's end %q", before, after, chunk, secret[len(secret)-k:])
					}
				}
			}
		}
	}
}
