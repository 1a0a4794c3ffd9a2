package hook

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentd/agentd/commands/protocol"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/lsp/daemon/client"
	"github.com/agentd/agentd/workspace/wsfolder"
)

// The mapping of events to the lifecycle (docs/hooks.md):
//
//	prompt    end an open turn as cancelled (the agent was interrupted), then
//	          turn.begin (user, or continuation after a continued stop) and
//	          step.begin: the injections are the context for the model
//	boundary  step.end (tool_calls, the step's output tokens), then step.begin
//	          of the next model call, in one agentd.step.next when the daemon
//	          serves it; a stopTurn ends the turn and stops the agent
//	stop      step.end (stop), turn.end (completed): a continuation keeps the
//	          agent going
//	failure   step.end, turn.end (failed, with the error's kind)
//	end       an open turn ends as cancelled
//
// The turns are detached (agentd.turn.begin): they outlive the hook's
// connection. Between events the cursor (one small JSON file per agent
// session, under the state dir) keeps the open turn, the transcript offset
// read so far and the answers to the last events, so an event that arrives
// twice gets the first answer again and counts nothing twice. Twice means
// the same identity (hostImpl.key: the agent's own ids and the place in its
// transcript), never equal bytes alone: a model that ends every turn with
// the same words makes byte-identical Stop events of different turns.

// cursor is the hook's state for one agent session.
type cursor struct {
	Turn     string `json:"turn,omitempty"` // the open turn this hook began
	StepOpen bool   `json:"stepOpen,omitempty"`
	Grace    bool   `json:"grace,omitempty"` // the open step is a grace step
	// Continued: the last turn end gave a continuation that the agent runs
	// as its next prompt (Gemini CLI), so that prompt begins a
	// continuation turn.
	Continued bool `json:"continued,omitempty"`
	// AwaitPrompt: a stop began the continuation turn itself (Claude Code,
	// Codex); a prompt event for it must not begin another.
	AwaitPrompt bool `json:"awaitPrompt,omitempty"`

	// Transcript reading (Claude Code, Codex): the file and the bytes read.
	Transcript string `json:"transcript,omitempty"`
	Offset     int64  `json:"offset,omitempty"`
	// Messages are the output tokens counted per assistant message id
	// (Claude Code), newest last; LastText is the text of the newest
	// message with text (Qwen Code: of the newest response), TextID that
	// message's id, and Ended the id of the message the last Stop ended
	// (its place: docs/hooks.md, "The same event twice").
	Messages []counted `json:"messages,omitempty"`
	LastText string    `json:"lastText,omitempty"`
	TextID   string    `json:"textId,omitempty"`
	Ended    string    `json:"ended,omitempty"`
	// Unclaimed are the output tokens and responses read from the
	// transcript and not yet given to a step (Claude Code: a Stop reads
	// ahead to find its place before it ends the step).
	Unclaimed          int64 `json:"unclaimed,omitempty"`
	UnclaimedResponses int   `json:"unclaimedResponses,omitempty"`
	// Total is the cumulative output tokens counted so far (Codex).
	// Records: the rollout has token_usage_record lines (Codex 0.169), so
	// its token_count events, written a tool call later, are not counted;
	// Calls are the call ids of the response whose record is not read yet.
	Total   int64    `json:"total,omitempty"`
	Records bool     `json:"records,omitempty"`
	Calls   []string `json:"calls,omitempty"`
	// Request is a digest of the open step's model request (Gemini CLI),
	// to tell a retry of it from the next call.
	Request string `json:"request,omitempty"`
	// Batches are the tool_use ids of the last tool batches (Claude Code).
	Batches []string `json:"batches,omitempty"`

	// The agents' own loop limits (limits.go, docs/hooks.md "The agents'
	// own limits"): Blocks is the continuations given in a row since the
	// user's prompt or, for most agents, the last tool batch, Called that the model was
	// called in the open turn (a tool batch, Gemini CLI's BeforeModel or
	// AfterModel), Loop that Gemini CLI's loop detection spoke since the
	// user's prompt.
	Blocks int  `json:"blocks,omitempty"`
	Called bool `json:"called,omitempty"`
	Loop   bool `json:"loop,omitempty"`

	// TeamNoted is the status and sha256 of the team file the model was
	// last told this machine does not use (teamNotice): told once per
	// content.
	TeamNoted string `json:"teamNoted,omitempty"`

	// GoalDriven: the open turn began under an active goal
	// (agentd.turn.begin's goalDriven), so a budget that blocks the goal
	// at its end is told to the user (stopReason).
	GoalDriven bool `json:"goalDriven,omitempty"`

	// Events from the agent's shell (shell.go): Running are the tool
	// calls of the open goal turn whose gate ran and whose end no
	// boundary reported yet; Held is an event that would have ended the
	// turn as an interrupt while one ran, HeldTools the calls in flight
	// then; Interrupted is the end or failure event that ended the last
	// goal turn, until the next prompt.
	Running     []string `json:"running,omitempty"`
	Held        string   `json:"held,omitempty"`
	HeldTools   []string `json:"heldTools,omitempty"`
	Interrupted string   `json:"interrupted,omitempty"`

	// Recent are the last events handled and their answers.
	Recent []answered `json:"recent,omitempty"`
}

type counted struct {
	ID     string `json:"id"`
	Tokens int64  `json:"tokens"`
}

type answered struct {
	Key     string  `json:"key"`
	Outcome outcome `json:"outcome"`
}

// Bounds of the cursor's lists.
const (
	maxRecent   = 16
	maxMessages = 64
	maxBatchIDs = 64
)

// outcome is stored in the cursor for replays.
func (o outcome) MarshalJSON() ([]byte, error) {
	return json.Marshal(outcomeJSON{o.context, o.prompt, o.stop, o.deny})
}

func (o *outcome) UnmarshalJSON(b []byte) error {
	var j outcomeJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*o = outcome{context: j.Context, prompt: j.Prompt, stop: j.Stop, deny: j.Deny}
	return nil
}

type outcomeJSON struct {
	Context string `json:"context,omitempty"`
	Prompt  string `json:"prompt,omitempty"`
	Stop    string `json:"stop,omitempty"`
	Deny    string `json:"deny,omitempty"`
}

// engine handles one event.
type engine struct {
	opts   Options
	host   hostImpl
	folder string
	ev     event
	c      cursor
	// loaded is the cursor as read, nil when there was none (or it could
	// not be read), so that it is written only when it changed.
	loaded *cursor
	sess   *client.Session
	// held: the event was held (shell.go), so its answer is not kept for
	// copies of it.
	held bool
}

// close ends the event's session: dropped, without LSP's goodbye, since
// the hook's turns are detached and outlive the connection anyway
// (client.Session.Drop).
func (e *engine) close() {
	if e.sess != nil {
		e.sess.Drop()
	}
}

// cursorPath names the cursor of the event's agent session in this folder
// and agentd session.
func (e *engine) cursorPath() string {
	sum := sha256.Sum256([]byte(e.folder + "\x00" + e.opts.Session + "\x00" + e.ev.session))
	return filepath.Join(e.opts.StateDir, "hooks", e.opts.Host+"-"+hex.EncodeToString(sum[:12])+".json")
}

func (e *engine) run(ctx context.Context, raw []byte) (outcome, error) {
	if e.ev.subagent != "" {
		// A subagent gets no reminders and no goal tools (docs/runtime.md):
		// only its goal tool calls are answered, with agentd's refusal,
		// and its own todo tool is mirrored into its own list (§1.3).
		switch {
		case e.ev.kind == kindGate:
			return e.gateSubagent(ctx)
		case e.ev.todos != nil:
			return outcome{}, e.mirrorTodos(ctx)
		}
		return outcome{}, nil
	}
	if e.ev.kind == kindGate && agentdTool(e.ev.tool) == todoListTool && namesAgent(e.ev.input) {
		return outcome{deny: mainNamesAgentRefusal}, nil
	}
	if e.ev.todos != nil {
		if err := e.mirrorTodos(ctx); err != nil || e.ev.kind == kindTodos {
			return outcome{}, err
		}
	}
	path := e.cursorPath()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return outcome{}, cursorError(path, err)
	}
	unlock, err := client.LockFile(ctx, path+".lock", e.opts.Timeout)
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) { // it cannot be created; another hook holding it is not this
		err = cursorError(path, err)
	}
	if err != nil {
		return outcome{}, err
	}
	defer unlock()
	if err := e.load(path); err != nil {
		return outcome{}, err
	}
	// A tool's gate reads the cursor and changes nothing agentd keeps, so
	// it records no answer: a copy gets the same answer by asking again,
	// and the cursor it leaves unchanged is not rewritten (nearly every
	// model call has one: docs/performance.md, "Cost inside the agent
	// (issue 26)").
	var key string
	if e.ev.kind != kindGate {
		if key, err = e.host.key(ctx, e.ev, raw, &e.c); err != nil {
			return outcome{}, err
		}
	}
	for _, a := range e.c.Recent {
		if key != "" && a.Key == key {
			return a.Outcome, nil // the same event again: the same answer
		}
	}
	o, err := e.dispatch(ctx)
	if err == nil && key != "" && !e.held {
		e.c.Recent = append(e.c.Recent, answered{key, o})
		if n := len(e.c.Recent); n > maxRecent {
			e.c.Recent = slices.Clone(e.c.Recent[n-maxRecent:])
		}
	}
	// The cursor records what agentd did, even when a later call failed.
	// It is written without an fsync (durable false): it is where the hook
	// was, not state agentd acknowledged (the daemon's commits are durable),
	// the rename keeps it whole through a crash of any process, and only a
	// crash of the machine, which ends the agent too, can lose the last
	// event's update (docs/hooks.md, "The turn a hook opened"). An fsync
	// would cost every event a disk flush for that case.
	if e.loaded != nil && reflect.DeepEqual(e.c, *e.loaded) {
		return o, err
	}
	if serr := wsfolder.WriteJSONAtomic(path, e.c, false); serr != nil && err == nil {
		err = cursorError(path, serr)
	}
	return o, err
}

// cursorError is err, from making or writing the cursor at path, saying
// that the hook keeps its cursors there: a state directory it cannot write
// (read-only, another user's, a regular file where a folder should be)
// names itself and the problem in the hook's line.
func cursorError(path string, err error) error {
	return fmt.Errorf("the hook keeps its cursor in %s, and the state directory must be writable: %w", filepath.Dir(path), err)
}

func (e *engine) load(path string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &e.c); err != nil {
		// An unreadable cursor is replaced: agentd's state is the truth,
		// the cursor only where the hook was.
		e.c = cursor{}
		return nil
	}
	e.loaded = new(cursor)
	return json.Unmarshal(b, e.loaded)
}

func (e *engine) dispatch(ctx context.Context) (outcome, error) {
	awaited := e.c.AwaitPrompt
	e.c.AwaitPrompt = false
	switch e.ev.kind {
	case kindPrompt:
		if awaited && e.c.Turn != "" {
			// The continuation the stop began, unless the agent ended it
			// unrun (limits.go): then this prompt is the user's own.
			if _, done, err := e.endUnrun(ctx); err != nil || !done {
				return outcome{}, err
			}
		}
		return e.prompt(ctx)
	case kindBoundary:
		return e.boundary(ctx)
	case kindStop:
		return e.stop(ctx)
	case kindFailure:
		if e.c.Turn == "" || e.hold() {
			return outcome{}, nil
		}
		driven := e.c.GoalDriven
		_, err := e.finishTurn(ctx, protocol.OutcomeFailed, &protocol.TurnError{Kind: e.ev.errKind, Message: e.ev.errMsg})
		if err == nil && driven {
			e.c.Interrupted = e.ev.name // a failed turn's agent stops too (shell.go)
		}
		return outcome{}, err
	case kindEnd:
		if e.c.Turn == "" || e.hold() {
			return outcome{}, nil
		}
		if awaited { // the continuation a stop began: did the agent run it?
			if o, done, err := e.endUnrun(ctx); done || err != nil {
				return o, err
			}
		}
		driven := e.c.GoalDriven
		_, err := e.finishTurn(ctx, "cancelled", nil)
		e.c.Continued = false
		if err == nil && driven {
			e.c.Interrupted = e.ev.name // the agent must stop now (shell.go)
		}
		return outcome{}, err
	case kindGate:
		if e.c.Turn == "" {
			return e.keptWorking(), nil
		}
		if e.c.Grace {
			return outcome{deny: goal.GraceStepRefusal(e.ev.tool).Output}, nil
		}
		e.noteRunning()
		return outcome{}, nil
	}
	return outcome{}, nil
}

func (e *engine) prompt(ctx context.Context) (outcome, error) {
	if e.hold() { // a tool of the open turn runs: the prompt may be its shell's
		return outcome{}, nil
	}
	e.c.Interrupted = ""
	if e.c.Turn != "" {
		// The previous turn never stopped: the user interrupted it.
		if _, err := e.finishTurn(ctx, "cancelled", nil); err != nil {
			return outcome{}, err
		}
	} else if _, _, err := e.host.tokens(ctx, e.ev, &e.c); err != nil {
		// What the agent did between turns is no step of a turn.
		return outcome{}, err
	}
	origin := protocol.OriginUser
	if e.c.Continued {
		origin = protocol.OriginContinuation
	} else {
		e.c.Blocks, e.c.Loop = 0, false
	}
	e.c.Continued = false
	injs, err := e.beginTurn(ctx, origin)
	if err != nil {
		return outcome{}, err
	}
	return outcome{context: joinInjections(e.teamNotice(ctx), injs)}, nil
}

// teamNotice is, once per agent session and content of the file, the
// line that opens the prompt's context when the folder has a team file
// this machine does not use (agentd.state's teamFile, docs/team.md): the
// model is told to ask the user, since accepting it is the person's step.
// A failure to read the state leaves the context as it is; an agentd
// older than team files that need accepting (no agentd.team.accept) is
// not asked.
func (e *engine) teamNotice(ctx context.Context) []protocol.Injection {
	if sess, err := e.session(ctx); err != nil || !sess.Serves(protocol.CmdTeamAccept) {
		return nil
	}
	var st protocol.State
	if err := e.exec(ctx, protocol.CmdState, protocol.NoArgs{}, &st); err != nil {
		e.opts.Logger.Warn("the state was not read for the team file's notice", "err", err)
		return nil
	}
	tf := st.TeamFile
	if tf == nil || tf.Status+" "+tf.SHA256 == e.c.TeamNoted {
		return nil
	}
	e.c.TeamNoted = tf.Status + " " + tf.SHA256
	text := fmt.Sprintf("agentd: this folder's team file %s (etcd %s) is not accepted on this machine, so agentd keeps the goal and todo list in this machine's own state, not the team's. Only the user may accept it: ask the user whether they trust those endpoints and, if so, to run `%s` themselves; do not run it yourself.",
		tf.Path, strings.Join(tf.Endpoints, ","), tf.Accept)
	if tf.Status != "pending" {
		text = fmt.Sprintf("agentd: this folder's team file %s cannot be used (%s), so agentd keeps the goal and todo list in this machine's own state. Tell the user.", tf.Path, tf.Error)
	}
	return []protocol.Injection{{Variant: "team_file", Text: text}}
}

func (e *engine) boundary(ctx context.Context) (outcome, error) {
	if e.c.Turn == "" {
		return e.keptWorking(), nil
	}
	note := e.toolsEnded()
	if !e.c.StepOpen {
		return outcome{}, nil
	}
	tokens, fresh, err := e.host.boundary(ctx, e.ev, &e.c)
	if err != nil || !fresh {
		return outcome{}, err // a repeated or late event: the step was ended
	}
	e.c.Called = true // a model call asked for tools
	if h, ok := e.host.(capped); !ok || !h.blocksAcrossTools() {
		e.c.Blocks = 0
	}
	sess, err := e.session(ctx)
	if err != nil {
		return outcome{}, err
	}
	var end protocol.StepEndResult
	var injs []protocol.Injection
	if sess.Serves(protocol.CmdStepNext) {
		// The end and the next begin in one commit (docs/protocol.md §3).
		var next protocol.StepNextResult
		if err := e.exec(ctx, protocol.CmdStepNext, protocol.StepNextArgs{TurnID: e.c.Turn, OutputTokens: tokens, FinishReason: protocol.FinishToolCalls}, &next); err != nil {
			return outcome{}, err
		}
		end = next.End
		e.c.StepOpen = false
		if next.Begin != nil {
			injs = next.Begin.Injections
			e.c.StepOpen = true
		}
	} else {
		// An agentd older than agentd.step.next: the two calls.
		if err := e.exec(ctx, protocol.CmdStepEnd, protocol.StepEndArgs{TurnID: e.c.Turn, OutputTokens: tokens, FinishReason: protocol.FinishToolCalls}, &end); err != nil {
			return outcome{}, err
		}
		e.c.StepOpen = false
		if !end.StopTurn {
			if injs, err = e.beginStep(ctx); err != nil {
				return outcome{}, err
			}
		}
	}
	if end.StopTurn {
		te, err := e.endTurn(ctx, protocol.OutcomeCompleted, nil)
		if err != nil {
			return outcome{}, err
		}
		return outcome{stop: stopReason(te)}, nil
	}
	e.c.Grace = end.GraceStep
	text := joinInjections(end.Injections, injs)
	if note != "" {
		text = strings.TrimPrefix(text+"\n\n"+note, "\n\n")
	}
	return outcome{context: text}, nil
}

func (e *engine) stop(ctx context.Context) (outcome, error) {
	if e.c.Turn == "" {
		return outcome{}, nil
	}
	if e.c.Held != "" {
		// The agent stopped with an interrupting event held and no end of
		// the tool that ran then seen: it was interrupted, and the event
		// may be the person's (shell.go). The turn ends as they
		// interrupted it, all of it counted.
		e.opts.Logger.Info("the agent stopped with an event held that came while its tool ran: it may be the person's interrupt, and the turn ends cancelled", "event", e.c.Held, "session", e.ev.session)
		_, err := e.finishTurn(ctx, protocol.OutcomeCancelled, nil)
		e.c.Continued = false
		return outcome{}, err
	}
	if !e.host.beginsContinuation() { // a stop event may end a turn with no model call
		if o, done, err := e.endUnrun(ctx); done || err != nil {
			return o, err
		}
	}
	driven := e.c.GoalDriven
	te, err := e.finishTurn(ctx, protocol.OutcomeCompleted, nil)
	if err != nil {
		return outcome{}, err
	}
	if te.Continuation == nil || e.ev.oneShot {
		if driven && (budgetBlocked(te) || waiting(te)) {
			return outcome{stop: stopReason(te)}, nil
		}
		return outcome{}, nil
	}
	if o, done, err := e.refuseContinuation(ctx); done || err != nil {
		return o, err
	}
	if !e.host.beginsContinuation() {
		e.c.Continued = true
		return outcome{prompt: te.Continuation.Prompt}, nil
	}
	injs, err := e.beginTurn(ctx, protocol.OriginContinuation)
	if err != nil {
		return outcome{}, err
	}
	e.c.AwaitPrompt = true
	return outcome{prompt: te.Continuation.Prompt, context: joinInjections(injs)}, nil
}

// beginTurn begins a detached turn and its first step.
func (e *engine) beginTurn(ctx context.Context, origin protocol.Origin) ([]protocol.Injection, error) {
	id, err := newTurnID(e.opts.Host)
	if err != nil {
		return nil, err
	}
	var begun protocol.TurnBeginResult
	if err := e.exec(ctx, protocol.CmdTurnBegin, protocol.TurnBeginArgs{TurnID: id, Origin: origin, Detached: true}, &begun); err != nil {
		return nil, err
	}
	e.c.Turn, e.c.StepOpen, e.c.Grace, e.c.Called, e.c.GoalDriven = id, false, false, false, begun.GoalDriven
	e.c.Interrupted = ""
	return e.beginStep(ctx)
}

func (e *engine) beginStep(ctx context.Context) ([]protocol.Injection, error) {
	var res protocol.StepBeginResult
	if err := e.exec(ctx, protocol.CmdStepBegin, protocol.StepBeginArgs{TurnID: e.c.Turn}, &res); err != nil {
		return nil, err
	}
	e.c.StepOpen = true
	return res.Injections, nil
}

// finishTurn ends the open step with the tokens the host recorded, then
// the turn.
func (e *engine) finishTurn(ctx context.Context, outcome protocol.Outcome, terr *protocol.TurnError) (protocol.TurnEndResult, error) {
	tokens, _, err := e.host.tokens(ctx, e.ev, &e.c)
	if err != nil {
		return protocol.TurnEndResult{}, err
	}
	if e.c.StepOpen {
		if err := e.exec(ctx, protocol.CmdStepEnd, protocol.StepEndArgs{TurnID: e.c.Turn, OutputTokens: tokens, FinishReason: protocol.FinishStop}, nil); err != nil {
			return protocol.TurnEndResult{}, err
		}
		e.c.StepOpen = false
	}
	return e.endTurn(ctx, outcome, terr)
}

func (e *engine) endTurn(ctx context.Context, outcome protocol.Outcome, terr *protocol.TurnError) (protocol.TurnEndResult, error) {
	var te protocol.TurnEndResult
	if err := e.exec(ctx, protocol.CmdTurnEnd, protocol.TurnEndArgs{TurnID: e.c.Turn, Outcome: outcome, Error: terr}, &te); err != nil {
		return protocol.TurnEndResult{}, err
	}
	e.c.Turn, e.c.StepOpen, e.c.Grace, e.c.GoalDriven = "", false, false, false
	e.c.Running, e.c.Held, e.c.HeldTools = nil, "", nil
	return te, nil
}

// gateSubagent answers a subagent's call of an agentd goal tool with
// agentd's refusal (asked with the subagent's id, which changes nothing).
// Its call of agentd's TodoList reaches agentd through MCP, which names no
// agent, so it would write the main agent's list (docs/runtime.md §1.3):
// where the agent lets the hook change the input (ev.input, Claude Code),
// the call goes ahead with the subagent's id added as "agent", which
// agentd mcp takes out; elsewhere it is refused.
func (e *engine) gateSubagent(ctx context.Context) (outcome, error) {
	name := agentdTool(e.ev.tool)
	switch name {
	case "":
		return outcome{}, nil
	case todoListTool:
		if input, ok := withAgent(e.ev.input, e.ev.subagent); ok {
			return outcome{input: string(input)}, nil
		}
		return outcome{deny: subagentTodoListRefusal}, nil
	}
	var res protocol.ToolResult
	if err := e.exec(ctx, protocol.CmdCallTool, protocol.CallToolArgs{Common: protocol.Common{Agent: e.ev.subagent}, Name: name, Input: json.RawMessage("{}")}, &res); err != nil {
		return outcome{}, err
	}
	if res.IsError && res.ErrorCode == goal.CodeUnsupportedAgent {
		return outcome{deny: res.Output}, nil
	}
	return outcome{}, nil
}

// withAgent is a tool input, a JSON object, with the member "agent" set to
// agent; ok is false when input is no object.
func withAgent(input json.RawMessage, agent string) (json.RawMessage, bool) {
	var members map[string]json.RawMessage
	if len(input) == 0 || json.Unmarshal(input, &members) != nil || members == nil {
		return nil, false
	}
	members["agent"], _ = json.Marshal(agent)
	b, err := json.Marshal(members)
	return b, err == nil
}

// namesAgent says whether a tool input, a JSON object, has the member
// "agent": the main agent's model that writes it in agentd's TodoList
// would have agentd mcp send the call as that subagent's (docs/runtime.md
// §1.3), so where the hook sees the input (Claude Code) it refuses it.
func namesAgent(input json.RawMessage) bool {
	var members map[string]json.RawMessage
	if json.Unmarshal(input, &members) != nil {
		return false
	}
	_, ok := members["agent"]
	return ok
}

// mainNamesAgentRefusal is what the main agent reads when its call of
// agentd's TodoList names an agent.
const mainNamesAgentRefusal = "agentd's TodoList takes no \"agent\" from the main agent: your list is the session's list. Call it again without \"agent\"."

// todoListTool is agentd's todo tool (docs/protocol.md §3, agentd.tools).
const todoListTool = "TodoList"

// subagentTodoListRefusal is what a subagent reads when the hook refuses
// its call of agentd's TodoList (docs/runtime.md §1.3).
const subagentTodoListRefusal = "agentd's TodoList keeps the main agent's list, and a subagent may not write it. Keep your own todo list with your agent's own todo tool: agentd keeps it as your list, shown under the item the main agent is working on."

// mirrorTodos writes the agent's own todo list into agentd's, as the model:
// a subagent's into its own list (docs/runtime.md §1.3).
func (e *engine) mirrorTodos(ctx context.Context) error {
	input, err := json.Marshal(map[string][]protocol.TodoItem{"todos": e.ev.todos})
	if err != nil {
		return err
	}
	var res protocol.ToolResult
	if err := e.exec(ctx, protocol.CmdCallTool, protocol.CallToolArgs{Common: protocol.Common{Agent: e.ev.subagent}, Name: todoListTool, Input: input}, &res); err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("the todo list was not mirrored: %s", res.Output)
	}
	return nil
}

// session is the event's session with agentd, opened at the first call.
func (e *engine) session(ctx context.Context) (*client.Session, error) {
	if e.sess == nil {
		s, err := dialSession(ctx, e.opts, e.folder)
		if err != nil {
			return nil, err
		}
		e.sess = s
	}
	return e.sess, nil
}

// exec runs one agentd command on the event's session.
func (e *engine) exec(ctx context.Context, cmd protocol.CommandID, args any, result any) error {
	sess, err := e.session(ctx)
	if err != nil {
		return err
	}
	raw, err := sess.Execute(ctx, cmd, args)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(raw, result); err != nil {
		return fmt.Errorf("reading the result of %s: %w", cmd, err)
	}
	return nil
}

// stopReason tells the user why agentd stopped the agent. The agent
// shows it on the person's terminal, and the goal's reason may come from
// etcd, so its control characters are written as <U+XXXX>.
func stopReason(te protocol.TurnEndResult) string {
	if te.Goal != nil && te.Goal.TerminalReason != "" {
		return "agentd stopped the agent: " + goal.VisibleText(te.Goal.TerminalReason)
	}
	return "agentd stopped the agent: the goal's budget is spent"
}

// budgetBlocked: the turn's end left the goal blocked by a budget
// (docs/runtime.md §2.4), whose reason begins "budget reached".
func budgetBlocked(te protocol.TurnEndResult) bool {
	return te.Goal != nil && te.Goal.Status == "blocked" && strings.HasPrefix(te.Goal.TerminalReason, "budget reached")
}

// waiting: the turn's end left the goal waiting (docs/runtime.md §2.13):
// the agent stops until agentd wakes the goal.
func waiting(te protocol.TurnEndResult) bool {
	return te.Goal != nil && te.Goal.Status == protocol.GoalStatus(goal.Waiting)
}

// newTurnID is a fresh turn id for host.
func newTurnID(host string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return host + "-" + hex.EncodeToString(b[:]), nil
}
