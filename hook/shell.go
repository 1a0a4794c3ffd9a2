package hook

import (
	"fmt"
	"slices"
)

// Events the agent's own shell makes (docs/security.md, "The agent's shell
// cannot end a goal's turn"; docs/hooks.md, "Events from the agent's
// shell"). The model can run agentd-hook from its shell tool with an event
// it wrote, and agentd cannot tell that process from the agent's own hook:
// both descend from the agent and carry its markers. What tells them apart
// is the agent's own order of events, which the cursor follows:
//
//   - A tool call is in flight from its gate (PreToolUse and its kin) to
//     the boundary that reports it ended. The model's shell is a tool call,
//     so an event that would end the goal's turn without counting it (an
//     end: SessionEnd, Interrupt, an abort; a prompt; a failure) while one
//     is in flight is held, not obeyed: the turn goes on and counts. When
//     the boundary of a tool call that ran when it came arrives (Claude
//     Code and Codex name the calls), the agent kept working through it:
//     it came from the shell, and the model is told it was refused. When
//     the agent stops with it still held (the tool was interrupted, and
//     the agent reported no end of it; or an agent whose boundaries name
//     no call), it may be the person's: the turn ends cancelled then, and
//     the goal pauses, with everything before counted.
//   - An end or failure that comes between tool calls (from a process the
//     shell left running) ends the turn as before, and the goal pauses. An
//     agent that really ended, was interrupted or failed runs no more
//     tools before the next prompt; one that does proves the event came
//     from its shell, and is stopped there: its tool refused, its boundary
//     answered with a stop.

// maxRunning bounds the tool calls the cursor keeps in flight.
const maxRunning = 64

// toolCall is how a gate's tool call is known at its end: the agent's
// tool call id where its events carry one (Claude Code, Codex), else the
// tool's name (the boundaries of those agents name no call and end all).
func toolCall(ev event) string {
	if len(ev.toolIDs) > 0 {
		return ev.toolIDs[0]
	}
	return "tool:" + ev.tool
}

// noteRunning records the gate's tool call as in flight in the open goal
// turn. A turn no goal drives records nothing: it has no budget to leave,
// and its gates keep leaving the cursor unwritten.
func (e *engine) noteRunning() {
	if e.c.Turn == "" || !e.c.GoalDriven {
		return
	}
	id := toolCall(e.ev)
	if slices.Contains(e.c.Running, id) {
		return
	}
	e.c.Running = append(e.c.Running, id)
	if n := len(e.c.Running); n > maxRunning {
		e.c.Running = slices.Clone(e.c.Running[n-maxRunning:])
	}
}

// hold holds an event that would end the open turn as an interrupt when a
// tool call of the turn is in flight: it is not obeyed, and its answer is
// not kept for a copy of it (a later real event with its identity is
// handled). It reports whether it held the event.
func (e *engine) hold() bool {
	if e.c.Turn == "" || len(e.c.Running) == 0 {
		return false
	}
	if e.c.Held == "" {
		e.c.Held, e.c.HeldTools = e.ev.name, slices.Clone(e.c.Running)
	}
	e.held = true
	e.opts.Logger.Warn("held a hook event that would end the goal's turn: it came while a tool of the agent ran, so it may come from the agent's own shell; the turn goes on and counts",
		"event", e.ev.name, "session", e.ev.session, "turn", e.c.Turn, "running", len(e.c.Running))
	return true
}

// toolsEnded takes the tool calls a boundary ends out of flight (all when
// it names none) and settles a held event: when a call it ends ran when the
// event came, the agent kept working after the event, which therefore came
// from its shell: it is refused for good, and the text returned tells the
// model so. A boundary of new calls only leaves the event held (the calls
// that ran then were interrupted), and so does one that names no call
// (Gemini CLI, Copilot CLI, Qwen Code, opencode): it cannot tell the
// interrupted call's end from the next prompt's tools, and a held event
// only ends the turn at the stop, all of it counted.
func (e *engine) toolsEnded() string {
	ids := e.ev.toolIDs
	var note string
	if e.c.Held != "" && slices.ContainsFunc(ids, func(id string) bool { return slices.Contains(e.c.HeldTools, id) }) {
		e.opts.Logger.Warn("refused a hook event from the agent's own shell: it came while a tool ran, and the agent went on working after it; the goal's turn goes on and counts",
			"event", e.c.Held, "session", e.ev.session, "turn", e.c.Turn)
		note = fmt.Sprintf("agentd: a hook event (%s) was sent from this agent's own shell while your tool ran; agentd refused it. The goal's turn goes on and counts against its budgets: do not send agentd's hook events yourself.", e.c.Held)
		e.c.Held, e.c.HeldTools = "", nil
	}
	if len(ids) == 0 {
		e.c.Running = nil
	} else {
		e.c.Running = slices.DeleteFunc(e.c.Running, func(id string) bool { return slices.Contains(ids, id) })
	}
	return note
}

// keptWorking answers a tool event that comes when no turn is open: when
// an end or failure event ended the last goal turn, a real one would have
// stopped the agent, so that it works on proves the
// event came from its shell. The agent is stopped (the tool refused
// unexecuted, or a stop at a boundary); the goal stays paused for the
// person to resume. Without such an end it changes nothing.
func (e *engine) keptWorking() outcome {
	if e.c.Interrupted == "" {
		return outcome{}
	}
	e.opts.Logger.Warn("stopped the agent: a hook event from its own shell ended the goal's turn, and the agent went on working after it",
		"event", e.c.Interrupted, "session", e.ev.session, "tool event", e.ev.name)
	if e.ev.kind == kindGate {
		return outcome{deny: fmt.Sprintf("Not run: a hook event (%s) sent from this agent's own shell ended the goal's turn, and agentd paused the goal. Call no more tools. Tell the user that you sent it and what you were doing, then stop; only the user can resume the goal.", e.c.Interrupted)}
	}
	return outcome{stop: fmt.Sprintf("agentd stopped the agent: a hook event (%s) sent from the agent's own shell ended the goal's turn while it kept working; the goal is paused, resume it to go on", e.c.Interrupted)}
}
