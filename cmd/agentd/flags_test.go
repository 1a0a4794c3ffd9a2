package main

import (
	"errors"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
)

// TestParseInterspersed: flags before and after the arguments; "--" ends
// the flags; text that starts with "-" but holds a space, and numbers, are
// arguments; --help returns the arguments before it; an unknown flag is
// refused suggesting "--" (docs/behaviour.md, "Shell commands").
func TestParseInterspersed(t *testing.T) {
	for _, tt := range []struct {
		args    []string
		pos     []string
		replace bool
		reason  string
		err     string // part of the error; "" for none
	}{
		{args: []string{"goal", "create", "x", "--replace"}, pos: []string{"goal", "create", "x"}, replace: true},
		{args: []string{"goal", "create", "--", "-v", "--replace"}, pos: []string{"goal", "create", "-v", "--replace"}},
		{args: []string{"--replace", "goal", "create", "--", "--x"}, pos: []string{"goal", "create", "--x"}, replace: true},
		{args: []string{"goal", "create", "-v flag support"}, pos: []string{"goal", "create", "-v flag support"}},
		{args: []string{"goal", "create", "--no\tflag"}, pos: []string{"goal", "create", "--no\tflag"}},
		{args: []string{"goal", "pause", "--reason=a long lunch"}, pos: []string{"goal", "pause"}, reason: "a long lunch"},
		{args: []string{"goal", "budget", "-3", "turns"}, pos: []string{"goal", "budget", "-3", "turns"}},
		{args: []string{"goal", "create", "-v"}, err: "unknown flag -v (see agentd --help; to pass text that starts with -, put it after --)"},
		{args: []string{"goal", "create", "--help", "x"}, pos: []string{"goal", "create"}, err: "help requested"},
		{args: []string{"goal", "pause", "--reason"}, err: "flag --reason needs a value"},
	} {
		var o options
		fs := newFlagSet(&o, io.Discard)
		pos, err := parseInterspersed(fs, tt.args)
		switch {
		case tt.err == "" && err != nil, tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("parseInterspersed(%q): error %v, want %q", tt.args, err, tt.err)
		case tt.err == "help requested" && !errors.Is(err, flag.ErrHelp):
			t.Errorf("parseInterspersed(%q): error %v, want flag.ErrHelp", tt.args, err)
		case !slices.Equal(pos, tt.pos) || o.replace != tt.replace || o.reason != tt.reason:
			t.Errorf("parseInterspersed(%q) = %q, replace %v, reason %q; want %q, %v, %q", tt.args, pos, o.replace, o.reason, tt.pos, tt.replace, tt.reason)
		}
	}
}
