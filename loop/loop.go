// Package loop is the one host loop of agentd: it plays an agent host's
// side of the lifecycle commands of docs/protocol.md §3 (agentd.turn.begin,
// agentd.step.begin, tool calls through agentd.callTool, agentd.step.end,
// or agentd.step.next at a step boundary, agentd.turn.end) and follows the continuations agentd answers
// (docs/runtime.md §2.5), against an Executor.
//
// `agentd simulate` runs it in-process on a commands.Client; the
// end-to-end tests, the reliability suite and tests/bench run it over LSP
// through tests/lsptest. Host gives one call per command, for tests that
// check every answer; Play runs a whole Script.
//
// loop imports only commands, for the result types of the commands it
// sends; it must not import the server, the daemon or the store.
package loop

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentd/agentd/commands/protocol"
)

// Executor runs one agentd command: command is its id as the wire has it
// (the test client, tests/lsptest, speaks only the wire), args its one
// ARGS object (nil: no arguments), and the answer is the command's result
// as JSON. A refusal (a JSON-RPC error) is an error.
type Executor interface {
	Execute(ctx context.Context, command string, args any) (json.RawMessage, error)
}

// Host is an agent host's loop state: the session it works in and how many
// turns it began, which numbers its turn ids.
type Host struct {
	Executor Executor
	// Session, when not "", is sent as "session" with every command; else
	// the connection's default session is used (docs/commands.md).
	Session string
	// TurnPrefix starts every turn id: the n-th turn begun is
	// TurnPrefix+"turn-n" (n from 1). Give each run its own prefix when
	// the same state is played again, since an ended turn's id cannot be
	// begun again.
	TurnPrefix string
	turns      int
}

// Exec runs command with args (nil: none; Session set in them when set)
// and decodes the result into out (may be nil).
func (h *Host) Exec(ctx context.Context, command protocol.CommandID, args protocol.Args, out any) error {
	if h.Session != "" {
		if args == nil {
			args = &protocol.NoArgs{}
		}
		args.CommonArgs().Session = h.Session
	}
	raw, err := h.Executor.Execute(ctx, string(command), args)
	if err != nil {
		return fmt.Errorf("%s: %w", command, err)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s: decoding the result %s: %w", command, raw, err)
	}
	return nil
}

// BeginTurn begins the host's next turn with origin and returns its id
// and agentd's answer.
func (h *Host) BeginTurn(ctx context.Context, origin protocol.Origin) (string, protocol.TurnBeginResult, error) {
	h.turns++
	id := fmt.Sprintf("%sturn-%d", h.TurnPrefix, h.turns)
	var res protocol.TurnBeginResult
	err := h.Exec(ctx, protocol.CmdTurnBegin, &protocol.TurnBeginArgs{TurnID: id, Origin: origin}, &res)
	return id, res, err
}

// BeginStep begins a step of turn; the answer holds the injections to put
// before the model call, in order (docs/runtime.md §1.1, §2.4).
func (h *Host) BeginStep(ctx context.Context, turn string) (protocol.StepBeginResult, error) {
	var res protocol.StepBeginResult
	err := h.Exec(ctx, protocol.CmdStepBegin, &protocol.StepBeginArgs{TurnID: turn}, &res)
	return res, err
}

// CallTool runs one of agentd's tools (TodoList, the goal tools) as the
// model called it in a step of turn ("": outside any turn), with input
// encoded as JSON.
func (h *Host) CallTool(ctx context.Context, turn, name string, input any) (protocol.ToolResult, error) {
	raw, err := json.Marshal(input)
	if err != nil {
		return protocol.ToolResult{}, fmt.Errorf("the input of %s: %w", name, err)
	}
	var res protocol.ToolResult
	err = h.Exec(ctx, protocol.CmdCallTool, &protocol.CallToolArgs{Name: name, Input: raw, TurnID: turn}, &res)
	return res, err
}

// EndStep ends the current step of turn with the model's output tokens and
// finish reason.
func (h *Host) EndStep(ctx context.Context, turn string, outputTokens int64, finishReason protocol.FinishReason) (protocol.StepEndResult, error) {
	var res protocol.StepEndResult
	err := h.Exec(ctx, protocol.CmdStepEnd, &protocol.StepEndArgs{TurnID: turn, OutputTokens: outputTokens, FinishReason: finishReason}, &res)
	return res, err
}

// NextStep ends the current step of turn, which ended with tool calls,
// with the model's output tokens and, unless agentd answers stopTurn,
// begins the next step, in one commit (agentd.step.next, docs/protocol.md
// §3): the answer is what EndStep and then BeginStep would have answered,
// Begin nil after a stopTurn.
func (h *Host) NextStep(ctx context.Context, turn string, outputTokens int64) (protocol.StepNextResult, error) {
	var res protocol.StepNextResult
	err := h.Exec(ctx, protocol.CmdStepNext, &protocol.StepNextArgs{TurnID: turn, OutputTokens: outputTokens, FinishReason: protocol.FinishToolCalls}, &res)
	return res, err
}

// Failure is why a turn ended "failed": an error kind ("rate_limit") and
// its message.
type Failure = protocol.TurnError

// EndTurn ends turn with outcome and, for a failed turn, its failure (may
// be nil). A non-nil Continuation in the answer is the next user message,
// to be sent with a turn of origin "continuation".
func (h *Host) EndTurn(ctx context.Context, turn string, outcome protocol.Outcome, failure *Failure) (protocol.TurnEndResult, error) {
	var res protocol.TurnEndResult
	err := h.Exec(ctx, protocol.CmdTurnEnd, &protocol.TurnEndArgs{TurnID: turn, Outcome: outcome, Error: failure}, &res)
	return res, err
}
