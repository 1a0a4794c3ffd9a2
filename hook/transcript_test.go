package hook

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestReadNew: each read returns the complete lines written since the last
// one; a line still being written waits; a file rewritten shorter, or
// another file, or a negative offset, is read from its start.
func TestReadNew(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	var c cursor
	read := func() []string {
		var got []string
		if err := readNew(path, &c, func(b []byte) { got = append(got, string(b)) }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := read(); got != nil {
		t.Fatalf("no file yet: %q", got)
	}
	write := func(s string, flag int) {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|flag, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(s)
		f.Close()
	}
	write("one\ntwo\nthr", os.O_APPEND)
	if got := read(); !slices.Equal(got, []string{"one", "two"}) {
		t.Errorf("first read %q", got)
	}
	write("ee\n\nfour\n", os.O_APPEND)
	if got := read(); !slices.Equal(got, []string{"three", "four"}) {
		t.Errorf("second read %q, want the finished line and the next", got)
	}
	if got := read(); got != nil {
		t.Errorf("nothing new: %q", got)
	}
	write("new\n", os.O_TRUNC)
	if got := read(); !slices.Equal(got, []string{"new"}) {
		t.Errorf("after a rewrite %q", got)
	}
	other := filepath.Join(filepath.Dir(path), "u.jsonl")
	os.WriteFile(other, []byte("x\n"), 0o600)
	var got []string
	readNew(other, &c, func(b []byte) { got = append(got, string(b)) })
	if !slices.Equal(got, []string{"x"}) || c.Transcript != other {
		t.Errorf("another file: %q, cursor on %s", got, c.Transcript)
	}
	// A cursor file edited by hand or damaged to a negative offset is read
	// from the start, as a rewritten file, instead of failing every event.
	c.Offset = -5
	got = nil
	if err := readNew(other, &c, func(b []byte) { got = append(got, string(b)) }); err != nil || !slices.Equal(got, []string{"x"}) {
		t.Errorf("a negative offset: %q, %v; want the file from its start", got, err)
	}
}
