package hook

import (
	"context"
	"encoding/json"
)

// gemini is Gemini CLI's hooks (docs/hooks.md): BeforeAgent, BeforeModel,
// AfterModel, AfterAgent, SessionEnd, BeforeTool, and AfterTool for its
// write_todos tool. Every model call is one step, from BeforeModel to the
// next BeforeModel or AfterAgent; its output tokens are
// llm_response.usageMetadata.candidatesTokenCount.
type gemini struct{}

type geminiInput struct {
	HookEventName string          `json:"hook_event_name"`
	SessionID     string          `json:"session_id"`
	Timestamp     string          `json:"timestamp"`
	Cwd           string          `json:"cwd"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	LLMRequest    struct {
		Messages json.RawMessage `json:"messages"`
	} `json:"llm_request"`
	LLMResponse struct {
		Candidates []struct {
			FinishReason string `json:"finishReason"`
		} `json:"candidates"`
		UsageMetadata struct {
			CandidatesTokenCount int64 `json:"candidatesTokenCount"`
		} `json:"usageMetadata"`
	} `json:"llm_response"`
}

func (gemini) parse(raw []byte) (event, error) {
	var in geminiInput
	if err := decodeEvent(raw, &in); err != nil {
		return event{}, err
	}
	ev := event{name: in.HookEventName, session: in.SessionID, id: in.Timestamp, cwd: in.Cwd, tool: in.ToolName}
	switch in.HookEventName {
	case "BeforeAgent":
		ev.kind = kindPrompt
	case "BeforeModel":
		ev.kind, ev.messages = kindBoundary, in.LLMRequest.Messages
	case "AfterModel":
		ev.kind, ev.outputTokens = kindResponse, in.LLMResponse.UsageMetadata.CandidatesTokenCount
		for _, c := range in.LLMResponse.Candidates {
			ev.finished = ev.finished || c.FinishReason != ""
		}
	case "AfterAgent":
		ev.kind = kindStop
	case "SessionEnd":
		ev.kind = kindEnd
	case "BeforeTool":
		ev.kind = kindGate
	case "AfterTool":
		if in.ToolName != "write_todos" {
			return ev, nil
		}
		var wt struct {
			Todos []struct {
				Description string `json:"description"`
				Status      string `json:"status"`
			} `json:"todos"`
		}
		if err := json.Unmarshal(in.ToolInput, &wt); err != nil {
			return event{}, err
		}
		ev.kind, ev.todos = kindTodos, []todoItem{}
		for _, t := range wt.Todos {
			ev.todos = append(ev.todos, todoItem{Title: t.Description, Status: todoStatus(t.Status)})
		}
	case "":
		return event{}, errMissing("hook_event_name")
	}
	return ev, nil
}

func (gemini) render(ev event, o outcome) ([]byte, error) {
	switch {
	case o.stop != "":
		return marshal(map[string]any{"continue": false, "stopReason": o.stop})
	case o.prompt != "":
		// The reason is the next prompt; Gemini CLI prints systemMessage
		// in its place, so the user sees one line, not the whole prompt.
		return marshal(map[string]any{"decision": "deny", "reason": agentText(o.prompt, true), "systemMessage": continuingLine})
	case o.deny != "":
		return marshal(map[string]any{"decision": "deny", "reason": o.deny})
	case o.context == "":
		return nil, nil
	case ev.kind == kindBoundary:
		// BeforeModel adds text only through the request: the messages as
		// they are, and one more user message with the injections, which
		// Gemini CLI neither wraps nor escapes.
		var msgs []json.RawMessage
		if len(ev.messages) > 0 && string(ev.messages) != "null" {
			if err := json.Unmarshal(ev.messages, &msgs); err != nil {
				return nil, err
			}
		}
		last, err := marshal(map[string]string{"role": "user", "content": agentText(o.context, false)})
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, last)
		return marshal(map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": ev.name, "llm_request": map[string]any{"messages": msgs}}})
	}
	// BeforeAgent: Gemini CLI wraps additionalContext in <hook_context>
	// and escapes every < and > inside (agentText).
	return marshal(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": ev.name, "additionalContext": agentText(o.context, true)}})
}

// continuingLine is what Gemini CLI shows the user when agentd continues
// it: the prompt itself goes to the model only.
const continuingLine = "agentd continues the goal in a new turn (an automatic continuation)"

// tokens: what AfterModel recorded for the open step.
func (gemini) tokens(ctx context.Context, ev event, c *cursor) (int64, int, error) {
	n, responses := c.Pending, 0
	if c.Responded {
		responses = 1
	}
	c.Pending, c.Responded = 0, false
	return n, responses, nil
}

// boundary: a BeforeModel before the open step's model call answered is
// that call itself (the first call of a turn, whose step BeforeAgent began)
// or a retry of it.
func (h gemini) boundary(ctx context.Context, ev event, c *cursor) (int64, bool, error) {
	// The model is called (limits.go): even the first call of a turn, or
	// one that fails, is a turn the model was called in.
	c.Called = c.Called || c.Turn != ""
	c.Loop = c.Loop || geminiLoopSpoke(ev.messages)
	if !c.Responded {
		return 0, false, nil
	}
	n, _, err := h.tokens(ctx, ev, c)
	return n, true, err
}

// key: Gemini CLI gives its events no id, but every event carries the
// time it fired, to the millisecond, and two events of a session never
// share it (a model call lies between any two prompts or stops): an event
// is its timestamp and bytes. One without a timestamp is handled every
// time.
func (gemini) key(ctx context.Context, ev event, raw []byte, c *cursor) (string, error) {
	if ev.id == "" {
		return "", nil
	}
	return eventKey(ev.name, ev.id, digest(raw)), nil
}

func (gemini) beginsContinuation() bool { return false }
