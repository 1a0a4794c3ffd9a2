package tests

// A scripted OpenAI Chat Completions model on 127.0.0.1, for the agents that
// speak it offline: GitHub Copilot CLI and Qwen Code
// (tests/agents_copilot_test.go, tests/agents_qwen_test.go).

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// chatReply is one scripted response: tool calls (several are parallel
// calls in one response) or text, with its output tokens.
type chatReply struct {
	calls  []chatCall
	text   string
	tokens int64
}

type chatCall struct {
	tool string // the tool's name without the agent's prefix, e.g. TodoList
	args any
}

// chatModel answers the agent's main-loop calls (those that offer
// agentd's TodoList) from its script, in order, and keeps each such
// request's body; other calls (titles, summaries) get a short text. prefix
// is how the agent names agentd's tools (Copilot CLI "agentd-", Qwen Code
// "mcp__agentd__").
type chatModel struct {
	url    string
	prefix string
	modelScript[chatReply]
}

func newChatModel(t *testing.T, prefix string, script []chatReply) *chatModel {
	past := chatReply{text: pastTheScript.text, tokens: pastTheScript.tokens}
	m := &chatModel{prefix: prefix, modelScript: modelScript[chatReply]{script: script, past: past}}
	m.url = serveModel(t, m.serve)
	return m
}

type chatRequest struct {
	Stream bool `json:"stream"`
	Tools  []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	Messages []json.RawMessage `json:"messages"`
}

func (m *chatModel) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": []any{map[string]any{"id": "gpt-4.1", "object": "model"}, map[string]any{"id": "qwen3-coder-plus", "object": "model"}}})
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	main := false
	for _, tl := range req.Tools {
		main = main || tl.Function.Name == m.prefix+"TodoList"
	}
	rp := chatReply{text: "A title.", tokens: 3}
	n := 0
	if main {
		n, rp = m.next(body)
	}
	m.answer(w, req.Stream, n, rp)
}

// answer writes rp as a chat.completion, or as its chunks when stream.
func (m *chatModel) answer(w http.ResponseWriter, stream bool, n int, rp chatReply) {
	msg := map[string]any{"role": "assistant", "content": rp.text}
	finish := "stop"
	if len(rp.calls) > 0 {
		var calls []map[string]any
		for i, c := range rp.calls {
			args, _ := json.Marshal(c.args)
			calls = append(calls, map[string]any{"index": i, "id": fmt.Sprintf("call_%d_%d", n, i), "type": "function",
				"function": map[string]any{"name": m.prefix + c.tool, "arguments": string(args)}})
		}
		msg["tool_calls"], msg["content"], finish = calls, nil, "tool_calls"
	}
	usage := map[string]any{"prompt_tokens": 10, "completion_tokens": rp.tokens, "total_tokens": 10 + rp.tokens}
	id := fmt.Sprintf("chatcmpl-%d", n)
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": id, "object": "chat.completion", "created": 1, "model": "scripted",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	bw := bufio.NewWriter(w)
	chunk := func(choices []any, usage any) {
		b, _ := json.Marshal(map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1, "model": "scripted", "choices": choices, "usage": usage})
		fmt.Fprintf(bw, "data: %s\n\n", b)
	}
	chunk([]any{map[string]any{"index": 0, "delta": msg, "finish_reason": nil}}, nil)
	chunk([]any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish}}, nil)
	chunk([]any{}, usage)
	fmt.Fprint(bw, "data: [DONE]\n\n")
	bw.Flush()
}

// chatSameWords is sameWords for a Chat Completions model: "Done." every
// time, with 11, 13, 17 and then 19 output tokens.
func chatSameWords() []chatReply {
	var script []chatReply
	for _, r := range sameWords() {
		script = append(script, chatReply{text: r.text, tokens: r.tokens})
	}
	return script
}

// likeReal is a model that behaves like a real one under a 3-turn goal:
// in its first turn it calls TodoList twice in parallel, then repeats the
// same two calls word for word, then says "Done."; each continuation it
// answers "Done." again. 5 model calls, 20+21+11+13+17 output tokens.
func likeReal() []chatReply {
	todos := func(status string) chatCall {
		return chatCall{"TodoList", map[string]any{"todos": []item{{"read the code", status}, {"write the parser", "pending"}}}}
	}
	both := []chatCall{todos("in_progress"), todos("in_progress")}
	return []chatReply{{calls: both, tokens: 20}, {calls: both, tokens: 21}, {text: "Done.", tokens: 11},
		{text: "Done.", tokens: 13}, {text: "Done.", tokens: 17}, {text: "Done.", tokens: 19}}
}

// likeRealTokens are likeReal's output tokens over its 5 calls.
const likeRealTokens = 20 + 21 + 11 + 13 + 17

// userGoalTurns creates the user's goal with a budget of turns turns.
func userGoalTurns(t *testing.T, a *agentEnv, turns int) {
	for _, args := range [][]string{{"goal", "create", "Ship the parser"}, {"goal", "budget", fmt.Sprint(turns), "turns"}} {
		if out, errOut, code := a.cli(append(args, "--workspace", a.ws)...); code != 0 {
			t.Fatalf("agentd %v: %s%s", args, out, errOut)
		}
	}
}

// checkCappedGoal: after the agent's run past its own block cap, the goal
// has exactly turns turns and tokens output tokens counted (the turns the
// model was called in) and is paused with a reason that starts with reason
// (docs/hooks.md, "The agents' own limits").
func checkCappedGoal(t *testing.T, lc *client, turns, tokens int64, reason string) {
	t.Helper()
	g := goalNow(t, lc)
	if g.TurnsUsed != turns || g.TokensUsed != tokens || g.Status != "paused" || !strings.HasPrefix(g.TerminalReason, reason) {
		t.Errorf("goal after the agent: %+v, want paused at %d turns and %d tokens with a reason %q…", g, turns, tokens, reason)
	}
}
