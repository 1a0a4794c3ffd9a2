package main

import (
	"bytes"
	"fmt"
	"io"
	"unicode"
	"unicode/utf8"
)

// visibleWriter is what the shell commands print to a person through: every
// control character but TAB, LF and a CR before LF, and every bidirectional
// control, is written as <U+XXXX>. Objectives, todo titles, reasons and
// history come from the store, which in a team folder anyone with etcd
// access writes, and a repository's files reach setup's output: an escape
// sequence in one would redraw the terminal (show another check than the
// one being approved), set its title or write the clipboard
// (docs/security.md). Each Write is taken as whole runes, as the commands
// write whole lines.
type visibleWriter struct{ w io.Writer }

func (v visibleWriter) Write(p []byte) (int, error) {
	if !bytes.ContainsFunc(p, hiddenOnTerminal) {
		return v.w.Write(p)
	}
	var b bytes.Buffer
	for rest := p; len(rest) > 0; {
		r, n := utf8.DecodeRune(rest)
		if r == '\r' && len(rest) > 1 && rest[1] == '\n' || !hiddenOnTerminal(r) {
			b.Write(rest[:n])
		} else {
			fmt.Fprintf(&b, "<U+%04X>", r)
		}
		rest = rest[n:]
	}
	if _, err := v.w.Write(b.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// hiddenOnTerminal says whether a terminal would act on r rather than show
// it: a control character other than TAB and LF (C0, DEL, C1: ESC starts
// every escape sequence), or a bidirectional control, which reorders what
// follows it.
func hiddenOnTerminal(r rune) bool {
	switch {
	case r == '\t' || r == '\n':
		return false
	case unicode.IsControl(r):
		return true
	}
	return r == 0x061C || r == 0x200E || r == 0x200F || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}
