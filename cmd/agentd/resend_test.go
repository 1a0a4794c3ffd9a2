package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/workspace"
)

// TestSendOnceResends: a shell command whose request carries an id (goal
// create, goal check, undo: a requestId; queue add: the queued goal's id)
// chooses one per run and, answered workspace.outcome_unknown, sends the
// same request once more with the same id, saying so on stderr, and
// reports what that answers; a second workspace.outcome_unknown is
// reported as it is. A request without an id (a todo list set, a pause)
// is sent once (docs/team.md, "What a write acknowledges").
func TestSendOnceResends(t *testing.T) {
	unknown := &protocol.Error{Code: workspace.CodeOutcomeUnknown, Msg: "the write may have been applied: agentd will show it if it was"}
	ok := json.RawMessage(`{}`)
	for _, tc := range []struct {
		args protocol.Args
		id   func(protocol.Args) string
	}{
		{&protocol.GoalCreateArgs{Objective: "o"}, func(a protocol.Args) string { return a.(*protocol.GoalCreateArgs).RequestID }},
		{&protocol.GoalRunCheckArgs{}, func(a protocol.Args) string { return a.(*protocol.GoalRunCheckArgs).RequestID }},
		{&protocol.UndoArgs{}, func(a protocol.Args) string { return a.(*protocol.UndoArgs).RequestID }},
		{&protocol.QueueAddArgs{Objective: "o"}, func(a protocol.Args) string { return a.(*protocol.QueueAddArgs).ID }},
	} {
		var sent []string
		var stderr strings.Builder
		raw, err := sendOnce(&stderr, tc.args, func() (json.RawMessage, error) {
			sent = append(sent, tc.id(tc.args))
			if len(sent) == 1 {
				return nil, unknown
			}
			return ok, nil
		})
		if err != nil || string(raw) != "{}" || len(sent) != 2 || sent[0] == "" || sent[1] != sent[0] {
			t.Errorf("%T: %s, %v after sends with ids %q; want the second answer, two sends with one id", tc.args, raw, err, sent)
		}
		if want := "sending the same request once more, with the same id " + sent[0]; !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "may have been applied") {
			t.Errorf("%T: stderr %q, want the first answer and %q", tc.args, stderr.String(), want)
		}
		sends := 0
		_, err = sendOnce(&stderr, tc.args, func() (json.RawMessage, error) { sends++; return nil, unknown })
		if protocol.ErrorCode(err) != workspace.CodeOutcomeUnknown || sends != 2 || tc.id(tc.args) != sent[0] {
			t.Errorf("%T answered workspace.outcome_unknown twice: %v after %d sends, id %q; want that answer after 2 sends with the id given", tc.args, err, sends, tc.id(tc.args))
		}
	}
	first := &protocol.GoalCreateArgs{}
	second := &protocol.GoalCreateArgs{}
	for _, a := range []*protocol.GoalCreateArgs{first, second} {
		if _, err := sendOnce(new(strings.Builder), a, func() (json.RawMessage, error) { return ok, nil }); err != nil {
			t.Fatal(err)
		}
	}
	if first.RequestID == second.RequestID {
		t.Errorf("two runs chose the same id %q", first.RequestID)
	}
	for _, args := range []protocol.Args{&protocol.TodoSetArgs{}, &protocol.GoalPauseArgs{}, &protocol.NoArgs{}} {
		sends := 0
		var stderr strings.Builder
		_, err := sendOnce(&stderr, args, func() (json.RawMessage, error) { sends++; return nil, unknown })
		if sends != 1 || protocol.ErrorCode(err) != workspace.CodeOutcomeUnknown || stderr.Len() != 0 {
			t.Errorf("%T without an id: %d sends, %v, stderr %q; want one send, its answer, nothing said", args, sends, err, stderr.String())
		}
	}
}
