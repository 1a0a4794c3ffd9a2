package hook

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/agentd/agentd/commands/protocol"
	"os"
	"strconv"
	"strings"

	"github.com/agentd/agentd/goal"
)

// The agents' own loop limits (docs/hooks.md, "The agents' own limits").
// An agent that stops obeying agentd's continuation, or runs a turn without
// calling the model, must not be continued further, nor its turns counted:
// the turn it did not run ends failed with error kind agent_limit, which
// counts nothing and pauses the goal with a reason naming the limit
// (docs/runtime.md §2.6).

// capped is a host whose own limits can end a run agentd continues.
type capped interface {
	// refuses is why the agent would not run the continuation agentd
	// is about to give at this stop, or "" when it would.
	refuses(c *cursor) string
	// unrun is why the open turn ended with no model call in it, or ""
	// when the model was called.
	unrun(ctx context.Context, ev event, c *cursor) (string, error)
	// blocksAcrossTools: the agent's count of blocks in a row goes on
	// across tool calls (else a tool batch starts it again).
	blocksAcrossTools() bool
}

// endUnrun ends the open turn when the agent called no model in it
// (capped.unrun): failed, kind agent_limit, and the agent is stopped with
// the reason. done is false when the turn had a model call.
func (e *engine) endUnrun(ctx context.Context) (o outcome, done bool, err error) {
	h, ok := e.host.(capped)
	if !ok || e.c.Turn == "" {
		return outcome{}, false, nil
	}
	why, err := h.unrun(ctx, e.ev, &e.c)
	if err != nil || why == "" {
		return outcome{}, false, err
	}
	if _, err := e.finishTurn(ctx, protocol.OutcomeFailed, &protocol.TurnError{Kind: goal.KindAgentLimit, Message: why}); err != nil {
		return outcome{}, true, err
	}
	e.c.Blocks, e.c.Continued = 0, false
	return outcome{stop: limitStop(why)}, true, nil
}

// refuseContinuation is called at a stop whose turn end gave a
// continuation: when the agent would not run it (capped.refuses), the
// continuation's turn is begun and ended at once, with no step (so not
// counted), failed with kind agent_limit, which pauses the goal, and the
// agent is stopped with the reason. Otherwise the continuation is one more
// in a row.
func (e *engine) refuseContinuation(ctx context.Context) (o outcome, done bool, err error) {
	h, ok := e.host.(capped)
	if !ok {
		return outcome{}, false, nil
	}
	why := h.refuses(&e.c)
	if why == "" {
		e.c.Blocks++
		return outcome{}, false, nil
	}
	id, err := newTurnID(e.opts.Host)
	if err != nil {
		return outcome{}, true, err
	}
	if err := e.exec(ctx, protocol.CmdTurnBegin, protocol.TurnBeginArgs{TurnID: id, Origin: protocol.OriginContinuation, Detached: true}, nil); err != nil {
		return outcome{}, true, err
	}
	e.c.Turn, e.c.StepOpen, e.c.Grace = id, false, false
	if _, err := e.endTurn(ctx, protocol.OutcomeFailed, &protocol.TurnError{Kind: goal.KindAgentLimit, Message: why}); err != nil {
		return outcome{}, true, err
	}
	e.c.Blocks = 0
	return outcome{stop: limitStop(why)}, true, nil
}

// limitStop is the line the user sees when agentd stops the agent at one
// of the agent's own limits.
func limitStop(why string) string {
	return "agentd paused the goal: " + why
}

// claudeDefaultBlockCap is how many Stop hook blocks in a row Claude Code
// obeys when CLAUDE_CODE_STOP_HOOK_BLOCK_CAP is not set (Claude Code 2.1:
// at the next one it ends the turn itself). Tool calls other than its own
// goal tools (which agentd asks you to keep off) reset the count.
const claudeDefaultBlockCap = 8

// claudeBlockCap is Claude Code's CLAUDE_CODE_STOP_HOOK_BLOCK_CAP as the
// hook sees it (Claude Code passes its environment, with the env of its
// settings, to its hooks): 0 or less is no cap; a value that is not a
// whole number is the default, as Claude Code reads it.
func claudeBlockCap() int {
	n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP")))
	if err != nil {
		return claudeDefaultBlockCap
	}
	return n
}

// refuses: Claude Code ignores a block past its cap of blocks in a row and
// ends the turn (docs/hooks.md, "The agents' own limits").
func (claude) refuses(c *cursor) string {
	limit := claudeBlockCap()
	if limit <= 0 || c.Blocks < limit {
		return ""
	}
	return fmt.Sprintf("Claude Code stopped after %d continuations in a row without a tool call: its CLAUDE_CODE_STOP_HOOK_BLOCK_CAP (%d) ends the run at the next one; resume the goal to go on", c.Blocks, limit)
}

// unrun: the continuation turn a Stop began got no assistant message
// before the session ended (Claude Code ended the run itself).
func (h claude) unrun(ctx context.Context, ev event, c *cursor) (string, error) {
	if err := h.read(ev, c); err != nil || c.Called || c.UnclaimedResponses > 0 {
		return "", err
	}
	return fmt.Sprintf("Claude Code ended the run without running agentd's continuation, after %d continuations in a row (its --max-turns, or its CLAUDE_CODE_STOP_HOOK_BLOCK_CAP, %d); resume the goal to go on", c.Blocks, claudeBlockCap()), nil
}

// geminiMaxTurns is Gemini CLI's MAX_TURNS (0.61): the model calls one
// prompt may make, each continuation one less; at 0 a turn makes none.
const geminiMaxTurns = 100

// geminiLoopNote opens the message Gemini CLI sends the model when its
// loop detection first finds the model repeating itself; at the second
// finding it calls the model no more for that prompt.
const geminiLoopNote = "System: Potential loop detected."

// blocksAcrossTools: Claude Code starts its count again at a tool call.
func (claude) blocksAcrossTools() bool { return false }

// blocksAcrossTools: MAX_TURNS is per prompt, but the reason only names
// it; a tool batch starts the count again.
func (gemini) blocksAcrossTools() bool { return false }

// refuses: Gemini CLI's limits cannot be told in advance; unrun notices
// the turn that made no model call.
func (gemini) refuses(c *cursor) string { return "" }

// unrun: an AfterAgent with no model call (BeforeModel) since its
// BeforeAgent.
func (gemini) unrun(ctx context.Context, ev event, c *cursor) (string, error) {
	switch {
	case c.Called:
		return "", nil
	case c.Loop:
		return "Gemini CLI stopped calling the model: its loop detection found the model repeating itself, twice; resume the goal to go on", nil
	case c.Blocks >= geminiMaxTurns:
		return fmt.Sprintf("Gemini CLI stopped calling the model after %d continuations of one prompt: its MAX_TURNS (%d); resume the goal to go on", c.Blocks, geminiMaxTurns), nil
	}
	return "Gemini CLI ended a turn without calling the model (its model.maxSessionTurns setting, a full context window or another limit of its own); resume the goal to go on", nil
}

// geminiLoopSpoke reports whether a BeforeModel request's last user
// message is Gemini CLI's loop warning to the model.
func geminiLoopSpoke(messages json.RawMessage) bool {
	var msgs []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	if json.Unmarshal(messages, &msgs) != nil {
		return false
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return strings.HasPrefix(strings.TrimSpace(msgs[i].Content), geminiLoopNote)
		}
	}
	return false
}
