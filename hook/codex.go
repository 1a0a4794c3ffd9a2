package hook

import (
	"context"
	"encoding/json"
	"strconv"
)

// codex is Codex's hooks (docs/hooks.md): UserPromptSubmit, PostToolUse
// (also for its update_plan tool), Stop, StopFailure and PreToolUse. Codex
// refuses output keys it does not know, so only documented keys are
// printed. Output tokens come from the rollout transcript: the
// total_token_usage of its token_count events.
type codex struct{}

type codexInput struct {
	HookEventName  string          `json:"hook_event_name"`
	SessionID      string          `json:"session_id"`
	TurnID         string          `json:"turn_id"`
	ToolUseID      string          `json:"tool_use_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	Error          string          `json:"error"`
	ErrorDetails   string          `json:"error_details"`
}

func (codex) parse(raw []byte) (event, error) {
	var in codexInput
	if err := decodeEvent(raw, &in); err != nil {
		return event{}, err
	}
	ev := event{name: in.HookEventName, session: in.SessionID, id: in.TurnID, cwd: in.Cwd, transcript: in.TranscriptPath, tool: in.ToolName}
	if in.ToolUseID != "" {
		ev.id += "/" + in.ToolUseID
	}
	switch in.HookEventName {
	case "UserPromptSubmit":
		ev.kind = kindPrompt
	case "PostToolUse":
		ev.kind = kindBoundary
		if in.ToolName == "update_plan" {
			var up struct {
				Plan []struct {
					Step   string `json:"step"`
					Status string `json:"status"`
				} `json:"plan"`
			}
			if err := json.Unmarshal(in.ToolInput, &up); err != nil {
				return event{}, err
			}
			ev.todos = []todoItem{}
			for _, p := range up.Plan {
				ev.todos = append(ev.todos, todoItem{Title: p.Step, Status: todoStatus(p.Status)})
			}
		}
	case "Stop":
		ev.kind = kindStop
	case "StopFailure":
		ev.kind, ev.errKind, ev.errMsg = kindFailure, errorKind(in.Error), in.ErrorDetails
	case "PreToolUse":
		ev.kind = kindGate
	case "":
		return event{}, errMissing("hook_event_name")
	}
	return ev, nil
}

// render: Codex's hook outputs have Claude Code's shapes (the keys its
// schemas allow are a subset of Claude Code's, TestHookOutputKeys). Codex
// gives additionalContext to the model as it is, and a Stop's reason
// inside a <hook_prompt> of its own with every tag escaped (agentText).
func (codex) render(ev event, o outcome) ([]byte, error) { return renderClaudeShape(ev, o, false) }

type codexLine struct {
	Type    string `json:"type"`
	Payload struct {
		Type string `json:"type"`
		Info *struct {
			TotalTokenUsage struct {
				OutputTokens int64 `json:"output_tokens"`
			} `json:"total_token_usage"`
		} `json:"info"`
	} `json:"payload"`
}

// read reads the rollout's new lines into the cursor: the growth of the
// cumulative output tokens of its token_count events, each growth one
// model response, unclaimed until tokens takes them.
func (codex) read(ev event, c *cursor) error {
	if c.Transcript != ev.transcript {
		c.Total = 0 // another rollout file counts from its start
	}
	return readNew(ev.transcript, c, func(b []byte) {
		var l codexLine
		if json.Unmarshal(b, &l) != nil || l.Type != "event_msg" || l.Payload.Type != "token_count" || l.Payload.Info == nil {
			return
		}
		if n := l.Payload.Info.TotalTokenUsage.OutputTokens; n > c.Total {
			c.Unclaimed += n - c.Total
			c.Total = n
			c.UnclaimedResponses++
		}
	})
}

// tokens: the output tokens and responses read since the last claim.
func (h codex) tokens(ctx context.Context, ev event, c *cursor) (int64, int, error) {
	if err := h.read(ev, c); err != nil {
		return 0, 0, err
	}
	total, responses := c.Unclaimed, c.UnclaimedResponses
	c.Unclaimed, c.UnclaimedResponses = 0, 0
	return total, responses, nil
}

// key: a tool event is its turn_id and tool_use_id, a prompt its turn_id
// (new for each prompt) and bytes (none without a turn_id). A Stop is its turn_id and bytes at the
// rollout's cumulative output tokens: Codex keeps the turn_id through the
// continuations a Stop makes (0.169), a model that repeats itself makes
// equal bytes, and every model call between two Stops adds to the
// tokens. A Stop with no tokens in its rollout (none there) has no place
// and is handled every time.
func (h codex) key(ctx context.Context, ev event, raw []byte, c *cursor) (string, error) {
	switch ev.kind {
	case kindPrompt:
		if ev.id == "" {
			return "", nil
		}
		return eventKey(ev.name, ev.id, digest(raw)), nil
	case kindStop:
		if err := h.read(ev, c); err != nil || c.Total == 0 {
			return "", err
		}
		return eventKey(ev.name, ev.id, strconv.FormatInt(c.Total, 10), digest(raw)), nil
	case kindBoundary, kindGate, kindTodos:
		if ev.id != "" {
			return eventKey(ev.name, ev.id), nil
		}
	}
	return "", nil
}

// boundary: a PostToolUse with no model response since the last one is
// another tool of the same response (parallel tool calls) or a repeat.
func (h codex) boundary(ctx context.Context, ev event, c *cursor) (int64, bool, error) {
	saved := *c
	n, responses, err := h.tokens(ctx, ev, c)
	if err != nil || responses == 0 {
		*c = saved
		return 0, false, err
	}
	return n, true, nil
}

func (codex) beginsContinuation() bool { return true }
