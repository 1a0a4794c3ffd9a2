package hook

import (
	"context"
	"encoding/json"
	"github.com/agentd/agentd/commands/protocol"
	"slices"
	"strings"
	"time"
)

// claude is Claude Code's hooks (docs/hooks.md): UserPromptSubmit,
// PostToolBatch, Stop, StopFailure, SessionEnd, PreToolUse, and PostToolUse
// for its TodoWrite tool. Output tokens come from the transcript at
// transcript_path: the usage of each assistant message.
type claude struct{}

// claudeInput is the part of a Claude Code hook event agentd reads.
type claudeInput struct {
	HookEventName        string          `json:"hook_event_name"`
	SessionID            string          `json:"session_id"`
	TranscriptPath       string          `json:"transcript_path"`
	Cwd                  string          `json:"cwd"`
	AgentID              string          `json:"agent_id"`
	PromptID             string          `json:"prompt_id"`
	ToolUseID            string          `json:"tool_use_id"`
	ToolName             string          `json:"tool_name"`
	ToolInput            json.RawMessage `json:"tool_input"`
	LastAssistantMessage string          `json:"last_assistant_message"`
	Error                string          `json:"error"`
	ErrorDetails         string          `json:"error_details"`
	ToolCalls            []struct {
		ToolUseID string `json:"tool_use_id"`
	} `json:"tool_calls"`
}

func (claude) parse(raw []byte) (event, error) {
	var in claudeInput
	if err := decodeEvent(raw, &in); err != nil {
		return event{}, err
	}
	ev := event{name: in.HookEventName, session: in.SessionID, cwd: in.Cwd, transcript: in.TranscriptPath, subagent: in.AgentID, tool: in.ToolName}
	switch in.HookEventName {
	case "UserPromptSubmit":
		ev.kind, ev.id = kindPrompt, in.PromptID
	case "PostToolBatch":
		ev.kind = kindBoundary
		for _, tc := range in.ToolCalls {
			ev.toolIDs = append(ev.toolIDs, tc.ToolUseID)
		}
	case "Stop":
		ev.kind, ev.id, ev.lastMessage = kindStop, in.PromptID, in.LastAssistantMessage
	case "StopFailure":
		ev.kind, ev.errKind, ev.errMsg = kindFailure, errorKind(in.Error), in.ErrorDetails
	case "SessionEnd":
		ev.kind = kindEnd
	case "PreToolUse":
		ev.kind, ev.id, ev.input = kindGate, in.ToolUseID, in.ToolInput
		if in.ToolUseID != "" {
			ev.toolIDs = []string{in.ToolUseID} // its end is PostToolBatch's (shell.go)
		}
	case "PostToolUse":
		ev.id = in.ToolUseID
		if in.ToolName != "TodoWrite" {
			return ev, nil
		}
		todos, err := claudeTodos(in.ToolInput)
		if err != nil {
			return event{}, err
		}
		ev.kind, ev.todos = kindTodos, todos
	case "":
		return event{}, errMissing("hook_event_name")
	}
	return ev, nil
}

// render: Claude Code shows every hook output to the model inside a
// <system-reminder> of its own, so agentd's texts go in the agent's form
// without theirs (agentText).
func (claude) render(ev event, o outcome) ([]byte, error) { return renderClaudeShape(ev, o, true) }

// renderClaudeShape is the output of Claude Code's shapes (Codex's too);
// contextWrapped says whether the agent wraps additionalContext itself.
// The block reason of a Stop is wrapped by both.
func renderClaudeShape(ev event, o outcome, contextWrapped bool) ([]byte, error) {
	switch {
	case o.stop != "":
		return marshal(map[string]any{"continue": false, "stopReason": o.stop})
	case o.prompt != "":
		return marshal(map[string]any{"decision": "block", "reason": agentText(withContext(o.prompt, o.context), true)})
	case o.deny != "":
		return marshal(map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": ev.name, "permissionDecision": "deny", "permissionDecisionReason": o.deny}})
	case o.input != "":
		return marshal(map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": ev.name, "permissionDecision": "allow", "updatedInput": json.RawMessage(o.input)}})
	case o.context != "":
		return marshal(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": ev.name, "additionalContext": agentText(o.context, contextWrapped)}})
	}
	return nil, nil
}

// claudeLine is the part of a transcript line agentd reads.
type claudeLine struct {
	Type        string `json:"type"`
	IsSidechain bool   `json:"isSidechain"`
	Message     struct {
		ID      string `json:"id"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Usage struct {
			OutputTokens int64 `json:"output_tokens"`
		} `json:"usage"`
	} `json:"message"`
}

// read reads the transcript's new lines into the cursor: the newest
// message with text, and each assistant message's output tokens (once per
// message id, at its largest value), unclaimed until tokens takes them.
func (claude) read(ev event, c *cursor) error {
	return readNew(ev.transcript, c, func(b []byte) {
		var l claudeLine
		if json.Unmarshal(b, &l) != nil || l.Type != "assistant" || l.IsSidechain || l.Message.ID == "" {
			return
		}
		var text []string
		for _, part := range l.Message.Content {
			if part.Type == "text" {
				text = append(text, part.Text)
			}
		}
		if len(text) > 0 {
			c.LastText, c.TextID = strings.Join(text, "\n"), l.Message.ID
		}
		// A message may take several lines (one per content block).
		countMessage(c, l.Message.ID, l.Message.Usage.OutputTokens)
	})
}

func (h claude) tokens(ctx context.Context, ev event, c *cursor) (int64, int, error) {
	if err := h.read(ev, c); err != nil {
		return 0, 0, err
	}
	total, responses := claim(c)
	return total, responses, nil
}

// key: a prompt is its prompt_id (and its bytes), a tool event its
// tool_use_id, a batch its tool calls' ids; a Stop is its prompt_id and the
// assistant message it ends, since every Stop of a prompt and its
// continuations carries the same prompt_id and, when the model repeats
// itself, the same bytes. A prompt without a prompt_id (an older Claude
// Code) is its bytes at the newest assistant message of the transcript.
// An event whose place cannot be found (no transcript, no message in it)
// has no identity and is handled every time, as StopFailure and
// SessionEnd are (handling those twice changes nothing).
func (h claude) key(ctx context.Context, ev event, raw []byte, c *cursor) (string, error) {
	switch {
	case ev.kind == kindStop:
		id, err := h.ended(ctx, ev, c)
		if err != nil || id == "" {
			return "", err
		}
		return eventKey(ev.name, ev.id, id), nil
	case ev.kind == kindPrompt && ev.id == "":
		if err := h.read(ev, c); err != nil || newestMessage(c) == "" {
			return "", err
		}
		return eventKey(ev.name, newestMessage(c), digest(raw)), nil
	case ev.kind == kindPrompt:
		return eventKey(ev.name, ev.id, digest(raw)), nil
	case ev.kind == kindBoundary && len(ev.toolIDs) > 0:
		return eventKey(append([]string{ev.name}, ev.toolIDs...)...), nil
	case ev.id != "":
		return eventKey(ev.name, ev.id), nil
	}
	return "", nil
}

// ended is the id of the assistant message a Stop ends, and the cursor
// remembers it: the newest message with text, once it holds
// last_assistant_message and is not the message the last Stop ended.
// Claude Code writes its transcript behind its hooks, so it waits until
// transcriptDeadline for that message; when none comes (the same Stop delivered
// again), the Stop's place is the message the last Stop ended. A Stop
// without last_assistant_message ends the newest message as read.
func (h claude) ended(ctx context.Context, ev event, c *cursor) (string, error) {
	want := strings.TrimSpace(ev.lastMessage)
	deadline := transcriptDeadline(ctx)
	for {
		if err := h.read(ev, c); err != nil {
			return "", err
		}
		if want == "" {
			c.Ended = newestMessage(c)
			return c.Ended, nil
		}
		if c.TextID != c.Ended && strings.Contains(c.LastText, want) || !time.Now().Before(deadline) {
			c.Ended = c.TextID
			return c.Ended, nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// newestMessage is the id of the newest assistant message read, or "".
func newestMessage(c *cursor) string {
	if len(c.Messages) == 0 {
		return ""
	}
	return c.Messages[len(c.Messages)-1].ID
}

// boundary: a PostToolBatch whose tool calls were seen already is a repeat.
func (h claude) boundary(ctx context.Context, ev event, c *cursor) (int64, bool, error) {
	for _, id := range ev.toolIDs {
		if slices.Contains(c.Batches, id) {
			return 0, false, nil
		}
	}
	tokens, _, err := h.tokens(ctx, ev, c)
	if err != nil {
		return 0, false, err
	}
	c.Batches = append(c.Batches, ev.toolIDs...)
	if len(c.Batches) > maxBatchIDs {
		c.Batches = slices.Clone(c.Batches[len(c.Batches)-maxBatchIDs:])
	}
	return tokens, true, nil
}

func (claude) beginsContinuation() bool { return true }

// withContext is a continuation prompt followed by the injections of the
// turn it begins.
func withContext(prompt, context string) string {
	if context == "" {
		return prompt
	}
	return prompt + "\n\n" + context
}

// todoStatus maps an agent's todo status to agentd's (docs/runtime.md §1):
// completed (and Gemini CLI's cancelled) is done.
func todoStatus(s string) protocol.TodoStatus {
	switch s {
	case "in_progress":
		return protocol.TodoInProgress
	case "completed", "cancelled", "done":
		return protocol.TodoDone
	}
	return protocol.TodoPending
}

// errorKind maps the error of a failed turn (Claude Code and Codex
// StopFailure) to agentd's kinds (docs/runtime.md §2.6).
func errorKind(e string) string {
	switch e {
	case "rate_limit":
		return "rate_limit"
	case "authentication_failed", "oauth_org_not_allowed", "account_on_hold", "verification_required", "billing_error", "cloud_credential_error":
		return "auth"
	case "model_not_found":
		return "config"
	case "overloaded", "server_error", "invalid_request":
		return "api"
	}
	return "other"
}

// claudeTodos reads the input of Claude Code's TodoWrite (and Qwen Code's
// todo_write, the same shape) as the list agentd mirrors.
func claudeTodos(input json.RawMessage) ([]protocol.TodoItem, error) {
	var tw struct {
		Todos []struct {
			Content string `json:"content"`
			Status  string `json:"status"`
		} `json:"todos"`
	}
	if err := json.Unmarshal(input, &tw); err != nil {
		return nil, err
	}
	todos := []protocol.TodoItem{}
	for _, t := range tw.Todos {
		todos = append(todos, protocol.TodoItem{Title: t.Content, Status: todoStatus(t.Status)})
	}
	return todos, nil
}
