package watch

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/agentd/agentd/commands/protocol"
)

func press(m tea.Model, key string) (tea.Model, tea.Cmd) {
	k := tea.KeyPressMsg{Code: rune(key[0]), Text: key}
	if key == "ctrl+c" {
		k = tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	return m.Update(k)
}

// TestKeys: p sends agentd.goal.pause and r agentd.goal.resume through the
// Sender, and the panel says the outcome, the daemon's refusal included; ?
// shows the help and any key hides it; q and Ctrl-C quit.
func TestKeys(t *testing.T) {
	var sent []protocol.CommandID
	refuse := errors.New("agentd.goal.resume was refused: it came from Claude Code's shell")
	snap := session()
	m := model(&snap, 100, 30)
	m.send = func(id protocol.CommandID, _ any) error {
		sent = append(sent, id)
		if id == protocol.CmdGoalResume {
			return refuse
		}
		return nil
	}
	var tm tea.Model = m
	for _, tc := range []struct{ key, note string }{{"p", "Paused"}, {"r", refuse.Error()}} {
		var cmd tea.Cmd
		tm, cmd = press(tm, tc.key)
		if cmd == nil {
			t.Fatalf("%s sends nothing", tc.key)
		}
		tm, _ = tm.Update(cmd())
		if got := tm.(Model).Render(); !strings.Contains(got, tc.note) {
			t.Errorf("after %s the panel does not say %q:\n%s", tc.key, tc.note, got)
		}
	}
	if want := []protocol.CommandID{protocol.CmdGoalPause, protocol.CmdGoalResume}; len(sent) != 2 || sent[0] != want[0] || sent[1] != want[1] {
		t.Errorf("sent %v, want %v", sent, want)
	}
	tm, _ = press(tm, "?")
	if !strings.Contains(tm.(Model).Render(), "show or hide this help") {
		t.Error("? shows no help")
	}
	tm, _ = press(tm, "x")
	if strings.Contains(tm.(Model).Render(), "show or hide this help") {
		t.Error("a key does not hide the help")
	}
	for _, key := range []string{"q", "ctrl+c"} {
		_, cmd := press(tm, key)
		if cmd == nil {
			t.Fatalf("%s does nothing", key)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Errorf("%s does not quit", key)
		}
	}
}

// TestResize: the view follows the terminal's size.
func TestResize(t *testing.T) {
	snap := session()
	var tm tea.Model = model(&snap, 100, 30)
	tm, _ = tm.Update(tea.WindowSizeMsg{Width: 30, Height: 10})
	lines := strings.Split(tm.(Model).Render(), "\n")
	if len(lines) > 10 {
		t.Errorf("%d lines on a terminal of 10", len(lines))
	}
	for _, l := range lines {
		if len([]rune(l)) > 30 {
			t.Errorf("line wider than 30: %q", l)
		}
	}
}

// TestOurs: the panel reads again on the changes of its own session only,
// and on the four notifications that tell one.
func TestOurs(t *testing.T) {
	c := &conn{name: "default"}
	for _, tc := range []struct {
		method, session string
		want            bool
	}{
		{protocol.MethodTodoChanged, "default", true},
		{protocol.MethodGoalChanged, "default", true},
		{protocol.MethodQueueChanged, "default", true},
		{protocol.MethodTaskFileChanged, "default", true},
		{protocol.MethodTodoChanged, "other", false},
		{protocol.MethodStoreChanged, "default", false},
		{"window/logMessage", "default", false},
	} {
		params, _ := json.Marshal(map[string]string{"session": tc.session})
		if got := c.ours(tc.method, params); got != tc.want {
			t.Errorf("ours(%s, session %s) = %v, want %v", tc.method, tc.session, got, tc.want)
		}
	}
}
