package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// copilot is GitHub Copilot CLI's hooks (docs/hooks.md), from a
// .github/hooks/*.json file: userPromptSubmitted, preToolUse, postToolUse,
// agentStop and sessionEnd (sessionStart is installed and ignored). Its
// input names no event: each is known by the keys only it has. Every event
// carries sessionId and the time it fired in milliseconds, and no tool call
// id. Output tokens come from the session's events.jsonl (transcriptPath):
// data.usage.outputTokens of each session.usage_record of the main loop.
type copilot struct{}

type copilotInput struct {
	HookEventName  string          `json:"hookEventName"`
	SessionID      string          `json:"sessionId"`
	Timestamp      json.Number     `json:"timestamp"`
	Cwd            string          `json:"cwd"`
	AgentID        string          `json:"agentId"`
	Prompt         *string         `json:"prompt"`
	ToolName       string          `json:"toolName"`
	ToolResult     json.RawMessage `json:"toolResult"`
	TranscriptPath string          `json:"transcriptPath"`
	StopReason     *string         `json:"stopReason"`
	Reason         *string         `json:"reason"`
	Source         *string         `json:"source"`
}

// copilotEvent names the event of in by its keys: prompt is
// userPromptSubmitted, toolResult postToolUse, toolName without it
// preToolUse, stopReason agentStop, reason sessionEnd, source sessionStart.
func copilotEvent(in copilotInput) string {
	switch {
	case in.HookEventName != "":
		return in.HookEventName
	case in.Prompt != nil:
		return "userPromptSubmitted"
	case in.ToolName != "" && in.ToolResult != nil:
		return "postToolUse"
	case in.ToolName != "":
		return "preToolUse"
	case in.StopReason != nil || in.TranscriptPath != "":
		return "agentStop"
	case in.Reason != nil:
		return "sessionEnd"
	case in.Source != nil:
		return "sessionStart"
	}
	return ""
}

func (copilot) parse(raw []byte) (event, error) {
	var in copilotInput
	if err := decodeEvent(raw, &in); err != nil {
		return event{}, err
	}
	ev := event{name: copilotEvent(in), session: in.SessionID, id: in.Timestamp.String(), cwd: in.Cwd,
		transcript: in.TranscriptPath, subagent: in.AgentID, tool: in.ToolName}
	if ev.transcript == "" && plainName(in.SessionID) {
		ev.transcript = copilotTranscript(in.SessionID)
	}
	switch ev.name {
	case "userPromptSubmitted":
		ev.kind = kindPrompt
	case "postToolUse":
		ev.kind = kindBoundary
	case "preToolUse":
		ev.kind = kindGate
	case "agentStop":
		ev.kind = kindStop
	case "sessionEnd":
		ev.kind = kindEnd
	case "":
		return event{}, errMissing("prompt, toolName, stopReason or reason (no event could be told from the input)")
	}
	return ev, nil
}

// plainName says that s names one entry of a folder: not empty, no
// separator, not "." or "..".
func plainName(s string) bool {
	return s != "" && s != "." && s != ".." && filepath.Base(s) == s
}

// copilotTranscript is where Copilot CLI keeps the events of a session
// ($COPILOT_HOME, else ~/.copilot): the events other than agentStop do not
// carry the path.
func copilotTranscript(session string) string {
	home := os.Getenv("COPILOT_HOME")
	if home == "" {
		dir, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		home = filepath.Join(dir, ".copilot")
	}
	return filepath.Join(home, "session-state", session, "events.jsonl")
}

// render: agentStop keeps the agent going with decision block (the reason
// becomes the next user message); userPromptSubmitted and postToolUse add
// additionalContext for the model; preToolUse refuses a tool with
// permissionDecision deny. A hook cannot end a Copilot CLI run, so a stop
// at a boundary tells the model, as context, that agentd stopped it.
func (copilot) render(ev event, o outcome) ([]byte, error) {
	switch {
	case o.prompt != "":
		return marshal(map[string]any{"decision": "block", "reason": withContext(o.prompt, o.context)})
	case o.deny != "":
		return marshal(map[string]any{"permissionDecision": "deny", "permissionDecisionReason": o.deny})
	case o.stop != "" && ev.kind == kindBoundary:
		return marshal(map[string]any{"additionalContext": withContext(o.stop+". Stop now: end your turn with a short summary for the user, and call no more tools.", o.context)})
	case o.context != "" && (ev.kind == kindPrompt || ev.kind == kindBoundary):
		return marshal(map[string]any{"additionalContext": o.context})
	}
	return nil, nil
}

type copilotLine struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Data struct {
		Usage *struct {
			OutputTokens    int64  `json:"outputTokens"`
			InteractionType string `json:"interactionType"`
		} `json:"usage"`
	} `json:"data"`
}

// read reads the session's new events into the cursor: each
// session.usage_record of the main loop (interactionType
// conversation-agent) is one model response, its output tokens
// outputTokens, unclaimed until tokens takes them.
func (copilot) read(ev event, c *cursor) error {
	return readNew(ev.transcript, c, func(b []byte) {
		if !bytes.Contains(b, []byte(`"session.usage_record"`)) {
			return
		}
		var l copilotLine
		if json.Unmarshal(b, &l) != nil || l.Type != "session.usage_record" || l.ID == "" || l.Data.Usage == nil {
			return
		}
		if it := l.Data.Usage.InteractionType; it != "" && it != "conversation-agent" {
			return // a side query (a title, a summary), not the agent's loop
		}
		countMessage(c, l.ID, l.Data.Usage.OutputTokens)
	})
}

func (h copilot) tokens(ctx context.Context, ev event, c *cursor) (int64, int, error) {
	return transcriptTokens(ctx, ev, c, h.read, anyResponse)
}

// boundary: a postToolUse with no model response since the last claim is
// another tool of the same response (parallel tool calls).
func (h copilot) boundary(ctx context.Context, ev event, c *cursor) (int64, bool, error) {
	return responseBoundary(ctx, ev, c, h.tokens)
}

// key: the event and the time it fired, to the millisecond, and its bytes:
// a model that ends every turn with the same words makes agentStop events
// at different times. One without a timestamp is handled every time.
func (copilot) key(ctx context.Context, ev event, raw []byte, c *cursor) (string, error) {
	if _, err := strconv.ParseInt(ev.id, 10, 64); err != nil {
		return "", nil
	}
	return eventKey(ev.name, ev.id, digest(raw)), nil
}

// beginsContinuation: the agentStop that blocks begins the continuation's
// turn; Copilot CLI queues its reason as the next user message.
func (copilot) beginsContinuation() bool { return true }

// copilotRunsClaude says that a `agentd hook claude` event comes from
// Copilot CLI, which also runs the hooks of .claude/settings.json with
// Claude Code's names but its own ids and transcript (docs/hooks.md,
// "The same event twice"): Copilot CLI sets COPILOT_CLI=1 for its hooks,
// and its Claude-style input carries a timestamp Claude Code's has not.
// agentd counts such an event only through `agentd hook copilot`.
func copilotRunsClaude(raw []byte) bool {
	if os.Getenv("COPILOT_CLI") != "1" {
		return false
	}
	var in struct {
		Timestamp json.RawMessage `json:"timestamp"`
	}
	return json.Unmarshal(raw, &in) == nil && in.Timestamp != nil
}

// copilotBlockCap is how many agentStop continuations in a row Copilot CLI
// 1.0 obeys: it ends the turn at the next block (its changelog: "ends the
// turn after 8 consecutive blocks").
const copilotBlockCap = 8

// refuses: Copilot CLI would end the turn at the next block
// (docs/hooks.md, "The agents' own limits").
func (copilot) refuses(c *cursor) string {
	if c.Blocks < copilotBlockCap {
		return ""
	}
	return fmt.Sprintf("GitHub Copilot CLI stopped after %d continuations in a row: it ends a turn at the next agentStop block; resume the goal to go on", c.Blocks)
}

// unrun: Copilot CLI's events do not show a turn without a model call.
func (copilot) unrun(context.Context, event, *cursor) (string, error) { return "", nil }

// blocksAcrossTools: its count is per prompt.
func (copilot) blocksAcrossTools() bool { return true }
