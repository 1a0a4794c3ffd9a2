package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentd/agentd/commands/protocol"

	"github.com/google/go-cmp/cmp"
)

// call is one command a fake executor received, args as JSON.
type call struct {
	Command string
	Args    string
}

// fake records every command and answers with answer (nil: null).
type fake struct {
	calls  []call
	answer func(command string, args map[string]any) (any, error)
}

func (f *fake) Execute(ctx context.Context, command string, args any) (json.RawMessage, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	json.Unmarshal(raw, &m)
	if m != nil {
		raw, _ = json.Marshal(m) // the fields in one order, whatever the args' type
	}
	f.calls = append(f.calls, call{command, string(raw)})
	var res any
	if f.answer != nil {
		if res, err = f.answer(command, m); err != nil {
			return nil, err
		}
	}
	return json.Marshal(res)
}

func TestHostSendsEachLifecycleCommand(t *testing.T) {
	f := &fake{answer: func(command string, _ map[string]any) (any, error) {
		switch command {
		case "agentd.turn.begin":
			return map[string]any{"goalDriven": true}, nil
		case "agentd.step.begin":
			return map[string]any{"injections": []map[string]string{{"variant": "goal", "text": "work"}}}, nil
		case "agentd.callTool":
			return map[string]any{"output": "Todo list updated."}, nil
		case "agentd.step.end":
			return map[string]any{"graceStep": true}, nil
		case "agentd.turn.end":
			return map[string]any{"continuation": map[string]string{"variant": "goal_continuation", "prompt": "go on"}}, nil
		}
		return nil, nil
	}}
	h := &Host{Executor: f, Session: "s1", TurnPrefix: "run7-"}
	ctx := context.Background()
	turn, begin, err := h.BeginTurn(ctx, "user")
	if err != nil || turn != "run7-turn-1" || !begin.GoalDriven {
		t.Fatalf("BeginTurn = %q %+v %v", turn, begin, err)
	}
	sb, err := h.BeginStep(ctx, turn)
	if err != nil || len(sb.Injections) != 1 || sb.Injections[0].Variant != "goal" || sb.Injections[0].Text != "work" {
		t.Fatalf("BeginStep = %+v %v", sb, err)
	}
	if tr, err := h.CallTool(ctx, turn, "TodoList", map[string]any{}); err != nil || tr.Output != "Todo list updated." {
		t.Fatalf("CallTool = %+v %v", tr, err)
	}
	if _, err := h.CallTool(ctx, "", "GetGoal", nil); err != nil {
		t.Fatal(err)
	}
	if se, err := h.EndStep(ctx, turn, 120, "tool_calls"); err != nil || !se.GraceStep {
		t.Fatalf("EndStep = %+v %v", se, err)
	}
	end, err := h.EndTurn(ctx, turn, "failed", &Failure{Kind: "rate_limit", Message: "429"})
	if err != nil || end.Continuation == nil || end.Continuation.Prompt != "go on" {
		t.Fatalf("EndTurn = %+v %v", end, err)
	}
	if next, _, _ := h.BeginTurn(ctx, "continuation"); next != "run7-turn-2" {
		t.Errorf("second turn id %q, want run7-turn-2", next)
	}
	want := []call{
		{"agentd.turn.begin", `{"origin":"user","session":"s1","turnId":"run7-turn-1"}`},
		{"agentd.step.begin", `{"session":"s1","turnId":"run7-turn-1"}`},
		{"agentd.callTool", `{"input":{},"name":"TodoList","session":"s1","turnId":"run7-turn-1"}`},
		{"agentd.callTool", `{"input":null,"name":"GetGoal","session":"s1"}`},
		{"agentd.step.end", `{"finishReason":"tool_calls","outputTokens":120,"session":"s1","turnId":"run7-turn-1"}`},
		{"agentd.turn.end", `{"error":{"kind":"rate_limit","message":"429"},"outcome":"failed","session":"s1","turnId":"run7-turn-1"}`},
		{"agentd.turn.begin", `{"origin":"continuation","session":"s1","turnId":"run7-turn-2"}`},
	}
	if d := cmp.Diff(want, f.calls); d != "" {
		t.Errorf("commands sent (-want +got):\n%s", d)
	}
}

func TestHostWithoutSessionSendsNone(t *testing.T) {
	f := &fake{}
	h := &Host{Executor: f}
	if err := h.Exec(context.Background(), "agentd.sessions", nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := h.EndStep(context.Background(), "t", 1, "stop"); err != nil {
		t.Fatal(err)
	}
	want := []call{{"agentd.sessions", "null"}, {"agentd.step.end", `{"finishReason":"stop","outputTokens":1,"turnId":"t"}`}}
	if d := cmp.Diff(want, f.calls); d != "" {
		t.Errorf("commands sent (-want +got):\n%s", d)
	}
}

func TestHostRefusalNamesTheCommand(t *testing.T) {
	refused := errors.New("JSON-RPC error -32602: turnId \"x\" is not a turn agentd knows")
	h := &Host{Executor: &fake{answer: func(string, map[string]any) (any, error) { return nil, refused }}}
	_, err := h.BeginStep(context.Background(), "x")
	if !errors.Is(err, refused) || !strings.HasPrefix(err.Error(), "agentd.step.begin: ") {
		t.Fatalf("BeginStep refused: %v, want the refusal wrapped with the command id", err)
	}
}

// TestPlayFollowsContinuationsAndStops plays three turns: the first ends
// with a continuation, so the second (no origin) is a continuation turn;
// agentd stops the second at its first step boundary (agentd.step.next
// answers stopTurn and no begin), so its second step is never played and
// it ends completed although the script says stepLimit; the third has an
// origin of its own, a step boundary whose agentd.step.next begins the
// next step (observed with that begin's injections), and a failure. A last
// step that ended with tool calls (turn 1) ends with agentd.step.end.
func TestPlayFollowsContinuationsAndStops(t *testing.T) {
	turnEnds := 0
	f := &fake{answer: func(command string, args map[string]any) (any, error) {
		switch command {
		case "agentd.goal.create", "agentd.goal.setBudget", "agentd.state":
			return map[string]any{"revision": 3, "session": "sim"}, nil
		case "agentd.step.next":
			if args["turnId"] == "p-turn-2" {
				return map[string]any{"end": map[string]any{"stopTurn": true}, "begin": nil}, nil
			}
			return map[string]any{"end": map[string]any{}, "begin": map[string]any{"injections": []map[string]string{{"variant": "goal", "text": "g"}}}}, nil
		case "agentd.turn.end":
			turnEnds++
			if turnEnds == 1 {
				return map[string]any{"continuation": map[string]string{"variant": "goal_continuation", "prompt": "continue"}}, nil
			}
		}
		return map[string]any{}, nil
	}}
	sc := &Script{
		Goal: &ScriptGoal{Objective: "ship", CompletionCriterion: "green", Budget: &protocol.BudgetUpdate{Turns: protocol.Limit(3)}},
		Turns: []Turn{
			{Steps: []Step{{OutputTokens: 10, FinishReason: "tool_calls", Tools: []Tool{{Name: "TodoList", Input: json.RawMessage(`{"todos":[]}`)}}}}},
			{Steps: []Step{{OutputTokens: 20, FinishReason: "tool_calls"}, {OutputTokens: 30, FinishReason: "stop"}}, Outcome: "stepLimit"},
			{Origin: "resume", Steps: []Step{{OutputTokens: 4, FinishReason: "tool_calls"}, {OutputTokens: 5, FinishReason: "stop"}}, Outcome: "failed", Error: &Failure{Kind: "rate_limit", Message: "429"}},
		},
	}
	var seen []string
	obs := Observer{
		GoalSet: func(st protocol.State) { seen = append(seen, fmt.Sprintf("goal rev %d", st.Revision)) },
		TurnBegan: func(turn int, origin protocol.Origin, _ protocol.TurnBeginResult) {
			seen = append(seen, fmt.Sprintf("turn %d %s", turn, origin))
		},
		StepBegan: func(turn, step int, res protocol.StepBeginResult) {
			seen = append(seen, fmt.Sprintf("step %d.%d %d injections", turn, step, len(res.Injections)))
		},
		ToolCalled: func(turn, step int, tool Tool, _ protocol.ToolResult) {
			seen = append(seen, fmt.Sprintf("tool %d.%d %s", turn, step, tool.Name))
		},
		StepEnded: func(turn, step int, s Step, res protocol.StepEndResult) {
			seen = append(seen, fmt.Sprintf("end %d.%d %d stop=%v", turn, step, s.OutputTokens, res.StopTurn))
		},
		TurnEnded: func(turn int, res protocol.TurnEndResult) {
			seen = append(seen, fmt.Sprintf("turn end %d continuation=%v", turn, res.Continuation != nil))
		},
	}
	st, err := Play(context.Background(), &Host{Executor: f, TurnPrefix: "p-"}, sc, obs)
	if err != nil || st.Revision != 3 {
		t.Fatalf("Play = %+v, %v", st, err)
	}
	wantSeen := []string{
		"goal rev 3",
		"turn 1 user", "step 1.1 0 injections", "tool 1.1 TodoList", "end 1.1 10 stop=false", "turn end 1 continuation=true",
		"turn 2 continuation", "step 2.1 0 injections", "end 2.1 20 stop=true", "turn end 2 continuation=false",
		"turn 3 resume", "step 3.1 0 injections", "end 3.1 4 stop=false", "step 3.2 1 injections", "end 3.2 5 stop=false", "turn end 3 continuation=false",
	}
	if d := cmp.Diff(wantSeen, seen); d != "" {
		t.Errorf("observed (-want +got):\n%s", d)
	}
	want := []call{
		{"agentd.goal.create", `{"completionCriterion":"green","objective":"ship","replace":true}`}, // taskFile "" is left out: the default
		{"agentd.goal.setBudget", `{"turns":3}`},
		{"agentd.turn.begin", `{"origin":"user","turnId":"p-turn-1"}`},
		{"agentd.step.begin", `{"turnId":"p-turn-1"}`},
		{"agentd.callTool", `{"input":{"todos":[]},"name":"TodoList","turnId":"p-turn-1"}`},
		{"agentd.step.end", `{"finishReason":"tool_calls","outputTokens":10,"turnId":"p-turn-1"}`},
		{"agentd.turn.end", `{"outcome":"completed","turnId":"p-turn-1"}`},
		{"agentd.turn.begin", `{"origin":"continuation","turnId":"p-turn-2"}`},
		{"agentd.step.begin", `{"turnId":"p-turn-2"}`},
		{"agentd.step.next", `{"finishReason":"tool_calls","outputTokens":20,"turnId":"p-turn-2"}`},
		{"agentd.turn.end", `{"outcome":"completed","turnId":"p-turn-2"}`},
		{"agentd.turn.begin", `{"origin":"resume","turnId":"p-turn-3"}`},
		{"agentd.step.begin", `{"turnId":"p-turn-3"}`},
		{"agentd.step.next", `{"finishReason":"tool_calls","outputTokens":4,"turnId":"p-turn-3"}`},
		{"agentd.step.end", `{"finishReason":"stop","outputTokens":5,"turnId":"p-turn-3"}`},
		{"agentd.turn.end", `{"error":{"kind":"rate_limit","message":"429"},"outcome":"failed","turnId":"p-turn-3"}`},
		{"agentd.state", `{}`},
	}
	if d := cmp.Diff(want, f.calls); d != "" {
		t.Errorf("commands sent (-want +got):\n%s", d)
	}
}

// TestPlayStopsAtTheFirstRefusal: a refused tool call ends Play with that
// error; nothing after it is sent.
func TestPlayStopsAtTheFirstRefusal(t *testing.T) {
	f := &fake{answer: func(command string, _ map[string]any) (any, error) {
		if command == "agentd.callTool" {
			return nil, errors.New("unknown tool")
		}
		return map[string]any{}, nil
	}}
	sc := &Script{Turns: []Turn{{Steps: []Step{{Tools: []Tool{{Name: "Nope"}}}}}, {}}}
	_, err := Play(context.Background(), &Host{Executor: f}, sc, Observer{})
	if err == nil || !strings.Contains(err.Error(), "agentd.callTool: unknown tool") {
		t.Fatalf("Play = %v, want the refused tool call", err)
	}
	if last := f.calls[len(f.calls)-1]; last.Command != "agentd.callTool" || len(f.calls) != 3 {
		t.Errorf("calls after the refusal: %+v", f.calls)
	}
}
