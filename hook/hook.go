// Package hook is `agentd hook claude|gemini|codex|copilot|qwen|opencode` (docs/hooks.md): a
// short-lived command that a coding agent runs on its loop's events. It reads
// one event as JSON on stdin, turns it into agentd's turn and step lifecycle
// (agentd.turn.begin, agentd.step.begin, agentd.step.end or
// agentd.step.next at a boundary, agentd.turn.end, docs/protocol.md §3) and mirrors the agent's own todo tool into agentd's list,
// then prints exactly the JSON that agent expects for that event: the
// injections as context for the model, a continuation as the prompt that
// keeps the agent going, a stop when a budget is spent.
//
// It is an adapter beside package lsp, never below it: every call is an
// agentd command sent through an LSP session (client.OpenSession) on a
// connection Options.Dial opens, to the shared daemon, as the forwarder and
// `agentd mcp` do. The rules, texts and counts are the daemon's; only the
// per-agent JSON shapes (claude.go, gemini.go, codex.go, copilot.go,
// qwen.go, opencode.go) and the mapping of
// events to lifecycle calls are made here. It imports lsp/daemon/client,
// goal (the grace step's refusal, goal.GraceStepRefusal, and the subagent's
// code) and workspace/wsfolder, and nothing that links the store:
// agentd-hook runs it once per agent event (docs/hooks.md, "The program").
//
// It never breaks the agent: bad input, an unreachable daemon or a run over
// Options.Timeout print nothing and exit 0; the reason goes to the log.
package hook

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentd/agentd/commands/protocol"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/agentd/agentd/lsp/daemon/client"
	"github.com/agentd/agentd/workspace/wsfolder"
)

// DefaultTimeout is how long one event may take, from reading stdin to
// printing the answer. A hook that runs out of it prints nothing. A stop of
// an agent that writes its transcript late may take longer (lateStop).
const DefaultTimeout = 2 * time.Second

// maxInput bounds the event read from stdin (a PostToolUse event carries the
// tool's whole input and output).
const maxInput = 16 << 20

// Hosts are the agents `agentd hook` speaks for, in the order docs/hooks.md
// lists them.
var Hosts = []string{"claude", "gemini", "codex", "copilot", "qwen", "opencode"}

// Options configure Run.
type Options struct {
	Host string // one of Hosts
	// Folder is the workspace folder (--workspace); "" means the one
	// wsfolder.FindFolder finds from the event's cwd.
	Folder   string
	Session  string // the agentd session; "" is "default"
	StateDir string // agentd's state dir: cursors live under StateDir/hooks
	// Dial opens a connection to an agentd LSP server (the shared daemon,
	// started when none runs).
	Dial    func(ctx context.Context) (io.ReadWriteCloser, error)
	Timeout time.Duration // 0 is DefaultTimeout
	Logger  *slog.Logger  // nil discards logs; never stdout
}

// Run handles one event: it reads stdin to its end, answers on out, and
// returns. It never fails: whatever goes wrong is logged, and out then gets
// nothing, which every agent reads as "go on as if no hook ran".
func Run(ctx context.Context, opts Options, in io.Reader, out io.Writer) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Session == "" {
		opts.Session = wsfolder.DefaultSession
	}
	log := opts.Logger.With("host", opts.Host)
	// The event's time is known once it is read: handle narrows ctx to
	// opts.Timeout from start for any event but a late stop's.
	start, limit := time.Now(), opts.Timeout
	if h, err := hostNamed(opts.Host); err == nil {
		if l, ok := h.(lateStop); ok {
			limit = max(limit, l.stopTime())
		}
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	type result struct {
		b   []byte
		err error
	}
	answer := make(chan result, 1)
	go func() {
		b, err := handle(ctx, start, opts, in)
		answer <- result{b, err}
	}()
	select {
	case r := <-answer:
		switch {
		case r.err == nil:
			if len(r.b) > 0 {
				out.Write(append(r.b, '\n'))
			}
		case ctx.Err() != nil, errors.Is(r.err, context.DeadlineExceeded): // the bound passed (handle narrows it to the event's own)
			log.Warn("hook event not handled in time; the agent goes on without agentd", "timeout", limit, "err", r.err)
		default:
			log.Warn("hook event not handled; the agent goes on without agentd", "err", r.err)
		}
	case <-ctx.Done():
		log.Warn("hook event not handled in time; the agent goes on without agentd", "timeout", limit)
	}
}

// event is one agent event, host-neutral.
type event struct {
	name    string // the host's event name, e.g. "UserPromptSubmit"
	kind    kind
	session string // the agent's session id
	// id is the agent's own identifier of the event where its input
	// carries one: Claude Code's prompt_id or tool_use_id, Gemini CLI's
	// timestamp, Codex's turn_id and tool_use_id (docs/hooks.md, "The same
	// event twice").
	id         string
	cwd        string
	transcript string // the transcript's path (Claude Code, Gemini CLI, Codex)
	subagent   string // the subagent's id when a subagent fired it
	// prompt and boundary
	messages json.RawMessage // Gemini CLI BeforeModel: llm_request.messages
	toolIDs  []string        // Claude Code PostToolBatch: the batch's tool_use ids; Codex: the tool event's
	// stop
	lastMessage string // Claude Code Stop: last_assistant_message
	// oneShot: the agent ends at this stop and cannot run a continuation
	// (`opencode run`)
	oneShot bool
	// responses are the agent's model responses so far, each with its
	// output tokens (opencode)
	responses []counted
	// failure
	errKind, errMsg string
	// todos and gate
	tool  string // the tool's name
	todos []protocol.TodoItem
	input json.RawMessage // gate: the tool's input, where the agent may change it (Claude Code)
}

// kind is what an event means to agentd.
type kind int

const (
	kindIgnore   kind = iota // nothing to do
	kindPrompt               // a prompt: begins a turn and its first step
	kindBoundary             // between two model calls: ends a step, begins the next
	kindStop                 // the agent stops: ends the step and the turn
	kindFailure              // the turn failed (errKind, errMsg)
	kindEnd                  // the agent's session ends
	kindTodos                // the agent's own todo tool ran: mirror its list
	kindGate                 // a tool is about to run: refuse it in a grace step or for a subagent
)

// outcome is what agentd answered, for the host to render.
type outcome struct {
	context string // injections for the model, before its next call
	prompt  string // a continuation: keep the agent going with this prompt
	stop    string // stop the agent, with this reason for the user
	deny    string // refuse the tool about to run, with this reason for the model
	// input lets the tool about to run go ahead with this input instead,
	// a JSON object (Claude Code's updatedInput); never recorded in the
	// cursor, as a gate's answer is not.
	input string
}

// lateStop is a host that writes the response a stop ends to its
// transcript well behind the stop's hook, and gives its hooks the time to
// wait for it: its stop may take stopTime, longer than Options.Timeout
// (Qwen Code, docs/hooks.md "The turn a hook opened").
type lateStop interface{ stopTime() time.Duration }

// hostImpl is one agent's JSON shapes and records.
type hostImpl interface {
	// parse reads one event; an error names what is wrong with the input.
	parse(raw []byte) (event, error)
	// render is the stdout for ev given the outcome; nil prints nothing.
	render(ev event, o outcome) ([]byte, error)
	// tokens reads the output tokens of the model responses the agent has
	// recorded since the cursor's position, and how many responses that
	// is, and moves the cursor past them.
	tokens(ctx context.Context, ev event, c *cursor) (int64, int, error)
	// boundary is tokens for a boundary event; fresh is false when the
	// event is one already handled or a late one (the step it ends has
	// ended), and then the cursor is unchanged.
	boundary(ctx context.Context, ev event, c *cursor) (tokens int64, fresh bool, err error)
	// key is the event's identity, from the agent's own identifiers and
	// its place in the transcript, never from its bytes alone: the same
	// key is the same event delivered again, which gets the first answer.
	// "" is an event handled every time (handling it twice changes
	// nothing). Reading the transcript ahead to find the place leaves its
	// tokens unclaimed in the cursor for tokens.
	key(ctx context.Context, ev event, raw []byte, c *cursor) (string, error)
	// beginsContinuation: the agent runs a continuation with no prompt
	// event of its own, so the stop that returns it begins its turn and
	// the injections go with the prompt (Claude Code, Codex).
	beginsContinuation() bool
}

func hostNamed(name string) (hostImpl, error) {
	switch name {
	case "claude":
		return claude{}, nil
	case "gemini":
		return gemini{}, nil
	case "codex":
		return codex{}, nil
	case "copilot":
		return copilot{}, nil
	case "qwen":
		return qwen{}, nil
	case "opencode":
		return opencode{}, nil
	}
	return nil, fmt.Errorf("unknown agent %q; use %s", name, strings.Join(Hosts, ", "))
}

// handle reads and answers one event begun at start: within opts.Timeout
// of start, or within ctx's own deadline for a late stop (lateStop).
func handle(ctx context.Context, start time.Time, opts Options, in io.Reader) ([]byte, error) {
	h, err := hostNamed(opts.Host)
	if err != nil {
		return nil, err
	}
	evCtx, cancel := context.WithDeadline(ctx, start.Add(opts.Timeout))
	defer cancel()
	raw, err := readAll(evCtx, in)
	if err != nil {
		return nil, err
	}
	if opts.Host == "claude" && copilotRunsClaude(raw) {
		opts.Logger.Info("a Claude Code hook run by Copilot CLI is left to agentd hook copilot; run agentd setup copilot if it is not set up")
		return nil, nil
	}
	ev, err := h.parse(raw)
	if err != nil {
		return nil, fmt.Errorf("bad %s hook input: %w", opts.Host, err)
	}
	if ev.kind == kindIgnore {
		return nil, nil
	}
	if _, late := h.(lateStop); late && ev.kind == kindStop {
		evCtx = ctx
	}
	if ev.session == "" {
		return nil, fmt.Errorf("bad %s hook input: no session_id", opts.Host)
	}
	folder := opts.Folder
	if folder == "" {
		cwd := ev.cwd
		if cwd == "" {
			cwd = "."
		}
		if folder, err = wsfolder.FindFolder(opts.StateDir, cwd); err != nil {
			return nil, err
		}
	}
	e := &engine{opts: opts, host: h, folder: folder, ev: ev}
	defer e.close()
	o, err := e.run(evCtx, raw)
	if err != nil {
		return nil, err
	}
	return h.render(ev, o)
}

// readAll reads in to its end, at most maxInput bytes, or fails when ctx
// ends first.
func readAll(ctx context.Context, in io.Reader) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(in, maxInput+1))
		done <- result{b, err}
	}()
	select {
	case r := <-done:
		switch {
		case r.err != nil:
			return nil, fmt.Errorf("reading the event: %w", r.err)
		case len(r.b) > maxInput:
			return nil, fmt.Errorf("the event is over %d bytes", maxInput)
		case len(bytes.TrimSpace(r.b)) == 0:
			return nil, errors.New("bad hook input: stdin is empty")
		}
		return r.b, nil
	case <-ctx.Done():
		return nil, errors.New("stdin did not end in time")
	}
}

// decodeEvent decodes raw into v: a JSON object, with any keys.
func decodeEvent(raw []byte, v any) error {
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return errors.New("not a JSON object")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return err
	}
	return nil
}

// agentdTool is the agentd tool name of an MCP tool name as an agent
// shows it (mcp__agentd__CreateGoal, mcp_agentd_CreateGoal), or "".
func agentdTool(name string) string {
	for _, prefix := range []string{"mcp__agentd__", "mcp_agentd_"} {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			return rest
		}
	}
	return ""
}

// joinInjections is the text of injections, in order, one blank line apart.
func joinInjections(injs ...[]protocol.Injection) string {
	var parts []string
	for _, list := range injs {
		for _, inj := range list {
			parts = append(parts, inj.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}

// marshal is compact JSON without HTML escaping (the agents read < and >
// in the reminders as they are).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// dialSession opens an LSP session on the folder.
func dialSession(ctx context.Context, opts Options, folder string) (*client.Session, error) {
	if opts.Dial == nil {
		return nil, errors.New("no way to reach agentd")
	}
	conn, err := opts.Dial(ctx)
	if err != nil {
		return nil, err
	}
	return client.OpenSession(ctx, conn, client.SessionOptions{Folder: folder, Session: opts.Session, ClientName: "agentd-hook"})
}

func errMissing(field string) error { return fmt.Errorf("field %s is missing", field) }

// eventKey joins an event's identifiers into its key.
func eventKey(parts ...string) string { return strings.Join(parts, "\x00") }

// digest is a short hash of b, for a key.
func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}
