package hook

import (
	"context"
	"encoding/json"
	"github.com/agentd/agentd/commands/protocol"
	"slices"
	"strconv"
	"strings"
	"time"
)

// codex is Codex's hooks (docs/hooks.md): UserPromptSubmit, PostToolUse
// (also for its update_plan tool), Stop, PreToolUse, Interrupt and
// SessionEnd (Codex 0.169 has no StopFailure). Codex refuses output keys it
// does not know, so only documented keys are printed. Output tokens come
// from the rollout transcript: its token_usage_record lines (read).
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
}

func (codex) parse(raw []byte) (event, error) {
	var in codexInput
	if err := decodeEvent(raw, &in); err != nil {
		return event{}, err
	}
	ev := event{name: in.HookEventName, session: in.SessionID, id: in.TurnID, cwd: in.Cwd, transcript: in.TranscriptPath, tool: in.ToolName}
	if in.ToolUseID != "" {
		ev.id += "/" + in.ToolUseID
		ev.toolIDs = []string{in.ToolUseID}
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
			ev.todos = []protocol.TodoItem{}
			for _, p := range up.Plan {
				ev.todos = append(ev.todos, protocol.TodoItem{Title: p.Step, Status: todoStatus(p.Status)})
			}
		}
	case "Stop":
		ev.kind = kindStop
	case "Interrupt", "SessionEnd":
		ev.kind = kindEnd
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
		Type   string `json:"type"`
		CallID string `json:"call_id"`
		Usage  *struct {
			OutputTokens int64 `json:"output_tokens"`
		} `json:"usage"`
		Info *struct {
			TotalTokenUsage struct {
				OutputTokens int64 `json:"output_tokens"`
			} `json:"total_token_usage"`
		} `json:"info"`
	} `json:"payload"`
}

// read reads the rollout's new lines into the cursor: each model
// response's output tokens, unclaimed until tokens takes them. Codex 0.169
// writes a token_usage_record (the response's usage) as each response
// completes; its token_count events carry the same counts cumulatively but
// are written after the response's tool calls have run, a step late
// (issue 26). So a rollout with records counts those, and one without
// (an older Codex) the growth of token_count's total. The call ids of a
// response are kept until its record is read (Calls).
func (codex) read(ev event, c *cursor) error {
	if c.Transcript != ev.transcript {
		c.Total, c.Records, c.Calls = 0, false, nil // another rollout file counts from its start
	}
	return readNew(ev.transcript, c, func(b []byte) {
		var l codexLine
		if json.Unmarshal(b, &l) != nil {
			return
		}
		p := l.Payload
		switch {
		case l.Type == "token_usage_record" && p.Usage != nil:
			c.Records, c.Calls = true, nil
			c.Unclaimed = addTokens(c.Unclaimed, p.Usage.OutputTokens)
			c.Total = addTokens(c.Total, p.Usage.OutputTokens)
			c.UnclaimedResponses++
		case l.Type == "response_item" && p.CallID != "" && strings.HasSuffix(p.Type, "_call"):
			if len(c.Calls) < maxBatchIDs {
				c.Calls = append(c.Calls, p.CallID)
			}
		case l.Type == "event_msg" && p.Type == "token_count" && p.Info != nil && !c.Records:
			c.Calls = nil
			if n := p.Info.TotalTokenUsage.OutputTokens; n > c.Total {
				c.Unclaimed = addTokens(c.Unclaimed, n-c.Total)
				c.Total = n
				c.UnclaimedResponses++
			}
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

// boundary: a PostToolUse ends the step of its tool's model response. In
// a rollout with records it first waits up to recordWait for that
// response's record when its call is read and the record is not. A
// PostToolUse with no model response since the last one is another tool
// of the same response (parallel tool calls) or a repeat.
func (h codex) boundary(ctx context.Context, ev event, c *cursor) (int64, bool, error) {
	saved := *c
	if err := h.awaitRecord(ctx, ev, c); err != nil {
		*c = saved
		return 0, false, err
	}
	n, responses, err := h.tokens(ctx, ev, c)
	if err != nil || responses == 0 {
		*c = saved
		return 0, false, err
	}
	return n, true, nil
}

// awaitRecord reads the rollout until the record of the response that
// called ev's tool is read, which Codex writes as the response completes,
// beside the tool run that its hook follows, until transcriptDeadline: in a rollout with
// records, or one with no response counted yet (the session's first, whose
// record may come); an older Codex, whose rollout has none, pays the wait
// once per rollout.
func (h codex) awaitRecord(ctx context.Context, ev event, c *cursor) error {
	deadline := transcriptDeadline(ctx)
	for {
		if err := h.read(ev, c); err != nil {
			return err
		}
		records := c.Records || c.Total == 0 && c.UnclaimedResponses == 0
		if !records || len(ev.toolIDs) == 0 || !slices.Contains(c.Calls, ev.toolIDs[0]) || !time.Now().Before(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (codex) beginsContinuation() bool { return true }
