package main

import (
	"bytes"
	"testing"
)

// TestVisibleWriter: what a terminal would act on is written as <U+XXXX>;
// text, TAB, LF, CRLF and characters a terminal shows are written as they
// are.
func TestVisibleWriter(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"ship it\n", "ship it\n"},
		{"a\tb\r\nc\n", "a\tb\r\nc\n"},
		{"Check: touch x\x1b[1A\r\x1b[2K  Check: make test\n", "Check: touch x<U+001B>[1A<U+000D><U+001B>[2K  Check: make test\n"},
		{"title\x1b]0;pwned\a\n", "title<U+001B>]0;pwned<U+0007>\n"},
		{"abc\u202edcba\u2066x\u2069\n", "abc<U+202E>dcba<U+2066>x<U+2069>\n"},
		{"\u0085\u009b31m\x7f", "<U+0085><U+009B>31m<U+007F>"},
		{"émoji 👨\u200d💻 naïve\n", "émoji 👨\u200d💻 naïve\n"},
		{"end\r", "end<U+000D>"},
	} {
		var b bytes.Buffer
		n, err := visibleWriter{&b}.Write([]byte(tc.in))
		if err != nil || n != len(tc.in) || b.String() != tc.want {
			t.Errorf("Write(%q) = %d, %v, wrote %q; want %d, nil, %q", tc.in, n, err, b.String(), len(tc.in), tc.want)
		}
	}
}
