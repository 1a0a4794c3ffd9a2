package hook

import (
	"context"
	"github.com/agentd/agentd/commands/protocol"
	"slices"
	"strings"
)

// opencode is the events of agentd's opencode plugin (docs/hooks.md,
// "opencode"): opencode has no command hooks, so `agentd setup opencode`
// writes a small plugin that runs `agentd-hook opencode` with one event of
// its own shape per opencode hook:
//
//	prompt  chat.message: a user message (id) is about to be saved
//	model   experimental.chat.messages.transform: a model call is about to be made
//	idle    the session.idle event: the session's loop ended
//	error   the session.error event (error.name, error.message)
//	end     the session.deleted event
//	tool    tool.execute.before (tool, id the call's id)
//	todos   tool.execute.after of opencode's todowrite tool (todos)
//
// Every event names its session_id (and parent_id for a subagent's
// session) and cwd; prompt, model, idle and error carry the session's
// completed assistant messages (its last 32), one per model call, each
// with its id and output tokens, which are counted once per id (the cursor
// remembers the last maxMessages ids, more than the plugin sends). The answer is one JSON object
// with context, prompt, stop and deny (each omitted when empty), which the
// plugin applies.
type opencode struct{}

type opencodeInput struct {
	Event     string `json:"event"`
	SessionID string `json:"session_id"`
	ParentID  string `json:"parent_id"`
	Cwd       string `json:"cwd"`
	ID        string `json:"id"`
	Tool      string `json:"tool"`
	OneShot   bool   `json:"one_shot"`
	Messages  []struct {
		ID           string `json:"id"`
		OutputTokens int64  `json:"outputTokens"`
	} `json:"messages"`
	Todos []struct {
		Content string `json:"content"`
		Status  string `json:"status"`
	} `json:"todos"`
	Error struct {
		Name    string `json:"name"`
		Message string `json:"message"`
	} `json:"error"`
}

func (opencode) parse(raw []byte) (event, error) {
	var in opencodeInput
	if err := decodeEvent(raw, &in); err != nil {
		return event{}, err
	}
	ev := event{name: in.Event, session: in.SessionID, id: in.ID, cwd: in.Cwd, tool: in.Tool, oneShot: in.OneShot}
	if in.ParentID != "" {
		ev.session, ev.subagent = in.ParentID, in.SessionID
	}
	// agentd's MCP tools are SERVER_TOOL in opencode: agentd_CreateGoal.
	if rest, ok := strings.CutPrefix(in.Tool, "agentd_"); ok {
		ev.tool = "mcp__agentd__" + rest
	}
	for _, m := range in.Messages {
		ev.responses = append(ev.responses, counted{m.ID, m.OutputTokens})
	}
	switch in.Event {
	case "prompt":
		ev.kind = kindPrompt
	case "model":
		ev.kind = kindBoundary
	case "idle":
		ev.kind = kindStop
	case "error":
		ev.kind, ev.errKind, ev.errMsg = kindFailure, opencodeErrorKind(in.Error.Name), in.Error.Message
		if in.Error.Name == "MessageAbortedError" { // the person stopped it
			ev.kind = kindEnd
		}
	case "end":
		ev.kind = kindEnd
	case "tool":
		ev.kind = kindGate
	case "todos":
		ev.kind, ev.todos = kindTodos, []protocol.TodoItem{}
		for _, t := range in.Todos {
			ev.todos = append(ev.todos, protocol.TodoItem{Title: t.Content, Status: todoStatus(t.Status)})
		}
	case "":
		return event{}, errMissing("event")
	}
	return ev, nil
}

// opencodeErrorKind maps the name of opencode's session error to agentd's
// kinds (docs/runtime.md §2.6).
func opencodeErrorKind(name string) string {
	switch name {
	case "ProviderAuthError":
		return "auth"
	case "APIError", "ContextOverflowError":
		return "api"
	}
	return "other"
}

func (opencode) render(ev event, o outcome) ([]byte, error) {
	if o == (outcome{}) {
		return nil, nil
	}
	return marshal(outcomeJSON{o.context, o.prompt, o.stop, o.deny})
}

// tokens: the output tokens of the event's assistant messages that no
// step has counted yet, each message once.
func (opencode) tokens(ctx context.Context, ev event, c *cursor) (int64, int, error) {
	var total int64
	n := 0
	for _, m := range ev.responses {
		if slices.ContainsFunc(c.Messages, func(s counted) bool { return s.ID == m.ID }) {
			continue
		}
		total = addTokens(total, m.Tokens)
		n++
		c.Messages = append(c.Messages, m)
	}
	if len(c.Messages) > maxMessages {
		c.Messages = slices.Clone(c.Messages[len(c.Messages)-maxMessages:])
	}
	return total, n, nil
}

// boundary: a model call with no new response before it is the first of
// its turn (whose step the prompt began) or a retry.
func (h opencode) boundary(ctx context.Context, ev event, c *cursor) (int64, bool, error) {
	saved := slices.Clone(c.Messages)
	n, responses, err := h.tokens(ctx, ev, c)
	if err != nil || responses == 0 {
		c.Messages = saved
		return 0, false, err
	}
	return n, true, nil
}

// key: a prompt is its user message's id, a tool call its call id, an
// idle the newest response it follows (a model that repeats itself still
// makes a new message each time); a model call is recognised by its new
// responses (boundary) and handled every time.
func (opencode) key(ctx context.Context, ev event, raw []byte, c *cursor) (string, error) {
	switch ev.kind {
	case kindPrompt, kindGate, kindTodos:
		if ev.id != "" {
			return eventKey(ev.name, ev.id), nil
		}
	case kindStop:
		if n := len(ev.responses); n > 0 {
			return eventKey(ev.name, ev.responses[n-1].ID), nil
		}
	}
	return "", nil
}

// beginsContinuation: the plugin sends the continuation as a prompt of its
// own, whose chat.message begins the continuation turn.
func (opencode) beginsContinuation() bool { return false }
