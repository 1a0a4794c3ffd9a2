package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agentd/agentd/commands/protocol"
)

// TestRunViewPlain: off a terminal, agentd run prints a status line only
// when the status, the turn count or the item in progress changes, and
// escapes the control characters of texts from the store.
func TestRunViewPlain(t *testing.T) {
	var out bytes.Buffer
	v := newRunView(&out)
	st := protocol.State{Goal: &protocol.GoalSnapshot{Status: "active", TurnsUsed: 1, TokensUsed: 10},
		Todos: protocol.TodosState{Items: []protocol.TodoItem{{Title: "done one", Status: "done"}, {Title: "parse\x1b]0;pwned\a comments", Status: "in_progress"}}}}
	v.show("claude", st)
	st.Goal.TokensUsed = 20 // the same turn: no new line
	v.show("claude", st)
	st.Goal.TurnsUsed = 2
	v.show("claude", st)
	v.line("waiting: the goal is paused (\x1b[2J)")
	v.last("goal complete after 2 turns")
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 4:\n%s", len(lines), out.String())
	}
	if want := "claude · goal active · 1 turn · 10 tokens · 0s · now: parse<U+001B>]0;pwned<U+0007> comments"; lines[0] != want {
		t.Errorf("status line %q, want %q", lines[0], want)
	}
	if strings.ContainsAny(out.String(), "\x1b\a") {
		t.Errorf("a control character reached the output: %q", out.String())
	}
	if lines[3] != "goal complete after 2 turns" {
		t.Errorf("last line %q", lines[3])
	}
}
