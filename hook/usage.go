package hook

import (
	"context"
	"math"
	"slices"
	"time"
)

// countMessage records the output tokens n of the model response id read
// from a transcript: a new id is one more unclaimed response and its tokens;
// an id seen already (a message written over several lines) adds only what
// its usage grew by, so a response counts once, at its largest value
// (Claude Code, Gemini CLI, Qwen Code, Copilot CLI).
func countMessage(c *cursor, id string, n int64) {
	n = max(n, 0)
	i := slices.IndexFunc(c.Messages, func(m counted) bool { return m.ID == id })
	if i < 0 {
		c.UnclaimedResponses++
		c.Unclaimed = addTokens(c.Unclaimed, n)
		c.Messages = append(c.Messages, counted{id, n})
		if len(c.Messages) > maxMessages {
			c.Messages = slices.Clone(c.Messages[len(c.Messages)-maxMessages:])
		}
		return
	}
	if n > c.Messages[i].Tokens {
		c.Unclaimed = addTokens(c.Unclaimed, n-c.Messages[i].Tokens)
		c.Messages[i].Tokens = n
	}
}

// addTokens is the sum a + n of output tokens, n read from the agent (its
// transcript, its plugin's event: what the model's provider reported, in a
// file the user's processes can write). A negative n adds nothing, so that
// one response cannot take back the tokens of others, and the sum
// saturates instead of wrapping to a negative total, which agentd would
// refuse with the step's tokens (docs/security.md, "Token counts a hook
// reads cannot shrink a step's count").
func addTokens(a, n int64) int64 {
	if n <= 0 {
		return a
	}
	return min(a, math.MaxInt64-n) + n
}

// claim takes the unclaimed output tokens and responses from the cursor.
func claim(c *cursor) (int64, int) {
	total, responses := c.Unclaimed, c.UnclaimedResponses
	c.Unclaimed, c.UnclaimedResponses = 0, 0
	return total, responses
}

// answerReserve is the part of an event's time (Options.Timeout) that a
// hook waiting for the agent's transcript keeps for agentd's answer. The
// agents write their transcripts behind their hooks, a moment later on a
// loaded machine, so the wait lasts as long as the event's time allows
// rather than a fixed while, which the hook's own start may have eaten
// into already.
const answerReserve = 700 * time.Millisecond

// transcriptDeadline is when a wait for the agent's transcript gives up:
// once the event has only answerReserve left.
func transcriptDeadline(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d.Add(-answerReserve)
	}
	return time.Now().Add(DefaultTimeout - answerReserve)
}

// awaitResponse reads the transcript with read until ends says the
// response a stop ends is read or transcriptDeadline passes: an agent that
// writes its transcript behind its hooks (Qwen Code, Copilot CLI) may run
// the hook of a stop a moment before the response it ends is on disk. None
// coming is a stop delivered again, or one with no model call.
func awaitResponse(ctx context.Context, c *cursor, read func() error, ends func(*cursor) bool) error {
	deadline := transcriptDeadline(ctx)
	for {
		if err := read(); err != nil || ends(c) || !time.Now().Before(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// anyResponse: a stop ends once a response not yet claimed is read (Copilot
// CLI: the hook reads nothing else of the response an agentStop ends).
func anyResponse(c *cursor) bool { return c.UnclaimedResponses > 0 }

// transcriptTokens claims the output tokens and responses read reads into
// the cursor; at a stop it waits for the response the stop ends (ends),
// which the agent may write behind its hook (Qwen Code, Copilot CLI).
func transcriptTokens(ctx context.Context, ev event, c *cursor, read func(event, *cursor) error, ends func(*cursor) bool) (int64, int, error) {
	if ev.kind == kindStop {
		if err := awaitResponse(ctx, c, func() error { return read(ev, c) }, ends); err != nil {
			return 0, 0, err
		}
	} else if err := read(ev, c); err != nil {
		return 0, 0, err
	}
	total, responses := claim(c)
	return total, responses, nil
}

// responseBoundary is a step boundary only when a model response came
// since the last claim; otherwise the cursor is left as it was (another
// tool of the same response, or a repeat).
func responseBoundary(ctx context.Context, ev event, c *cursor, tokens func(context.Context, event, *cursor) (int64, int, error)) (int64, bool, error) {
	saved := *c
	n, responses, err := tokens(ctx, ev, c)
	if err != nil || responses == 0 {
		*c = saved
		return 0, false, err
	}
	return n, true, nil
}
