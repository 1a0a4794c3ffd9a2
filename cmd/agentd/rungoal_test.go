package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
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

// TestRunRecordChoosesNoFlag: the run record's session id goes on the
// agent's command line (claude --resume ID), and an agent's shell can
// write the file, so a recorded id that is not a UUID is no record: it
// never becomes a flag of the next process (docs/security.md, "agentd run
// starts only the agent you named"). A good record is read back.
func TestRunRecordChoosesNoFlag(t *testing.T) {
	state, folder := t.TempDir(), t.TempDir()
	d := &driver{name: "claude", recPath: runFile(state, folder, ".json")}
	good := newSessionID()
	d.rec = runRecord{Agent: "claude", GoalID: "g1", SessionID: good}
	if err := d.save(); err != nil {
		t.Fatal(err)
	}
	if rec, _ := loadRunRecord(state, folder); rec.SessionID != good {
		t.Fatalf("a saved record read back as %+v", rec)
	}
	for _, id := range []string{"--dangerously-skip-permissions", good + " --model x", "-", strings.ToUpper(good)} {
		b, _ := json.Marshal(runRecord{Agent: "claude", GoalID: "g1", SessionID: id})
		if err := os.WriteFile(d.recPath, b, 0o600); err != nil {
			t.Fatal(err)
		}
		rec, _ := loadRunRecord(state, folder)
		d.rec = rec
		got, resume := d.session(&protocol.GoalSnapshot{GoalID: "g1"})
		args := headlessAgents["claude"].start(got, nil)
		if resume {
			args = headlessAgents["claude"].resume(got, nil)
		}
		if resume || slices.Contains(args, id) {
			t.Errorf("recorded session id %q: resume %v, args %q", id, resume, args)
		}
	}
}

// TestRunRecordSavedThroughANewFile: a link left at a name the record
// might be written through is not followed: the file it points to keeps
// its bytes.
func TestRunRecordSavedThroughANewFile(t *testing.T) {
	state, folder := t.TempDir(), t.TempDir()
	d := &driver{recPath: runFile(state, folder, ".json"), rec: runRecord{Agent: "claude", SessionID: newSessionID()}}
	if err := os.MkdirAll(filepath.Dir(d.recPath), 0o700); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, d.recPath+".tmp"); err != nil {
		t.Fatal(err)
	}
	if err := d.save(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the file a link pointed to now holds %q", b)
	}
	if fi, err := os.Lstat(d.recPath); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Errorf("the record: %v, %v", fi, err)
	}
}

// TestRunViewTerminalCut: on a terminal 20 cells wide, the status line
// is cut to 19 cells (watch.Fit, by cells: tested there with wide runes
// and emoji) at each redraw, also when an event line is written above it,
// so that it never wraps and a redraw clears all of it.
func TestRunViewTerminalCut(t *testing.T) {
	var out bytes.Buffer
	v := &runView{w: &out, terminal: true, width: func() int { return 20 }, noted: map[string]bool{}}
	st := protocol.State{Goal: &protocol.GoalSnapshot{Status: "active", TurnsUsed: 3},
		Todos: protocol.TodosState{Items: []protocol.TodoItem{{Title: "解析器を書く 👨‍👩‍👧‍👦 and test it", Status: "in_progress"}}}}
	v.show("claude", st)
	v.line("starting claude (session 5f0c)")
	const status = "claude · goal acti…" // 19 cells
	if want := clearLine + status + clearLine + "starting claude (session 5f0c)\n" + status; out.String() != want {
		t.Errorf("terminal output %q, want %q", out.String(), want)
	}
}

// TestRunCodexNamedSession: the session Codex names in its output's header
// ("session id: ID") is the one the next process resumes (codex exec
// resume ID -); only the output of the process that ran is read, the
// first id wins (the model's text comes after the header), and an id that
// is not a UUID is none, so nothing in the log, which an agent's shell can
// write, becomes a flag.
func TestRunCodexNamedSession(t *testing.T) {
	log := filepath.Join(t.TempDir(), "run.log")
	older, own, later := newSessionID(), newSessionID(), newSessionID()
	head := "session id: " + older + "\n"
	body := "OpenAI Codex v0.169.0\n--------\nworkdir: /w\nsession id: " + own + "\n--------\nuser\nsession id: " + later + "\n"
	if err := os.WriteFile(log, []byte(head+body), 0o600); err != nil {
		t.Fatal(err)
	}
	d := &driver{agent: headlessAgents["codex"]}
	if got := d.namedSession(log, int64(len(head))); got != own {
		t.Errorf("named session %q, want %q", got, own)
	}
	if args := d.agent.resume(own, []string{"--skip-git-repo-check"}); !slices.Equal(args, []string{"exec", "resume", "--skip-git-repo-check", own, "-"}) {
		t.Errorf("resume args %q", args)
	}
	for _, bad := range []string{"--dangerously-bypass-approvals-and-sandbox", own + "x", strings.ToUpper(own)} {
		if err := os.WriteFile(log, []byte("session id: "+bad+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := d.namedSession(log, 0); got != "" {
			t.Errorf("output naming %q gave session %q, want none", bad, got)
		}
	}
	if id, resume := d.session(&protocol.GoalSnapshot{GoalID: "g1"}); id != "" || resume {
		t.Errorf("a new Codex session is %q (resume %v), want none until Codex names it", id, resume)
	}
	if got := sessionLine("codex", "", false); got != "starting codex (a new session, which codex names)" {
		t.Errorf("start line %q", got)
	}
}
