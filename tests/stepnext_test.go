package tests

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentd/agentd/commands/protocol"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.etcd.io/bbolt"

	"github.com/agentd/agentd/tests/lsptest"
)

// boundaryNote is what a notification says that two identical folders
// share: its method, the revision, and for agentd/goalChanged the change
// and the goal's counters and status (times and ids differ).
type boundaryNote struct {
	Method, Kind, Actor, Status, GoalStatus string
	Revision                                uint64
	Percent                                 int
	Tokens, Turns                           int64
}

func boundaryNotes(c *client, from int) []boundaryNote {
	c.T.Helper()
	var out []boundaryNote
	seen := map[string]int{} // notifications of each method so far
	for i, m := range c.Conn.Methods() {
		params := c.Conn.NotesOf(m)[seen[m]]
		seen[m]++
		if i < from {
			continue
		}
		bn := boundaryNote{Method: m}
		var gc goalChanged
		if json.Unmarshal(params, &gc) == nil {
			bn.Revision = gc.Revision
			if m == "agentd/goalChanged" {
				bn.Kind, bn.Actor, bn.Status, bn.Percent = gc.Change.Kind, gc.Change.Actor, gc.Change.Status, gc.Change.Percent
				if gc.Goal != nil {
					bn.GoalStatus, bn.Tokens, bn.Turns = gc.Goal.Status, gc.Goal.TokensUsed, gc.Goal.TurnsUsed
				}
			}
		}
		out = append(out, bn)
	}
	return out
}

// lastTx is the id of the last transaction committed to the state file of
// the env's one folder; no process may hold it.
func lastTx(t *testing.T, e *env) int {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(e.stateDir, "workspaces", "*", "state.db"))
	if len(files) != 1 {
		t.Fatalf("state files %v, want one", files)
	}
	db, err := bbolt.Open(files[0], 0o600, &bbolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id int
	if err := db.View(func(tx *bbolt.Tx) error { id = tx.ID(); return nil }); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestStepNext: over the real binary, agentd.step.next at three step
// boundaries of a goal-driven turn (tokens counted; the token budget
// reached: a grace step with the budget-stop notice; the grace step's end:
// stopTurn and begin null) answers, notifies and records what
// agentd.step.end then agentd.step.begin answer, notify and record in an
// identical folder, in one bbolt transaction per boundary where the two
// calls take two (the state files' transaction ids, read after both
// agentd exited). Its refusals: a finishReason other than tool_calls, and
// those of the step end.
func TestStepNext(t *testing.T) {
	t.Parallel()
	pairEnv, nextEnv := newEnv(t), newEnv(t)
	pair, next := pairEnv.start().connect(), nextEnv.start().connect()
	envOf := map[*client]*env{pair: pairEnv, next: nextEnv}
	for _, c := range []*client{pair, next} {
		init := c.Initialize(nil, envOf[c].ws)
		cmds, _ := json.Marshal(init["capabilities"].(map[string]any)["executeCommandProvider"])
		if !strings.Contains(string(cmds), `"agentd.step.next"`) {
			t.Fatalf("initialize lists %s, without agentd.step.next", cmds)
		}
		c.MustExec("agentd.goal.create", map[string]any{"objective": "ship the parser"}, nil)
		c.MustExec("agentd.goal.setBudget", map[string]any{"tokens": 100}, nil)
		c.tool("TodoList", todoInput("write the lexer"))
		c.MustExec("agentd.turn.begin", map[string]any{"turnId": "t1", "origin": "user"}, nil)
		c.MustExec("agentd.step.begin", map[string]any{"turnId": "t1"}, nil)
	}
	// A write of the list by the user marks where the notifications of
	// what came before it end (one connection's come in commit order).
	mark := func(title string) {
		for _, c := range []*client{pair, next} {
			c.MustExec("agentd.todo.set", map[string]any{"items": []item{{Title: title, Status: "pending"}}}, nil)
			c.awaitTodo(envOf[c].ws, title)
		}
	}
	mark("set up")

	// Each boundary in both folders, then a mark.
	for i, tokens := range []int{40, 70, 5} {
		from := []int{len(pair.Conn.Methods()), len(next.Conn.Methods())}
		var end protocol.StepEndResult
		var begin *protocol.StepBeginResult
		pair.MustExec("agentd.step.end", map[string]any{"turnId": "t1", "outputTokens": tokens, "finishReason": "tool_calls"}, &end)
		if !end.StopTurn {
			begin = &protocol.StepBeginResult{}
			pair.MustExec("agentd.step.begin", map[string]any{"turnId": "t1"}, begin)
		}
		var got protocol.StepNextResult
		next.MustExec("agentd.step.next", map[string]any{"turnId": "t1", "outputTokens": tokens, "finishReason": "tool_calls"}, &got)
		if d := cmp.Diff(end, got.End); d != "" {
			t.Errorf("boundary %d: end differs from agentd.step.end's (-step.end +step.next):\n%s", i+1, d)
		}
		if d := cmp.Diff(begin, got.Begin); d != "" {
			t.Errorf("boundary %d: begin differs from agentd.step.begin's (-step.begin +step.next):\n%s", i+1, d)
		}
		switch i {
		case 0:
			if got.End.StopTurn || got.Begin == nil || len(got.Begin.Injections) != 0 {
				t.Errorf("boundary 1 = %+v, want a plain next step", got)
			}
		case 1:
			if !got.End.GraceStep || len(got.End.Injections) != 1 || got.End.Injections[0].Variant != "goal_budget_stop" || got.Begin == nil {
				t.Errorf("boundary 2 = %+v, want the grace step with the budget-stop notice, begun", got)
			}
		case 2:
			if !got.End.StopTurn || got.Begin != nil {
				t.Errorf("boundary 3 = %+v, want stopTurn and begin null", got)
			}
		}
		mark(fmt.Sprint("after boundary ", i+1))
		want, have := boundaryNotes(pair, from[0]), boundaryNotes(next, from[1])
		if d := cmp.Diff(want, have); d != "" {
			t.Errorf("boundary %d: notifications differ (-two calls +step.next):\n%s", i+1, d)
		}
		if i == 1 && !slices.ContainsFunc(have, func(n boundaryNote) bool { return n.Kind == "block" && n.GoalStatus == "blocked" && n.Tokens == 110 }) {
			t.Errorf("boundary 2: notifications %+v, want the goal blocked at 110 tokens", have)
		}
	}

	// Refusals, the same for both parts' codes; nothing changes.
	var e *lsptest.Error
	err := next.Exec("agentd.step.next", map[string]any{"turnId": "t1", "outputTokens": 1, "finishReason": "stop"}, nil)
	if !errors.As(err, &e) || e.Code != -32602 || e.DataCode() != "args.invalid" || !strings.Contains(e.Message, `finishReason "stop"`) {
		t.Errorf("step.next with finishReason stop = %v, want -32602 args.invalid naming it", err)
	}
	nextErr := next.Exec("agentd.step.next", map[string]any{"turnId": "nope", "outputTokens": 1, "finishReason": "tool_calls"}, nil)
	endErr := next.Exec("agentd.step.end", map[string]any{"turnId": "nope", "outputTokens": 1, "finishReason": "tool_calls"}, nil)
	var ne, ee *lsptest.Error
	if !errors.As(nextErr, &ne) || !errors.As(endErr, &ee) || ne.Code != ee.Code || ne.DataCode() != "args.invalid" || ne.Message != ee.Message {
		t.Errorf("step.next of an unknown turn = %v, want step.end's refusal %v", nextErr, endErr)
	}

	for _, c := range []*client{pair, next} {
		c.MustExec("agentd.turn.end", map[string]any{"turnId": "t1", "outcome": "completed"}, nil)
	}
	if d := cmp.Diff(historyShape(pair.history()), historyShape(next.history())); d != "" {
		t.Errorf("history differs (-two calls +step.next):\n%s", d)
	}
	pair.shutdown()
	next.shutdown()
	// Two boundaries with a begin and one without: the two calls commit
	// 2+2+1 times, step.next 1+1+1; everything else is the same.
	if p, n := lastTx(t, pairEnv), lastTx(t, nextEnv); p-n != 2 {
		t.Errorf("transactions: %d with the two calls, %d with step.next; want 2 fewer", p, n)
	}
}

// historyShape is what two identical folders' histories share.
func historyShape(evs []historyEvent) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = fmt.Sprintf("%d %s %s %d", ev.Seq, ev.Kind, ev.Actor, ev.Revision)
	}
	return out
}
