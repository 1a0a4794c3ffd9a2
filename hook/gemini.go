package hook

import (
	"context"
	"encoding/json"
	"github.com/agentd/agentd/commands/protocol"
)

// gemini is Gemini CLI's hooks (docs/hooks.md): BeforeAgent, BeforeModel,
// AfterAgent, SessionEnd, BeforeTool, and AfterTool for its write_todos
// tool. Every model call is one step, from BeforeModel to the next
// BeforeModel or AfterAgent; its output tokens come from the session's
// transcript at transcript_path, which Gemini CLI writes when the call's
// stream ends. AfterModel, which Gemini CLI runs once per streamed chunk,
// is not used (an older setup installed it: such an event does nothing).
type gemini struct{}

type geminiInput struct {
	HookEventName string          `json:"hook_event_name"`
	SessionID     string          `json:"session_id"`
	Timestamp     string          `json:"timestamp"`
	Transcript    string          `json:"transcript_path"`
	Cwd           string          `json:"cwd"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	LLMRequest    struct {
		Messages json.RawMessage `json:"messages"`
	} `json:"llm_request"`
}

func (gemini) parse(raw []byte) (event, error) {
	var in geminiInput
	if err := decodeEvent(raw, &in); err != nil {
		return event{}, err
	}
	ev := event{name: in.HookEventName, session: in.SessionID, id: in.Timestamp, cwd: in.Cwd, transcript: in.Transcript, tool: in.ToolName}
	switch in.HookEventName {
	case "BeforeAgent":
		ev.kind = kindPrompt
	case "BeforeModel":
		ev.kind, ev.messages = kindBoundary, in.LLMRequest.Messages
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
		ev.kind, ev.todos = kindTodos, []protocol.TodoItem{}
		for _, t := range wt.Todos {
			ev.todos = append(ev.todos, protocol.TodoItem{Title: t.Description, Status: todoStatus(t.Status)})
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

// geminiLine is the part of a transcript line agentd reads. Gemini CLI
// 0.61 keeps a session as JSON lines: a record per message, written again
// whole when the message changes (its tool calls, its tokens); a model
// call's answer is a "gemini" message with its usage as tokens (output:
// usageMetadata.candidatesTokenCount), written when the call's stream
// ends, so before the next BeforeModel or the AfterAgent. Messages the
// agent makes up itself ("gemini" records of the history it rewrites)
// carry no tokens and are no model call.
type geminiLine struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Tokens *struct {
		Output int64 `json:"output"`
	} `json:"tokens"`
}

// read reads the transcript's new lines into the cursor: each model
// answer's output tokens, once per message id (at its largest value),
// unclaimed until tokens takes them.
func (gemini) read(ev event, c *cursor) error {
	return readNew(ev.transcript, c, func(b []byte) {
		var l geminiLine
		if json.Unmarshal(b, &l) != nil || l.Type != "gemini" || l.ID == "" || l.Tokens == nil {
			return
		}
		countMessage(c, l.ID, l.Tokens.Output)
	})
}

// tokens: the output tokens and model answers read since the last claim;
// the open step's call is over, so the next BeforeModel is another call.
func (h gemini) tokens(ctx context.Context, ev event, c *cursor) (int64, int, error) {
	if err := h.read(ev, c); err != nil {
		return 0, 0, err
	}
	c.Request = ""
	total, responses := claim(c)
	return total, responses, nil
}

// boundary: a BeforeModel is the next model call when the transcript has
// an answer since the open step began, or when its request differs from
// the open step's; else it is the step's own call (the first BeforeModel
// of a step) or a retry of it. Both are needed: Gemini CLI gives hooks
// only the text of a request (two calls a tool call apart can look
// alike), and an answer it drops (its loop detection) is not written to
// the transcript, whose tokens then are not counted (docs/hooks.md).
func (h gemini) boundary(ctx context.Context, ev event, c *cursor) (int64, bool, error) {
	// The model is called (limits.go): even the first call of a turn, or
	// one that fails, is a turn the model was called in.
	c.Called = c.Called || c.Turn != ""
	c.Loop = c.Loop || geminiLoopSpoke(ev.messages)
	request, own := digest(ev.messages), c.Request
	if err := h.read(ev, c); err != nil {
		return 0, false, err
	}
	if c.UnclaimedResponses == 0 && (own == "" || own == request) {
		c.Request = request
		return 0, false, nil
	}
	n, _ := claim(c)
	c.Request = request
	return n, true, nil
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
