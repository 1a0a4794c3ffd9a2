package hook

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// qwen is Qwen Code's hooks (docs/hooks.md): Claude Code's event names and
// output shapes, with UserPromptSubmit, PreToolUse, PostToolUse for its
// todo_write tool, Stop, StopFailure and SessionEnd. Qwen Code sends a UserPromptSubmit
// with an empty prompt each time it gives tool results back to the model
// (0.24): that one is the boundary between two model calls, not the user
// interrupting. Output tokens come from its transcript at transcript_path:
// usageMetadata.candidatesTokenCount of each assistant line.
type qwen struct{}

type qwenInput struct {
	HookEventName        string          `json:"hook_event_name"`
	SessionID            string          `json:"session_id"`
	TranscriptPath       string          `json:"transcript_path"`
	Cwd                  string          `json:"cwd"`
	Timestamp            string          `json:"timestamp"`
	AgentID              string          `json:"agent_id"`
	PromptID             string          `json:"prompt_id"`
	Prompt               *string         `json:"prompt"`
	ToolName             string          `json:"tool_name"`
	ToolInput            json.RawMessage `json:"tool_input"`
	LastAssistantMessage string          `json:"last_assistant_message"`
	Error                string          `json:"error"`
	ErrorDetails         string          `json:"error_details"`
}

func (qwen) parse(raw []byte) (event, error) {
	var in qwenInput
	if err := decodeEvent(raw, &in); err != nil {
		return event{}, err
	}
	// id: the prompt_id (one for a prompt and every event of its turn) and
	// the time the event fired, to the millisecond.
	ev := event{name: in.HookEventName, session: in.SessionID, cwd: in.Cwd, transcript: in.TranscriptPath,
		subagent: in.AgentID, tool: in.ToolName, lastMessage: in.LastAssistantMessage}
	if in.Timestamp != "" {
		ev.id = in.PromptID + "@" + in.Timestamp
	}
	switch in.HookEventName {
	case "UserPromptSubmit":
		ev.kind = kindPrompt
		if in.Prompt != nil && *in.Prompt == "" {
			ev.kind = kindBoundary // the tool results going back to the model
		}
	case "Stop":
		ev.kind = kindStop
	case "StopFailure":
		ev.kind, ev.errKind, ev.errMsg = kindFailure, errorKind(in.Error), in.ErrorDetails
	case "SessionEnd":
		ev.kind = kindEnd
	case "PreToolUse":
		ev.kind = kindGate
	case "PostToolUse":
		if in.ToolName != "todo_write" {
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

// render: Claude Code's shapes, which Qwen Code reads (a boundary's
// context goes with the UserPromptSubmit that carries the tool results).
// render: Claude Code's shapes, but for a Stop that agentd ends the run
// at (a budget, a cap of Qwen Code's): Qwen Code 0.24 takes a Stop's
// {"continue": false} as one more block and calls the model again, so the
// reason goes as a systemMessage, which it shows the user (on stderr in
// -p), and the stop is allowed.
func (qwen) render(ev event, o outcome) ([]byte, error) {
	if ev.kind == kindStop && o.stop != "" && o.prompt == "" {
		return marshal(map[string]any{"systemMessage": o.stop})
	}
	return claude{}.render(ev, o)
}

type qwenLine struct {
	UUID    string `json:"uuid"`
	Type    string `json:"type"`
	Message *struct {
		Parts []struct {
			Text    string `json:"text"`
			Thought bool   `json:"thought"`
		} `json:"parts"`
	} `json:"message"`
	UsageMetadata *struct {
		CandidatesTokenCount int64 `json:"candidatesTokenCount"`
	} `json:"usageMetadata"`
}

// text is the response's text as Qwen Code gives it to a Stop's hooks
// (last_assistant_message): its parts' text, thoughts left out.
func (l qwenLine) text() string {
	if l.Message == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range l.Message.Parts {
		if !p.Thought {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// read reads the transcript's new lines into the cursor: each assistant
// line with usage is one model response, its output tokens
// candidatesTokenCount (Qwen Code's completion tokens, reasoning
// included), unclaimed until tokens takes them; LastText is the newest
// response's text.
func (qwen) read(ev event, c *cursor) error {
	return readNew(ev.transcript, c, func(b []byte) {
		var l qwenLine
		if json.Unmarshal(b, &l) != nil || l.Type != "assistant" || l.UUID == "" || l.UsageMetadata == nil {
			return
		}
		countMessage(c, l.UUID, l.UsageMetadata.CandidatesTokenCount)
		c.LastText = l.text()
	})
}

// qwenNoText is the last_assistant_message of a Stop whose response has
// no text (Qwen Code 0.24).
const qwenNoText = "[no response text]"

// ends: a Stop ends the newest response when it is not claimed yet and has
// the Stop's last_assistant_message as its text. Qwen Code writes its
// transcript behind its hooks, so at a Stop the transcript may hold only an
// earlier response not yet claimed (the tool call before it, whose line
// came after the tool results went back to the model): a Stop that took
// that one ended its turn without its own response, which was then counted
// in the next turn, and the run's last one never (docs/hooks.md, "The turn
// a hook opened"). A Stop without text waits for any response.
func (qwen) ends(ev event) func(*cursor) bool {
	want := strings.TrimSpace(ev.lastMessage)
	if want == "" || want == qwenNoText {
		return anyResponse
	}
	return func(c *cursor) bool { return c.UnclaimedResponses > 0 && strings.TrimSpace(c.LastText) == want }
}

// qwenStopTime is how long a Qwen Code Stop may take (lateStop): Qwen
// Code 0.24 queues the transcript line of the response a Stop ends before
// it runs the Stop's hooks, but writes its lines one at a time behind them,
// each checked and synced to disk, which a loaded machine delays by
// seconds; the Stop waits for that line (ends) until 0.7 s of this time is
// left. It is 2 s under the 10 s that agentd setup gives Qwen
// Code's hooks (setup/hooks.go), which is Qwen Code's own bound on the
// hook.
const qwenStopTime = 8 * time.Second

func (qwen) stopTime() time.Duration { return qwenStopTime }

func (h qwen) tokens(ctx context.Context, ev event, c *cursor) (int64, int, error) {
	return transcriptTokens(ctx, ev, c, h.read, h.ends(ev))
}

// boundary: an empty prompt with no model response since the last claim
// is none between two calls (a continuation's first, whose step the Stop
// began); the transcript position and the event's own id tell a repeat.
func (h qwen) boundary(ctx context.Context, ev event, c *cursor) (int64, bool, error) {
	return responseBoundary(ctx, ev, c, h.tokens)
}

// key: every event carries its prompt_id and the time it fired, to the
// millisecond, and no two events of a session share both: a model that
// ends every turn with the same words makes Stops of one prompt_id at
// different times. One without a timestamp is handled every time.
func (qwen) key(ctx context.Context, ev event, raw []byte, c *cursor) (string, error) {
	if ev.id == "" {
		return "", nil
	}
	return eventKey(ev.name, ev.id, digest(raw)), nil
}

// beginsContinuation: the Stop that blocks begins the continuation's turn
// (a prompt event for it, if Qwen Code sends one, is that turn's).
func (qwen) beginsContinuation() bool { return true }

// qwenBlockCap is Qwen Code's default stopHookBlockingCap: at that many
// Stop blocks in a row it overrides the last and ends the turn, so it obeys
// one fewer. QWEN_CODE_STOP_HOOK_BLOCK_CAP, which its hooks inherit,
// overrides it; the setting in a settings file is not seen here
// (docs/hooks.md, "Qwen Code").
const qwenBlockCap = 8

func (qwen) cap() int {
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("QWEN_CODE_STOP_HOOK_BLOCK_CAP"))); err == nil && n >= 1 {
		return n
	}
	return qwenBlockCap
}

// refuses: Qwen Code would override the next block and end the turn
// (docs/hooks.md, "The agents' own limits").
func (h qwen) refuses(c *cursor) string {
	limit := h.cap()
	if c.Blocks < limit-1 {
		return ""
	}
	return fmt.Sprintf("Qwen Code stopped after %d continuations in a row: its stopHookBlockingCap (%d) ends the turn at the next one; resume the goal to go on", c.Blocks, limit)
}

// unrun: Qwen Code's events do not show a turn without a model call.
func (qwen) unrun(context.Context, event, *cursor) (string, error) { return "", nil }

// blocksAcrossTools: Qwen Code counts its blocks per prompt, across tool
// round trips (its hooks documentation, "Blocking cap").
func (qwen) blocksAcrossTools() bool { return true }
