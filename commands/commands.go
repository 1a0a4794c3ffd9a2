package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentd/agentd/caller"
	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/jsonin"
	"github.com/agentd/agentd/service"
)

// Command is one workspace/executeCommand command: its metadata in the
// protocol's table (protocol.Commands: id, args, result, doc, scope) and
// its handler. The table Commands is the one declaration
// from which the advertised ids, the dispatcher and the command reference
// in docs/commands.md come (a test checks the docs).
type Command struct {
	protocol.Spec

	// person, when not nil, makes the command the person's: refused to an
	// agent's shell (personOnly, refuseAgentShell).
	person *personRule
	// decode decodes the ARGS object strictly into the command's argument
	// struct; run runs the command on what decode returned.
	decode func(raw json.RawMessage) (withCommon, error)
	run    func(ctx context.Context, c *call, args withCommon) (any, error)
}

// call is one command invocation, resolved.
type call struct {
	svc      *service.Service
	client   *Client
	folder   *folder // nil for commands that need no workspace
	session  string
	agent    string
	defaults Defaults
	caller   caller.Agent // who the client acts for (SetCaller)
}

// def declares command id of the protocol's table, whose ARGS decode into
// *A (strict: unknown fields are refused, docs/protocol.md §3) and whose
// handler answers an R. It panics, when the table is built, on an id the
// protocol does not declare, or an A or R that is not the id's Args or
// Result.
func def[R any, A any, PA interface {
	*A
	withCommon
}](id protocol.CommandID, run func(ctx context.Context, c *call, a PA) (R, error)) Command {
	spec, ok := protocol.Lookup(id)
	if !ok || spec.Args != reflect.TypeFor[A]() {
		panic(fmt.Sprintf("commands: %s is declared with %v; the protocol says %v", id, reflect.TypeFor[A](), spec.Args))
	}
	if spec.Result != reflect.TypeFor[R]() {
		panic(fmt.Sprintf("commands: %s answers %v; the protocol says %v", id, reflect.TypeFor[R](), spec.Result))
	}
	return Command{Spec: spec,
		decode: func(raw json.RawMessage) (withCommon, error) {
			a := PA(new(A))
			return a, jsonin.Decode(raw, a, "arguments")
		},
		run: func(ctx context.Context, c *call, args withCommon) (any, error) {
			res, err := run(ctx, c, args.(PA))
			if err != nil {
				return nil, err
			}
			return res, nil
		}}
}

// needsWorkspace says whether the command runs on a workspace folder.
func (c *Command) needsWorkspace() bool { return c.Scope != protocol.ScopeNone }

// Commands is every command agentd serves, in the order of docs/protocol.md §3.
var Commands []Command

// byID indexes Commands.
var byID map[protocol.CommandID]*Command

func init() {
	for _, group := range [][]Command{toolCommands, stateCommands, goalCommands, queueCommands, undoCommands, teamCommands, lifecycleCommands} {
		Commands = append(Commands, group...)
	}
	byID = make(map[protocol.CommandID]*Command, len(Commands))
	for i := range Commands {
		byID[Commands[i].ID] = &Commands[i]
	}
}

// IDs returns every command id, for capabilities.executeCommandProvider.
func IDs() []string {
	ids := make([]string, len(Commands))
	for i, c := range Commands {
		ids[i] = string(c.ID)
	}
	return ids
}

// Execute runs command id with the raw `arguments` of workspace/executeCommand
// on behalf of client: Prepare, then Run. Errors carry codes (ErrorCode):
// args.invalid for a bad shape, the codes of docs/runtime.md §3 for refusals.
func (cl *Client) Execute(ctx context.Context, id string, arguments json.RawMessage) (any, error) {
	p, err := cl.Prepare(id, arguments)
	if err != nil {
		return nil, err
	}
	return p.Run(ctx)
}

// Prepared is a command resolved when its request arrived, to run later
// (docs/protocol.md §2.2): its workspace folder, session,
// agent and the client's settings are those of that moment.
type Prepared struct {
	cmd     *Command
	c       *call
	args    withCommon // the ARGS decoded, when argsErr is nil
	argsErr error      // why they do not decode: answered by Run
}

// Prepare resolves command id with the raw `arguments`: it decodes them,
// takes the client's defaults as they are now and picks the workspace
// folder, without opening its store (no file I/O besides resolving
// symbolic links). Errors are those of Execute for an unknown command, bad
// common arguments (args.invalid) and the folder choice (workspace.none,
// workspace.unknown); ARGS that break the command's own rules (an unknown
// field, a missing one) are answered by Run, after those.
//
// The ARGS are decoded once, strictly, into the command's struct, whose
// common fields are then those of Common; only ARGS that do not decode so
// are decoded again leniently into Common, for the errors above.
func (cl *Client) Prepare(id string, arguments json.RawMessage) (*Prepared, error) {
	cmd, ok := byID[protocol.CommandID(id)]
	if !ok {
		known := IDs()
		sort.Strings(known)
		return nil, argsErrorf("unknown command %q; agentd serves %s", id, strings.Join(known, ", "))
	}
	raw, err := UnwrapArguments(arguments)
	if err != nil {
		return nil, err
	}
	args, argsErr := cmd.decode(raw)
	var common Common
	if argsErr == nil {
		common = *args.CommonArgs()
	} else if err := jsonin.DecodeLenient(raw, &common, "arguments"); err != nil {
		return nil, argsErrorf("%s: %v", id, err)
	}
	d := cl.Defaults()
	cl.mu.Lock()
	who := cl.caller
	cl.mu.Unlock()
	c := &call{svc: cl.svc, client: cl, session: d.Session, agent: d.Agent, defaults: d, caller: who}
	if common.Session != "" {
		if err := checkName("session", common.Session); err != nil {
			return nil, err
		}
		c.session = common.Session
	}
	if common.Agent != "" {
		if err := checkName("agent", common.Agent); err != nil {
			return nil, err
		}
		c.agent = common.Agent
	}
	if cmd.needsWorkspace() {
		if c.folder, err = cl.pick(common.Workspace); err != nil {
			return nil, err
		}
	}
	return &Prepared{cmd: cmd, c: c, args: args, argsErr: argsErr}, nil
}

// Scope is the state a prepared command reads or changes, which its
// request is ordered by (docs/protocol.md §2.2): folder is
// the workspace folder's path and session the session's name; session ""
// means every session of the folder (agentd.sessions). ordered is false for
// commands that read no state (agentd.tools, agentd.describeTool) and for
// waits (agentd.awaitChange), which run alongside the ordered requests.
func (p *Prepared) Scope() (folder, session string, ordered bool) {
	switch p.cmd.Scope {
	case protocol.ScopeNone, protocol.ScopeWait:
		return "", "", false
	case protocol.ScopeFolder:
		return p.c.folder.path, "", true
	}
	return p.c.folder.path, p.c.session, true
}

// Run runs the prepared command, opening its folder's store if needed. A
// folder the client removed since Prepare answers workspace.unknown and the
// command does not run; a ctx already done returns ctx.Err(). Errors as
// for Execute.
func (p *Prepared) Run(ctx context.Context) (any, error) {
	if p.c.folder != nil {
		if err := p.c.client.open(p.c.folder); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if p.argsErr != nil {
		return nil, argsErrorf("%s: %v", p.cmd.ID, p.argsErr)
	}
	if err := p.refuseAgentShell(); err != nil {
		return nil, err
	}
	return p.cmd.run(ctx, p.c, p.args)
}

// Reference renders the command table as Markdown (docs/commands.md).
func Reference() string {
	var b strings.Builder
	b.WriteString("| command | ARGS (besides `workspace`, `session`, `agent`) | what it does | who may run it |\n|---|---|---|---|\n")
	for _, c := range Commands {
		args := c.ArgsDoc
		if args == "" {
			args = "-"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", c.ID, args, c.Doc, c.Who())
	}
	return b.String()
}

// checkName refuses a session or agent name that is too long, holds
// control characters or is not valid UTF-8, without echoing a huge value
// back. U+FFFD is refused too: it is what JSON decoders make of invalid
// UTF-8, so two different byte strings would otherwise name one session
// (docs/runtime.md §5.2).
func checkName(field, v string) error {
	if len(v) > protocol.MaxNameBytes {
		return argsErrorf("field %q is %d bytes long; at most %d are allowed", field, len(v), protocol.MaxNameBytes)
	}
	if !utf8.ValidString(v) || strings.ContainsRune(v, utf8.RuneError) {
		return argsErrorf("field %q must be valid UTF-8 text (invalid bytes, and U+FFFD which they decode to, are refused), got %q", field, v)
	}
	for _, r := range v {
		if unicode.IsControl(r) {
			return argsErrorf("field %q must not contain control characters, got %q", field, v)
		}
	}
	return nil
}

// releaseKey is the context key of ReleaseOrder's function.
type releaseKey struct{}

// WithOrderRelease returns ctx carrying release, which lets the
// following requests on the command's state run before the command
// returns (docs/protocol.md §2.2): a command that waits a long time after
// its change is committed (a goal check, docs/runtime.md §2.10) calls it
// then. release must be safe to call more than once.
func WithOrderRelease(ctx context.Context, release func()) context.Context {
	return context.WithValue(ctx, releaseKey{}, release)
}

// releaseOrder calls the release function of ctx, if it has one.
func releaseOrder(ctx context.Context) {
	if release, ok := ctx.Value(releaseKey{}).(func()); ok {
		release()
	}
}
