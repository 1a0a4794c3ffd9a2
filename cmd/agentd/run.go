package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentd/agentd/caller"
	"github.com/agentd/agentd/cmd/internal/cli"
	"github.com/agentd/agentd/commands"
	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/lsp"
	"github.com/agentd/agentd/service"
	"github.com/agentd/agentd/workspace"
	"github.com/agentd/agentd/workspace/taskfile"
	"github.com/agentd/agentd/workspace/wsfolder"
)

// version is set at build time with -ldflags "-X main.version=..."; else the
// module version from the build info.
var version = ""

func agentdVersion() string { return cli.Version(version) }

// toolUsage and stateUsage are what `agentd tool --help` and `agentd
// state --help` print, and what a wrong command line of theirs shows.
const (
	toolUsage  = "usage: agentd tool NAME [JSON] [--json] [--workspace DIR] [--session S]\n  calls the tool (TodoList, CreateGoal, GetGoal, SetGoalBudget, UpdateGoal) and prints its\n  output; exit 1 when the tool answers an error, its output on stderr too; the workspace folder\n  used is named on stderr\n"
	stateUsage = "usage: agentd state [--json] [--workspace DIR] [--session S]\n  prints the workspace folder, the todo list and the goal\n"
)

// stdio joins stdin and stdout into one connection. Close closes stdin when
// it can, so that a read blocked on it ends (exit, parent death).
type stdio struct {
	io.Reader
	io.Writer
}

// SyscallConn is stdout's, when it is a file: the connection's end sees the
// client read what is left (jsonrpc's Conn.Run).
func (s stdio) SyscallConn() (syscall.RawConn, error) {
	if f, ok := s.Writer.(*os.File); ok {
		return f.SyscallConn()
	}
	return nil, errors.New("stdout is not a file")
}

func (s stdio) Close() error {
	if c, ok := s.Reader.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// terminalHint writes hint to stderr when stdin is a terminal: a server for
// programs started by hand, which would otherwise wait silently.
func terminalHint(stdin io.Reader, stderr io.Writer, hint string) {
	if f, ok := stdin.(*os.File); ok && isTerminal(f) {
		fmt.Fprint(stderr, hint)
	}
}

func serveStdio(ctx context.Context, e *env, etcd cli.Etcd) int {
	terminalHint(e.stdin, e.stderr, "agentd is a language server for agents' todo lists and goals; it now waits for LSP messages on stdin.\n"+
		"Editors start it for you. From a shell, try: agentd tool TodoList, agentd state, agentd --help. Press Ctrl-D to quit.\n")
	svc := service.New(e.storeOptions(etcd), service.Daemon)
	defer svc.Close()
	srv := lsp.NewServer(svc, agentdVersion(), e.log)
	defer srv.Close()
	in, restore := pollableStdin(e.stdin)
	defer restore()
	// The peer is the process that started this one: who this process
	// acts for is who it does.
	return srv.ServeConn(ctx, stdio{in, e.stdout}, lsp.ConnOptions{WatchParent: true, Caller: caller.Self()})
}

// oneShot runs one command on the workspace folder abs (workspaceFolder),
// for the shell commands. It is the one place that decides where: through
// the shared daemon when one serves this state (viaDaemon), else on the
// state opened directly. Either way the result is decoded the same
// (resultOf), and a refusal is an error that carries its code
// (protocol.ErrorCode).
func oneShot(ctx context.Context, e *env, t target, abs string, id protocol.CommandID, args protocol.Args) (any, error) {
	if _, explicit, err := cli.RemoteSocket(t.remote); err == nil && !explicit && id == protocol.CmdState {
		// No state file: nothing holds state for the folder, not even a
		// daemon (which creates the file when it opens a folder). Answer
		// the empty state without creating one.
		if st, ok, err := commands.FreshState(e.stateDir, abs, t.session); err != nil || ok {
			return st, err
		}
	}
	// The state opened here is kept for a copy sent again, so that both
	// copies are one process's: a check's run the first marked is its own.
	var local *commands.Client
	closeLocal := func() {}
	defer func() { closeLocal() }()
	raw, err := sendOnce(e.stderr, args, func() (json.RawMessage, error) {
		raw, err := viaDaemon(ctx, e, t, abs, id, args)
		if !errors.Is(err, errDirect) {
			return raw, err
		}
		if local == nil {
			cl, closeCl, err := openDirect(e, t, abs)
			if err != nil {
				return nil, err
			}
			local, closeLocal = cl, closeCl
		}
		return direct(ctx, local, t, id, args)
	})
	if err != nil {
		return nil, err
	}
	return resultOf(id, raw)
}

// sendOnce sends args with send, having given them an id of this run when
// they carry one (requestIDOf) and the caller gave none. When the answer
// is workspace.outcome_unknown it says so on stderr and sends the same
// args, same id, once more, and returns what that answers: the workspace
// applies an identified request at most once (docs/team.md, "What a write
// acknowledges"). Args without an id are sent once.
func sendOnce(stderr io.Writer, args protocol.Args, send func() (json.RawMessage, error)) (json.RawMessage, error) {
	req := requestIDOf(args)
	if req != nil && *req == "" {
		*req = rand.Text()
	}
	raw, err := send()
	if req != nil && protocol.ErrorCode(err) == workspace.CodeOutcomeUnknown {
		fmt.Fprintf(stderr, "agentd: %v\nagentd: sending the same request once more, with the same id %s, which the workspace applies at most once\n", err, *req)
		raw, err = send()
	}
	return raw, err
}

// requestIDOf is the field of args that identifies the request, so that
// it applies at most once however often it is sent (docs/team.md, "What a
// write acknowledges"): a requestId, or the id of the queued goal an add
// makes; nil for a command that takes none, which is never sent again.
func requestIDOf(args protocol.Args) *string {
	switch a := args.(type) {
	case *protocol.GoalCreateArgs:
		return &a.RequestID
	case *protocol.GoalRunCheckArgs:
		return &a.RequestID
	case *protocol.UndoArgs:
		return &a.RequestID
	case *protocol.QueueAddArgs:
		return &a.ID
	}
	return nil
}

// oneShotHere runs command id with args (oneShot) on the workspace folder of
// the command line (workspaceFolder), which it names on stderr (noteFolder)
// after withFolder, when not nil, has completed args with that folder. Any
// failure is printed on stderr as "agentd NAME: ERROR" and ok is false: the
// caller exits 1.
func oneShotHere(ctx context.Context, e *env, t target, name string, id protocol.CommandID, args protocol.Args, withFolder func(folder string) error) (res any, ok bool) {
	folder, err := workspaceFolder(e, t)
	if err == nil && withFolder != nil {
		err = withFolder(folder)
	}
	if err == nil {
		noteFolder(e.stderr, folder)
		res, err = oneShot(ctx, e, t, folder, id, args)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "agentd %s: %v\n", name, err)
		return nil, false
	}
	return res, true
}

// workspaceFolder is the folder a command works on: --workspace when given,
// else the one wsfolder.FindFolder finds from the current folder (the rule
// of docs/protocol.md §1.3).
func workspaceFolder(e *env, t target) (string, error) {
	return cli.WorkspaceFolder(t.workspace, e.stateDir)
}

// noteFolder tells, on stderr, which workspace folder a shell command that
// writes, or `agentd goal status`, used (docs/protocol.md
// §1.3); their stdout stays the command's output.
func noteFolder(stderr io.Writer, folder string) {
	fmt.Fprintf(stderr, "agentd: workspace %s\n", folder)
}

// openDirect opens the state of folder abs in this process, for whom this
// process acts (caller.Self: a person, or an agent's shell); closeState closes
// it.
func openDirect(e *env, t target, abs string) (cl *commands.Client, closeState func(), err error) {
	svc := service.New(e.storeOptions(t.etcd), service.OneShot)
	cl = commands.NewClient(svc, commands.Defaults{})
	closeState = func() {
		cl.Close()
		svc.Close()
	}
	cl.SetCaller(caller.Self()) // as the shared daemon does with its peer
	if err := cl.AddFolder(abs); err != nil {
		closeState()
		return nil, nil, err
	}
	return cl, closeState, nil
}

// direct runs one command on the state cl opened (openDirect).
func direct(ctx context.Context, cl *commands.Client, t target, id protocol.CommandID, args protocol.Args) (json.RawMessage, error) {
	if t.session != "" {
		args.CommonArgs().Session = t.session // Execute checks it as it checks every command's session
	}
	arguments, err := json.Marshal([]any{args})
	if err != nil {
		return nil, err
	}
	res, err := cl.Execute(ctx, string(id), arguments)
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

// tool is `agentd tool NAME [JSON]`: a tool's call from a shell.
type tool struct{ shell }

func (*tool) Name() string          { return "tool" }
func (*tool) Usage([]string) string { return toolUsage }
func (*tool) ShortHelp() string {
	return `  agentd tool NAME [JSON]               call a tool (TodoList, CreateGoal, GetGoal,
                                        SetGoalBudget, UpdateGoal) and print its output;
                                        exit 1 when the tool answers an error
`
}

func (c *tool) Run(ctx context.Context, e *env, pos []string) int {
	if len(pos) < 1 || len(pos) > 2 {
		fmt.Fprint(e.stderr, toolUsage)
		return 2
	}
	input := json.RawMessage("{}")
	if len(pos) == 2 {
		input = json.RawMessage(pos[1])
		if !json.Valid(input) {
			fmt.Fprintf(e.stderr, "agentd tool: the input is not valid JSON: %s\n", pos[1])
			return 2
		}
	}
	res, ok := oneShotHere(ctx, e, c.target, "tool", protocol.CmdCallTool, &protocol.CallToolArgs{Name: pos[0], Input: input}, nil)
	if !ok {
		return 1
	}
	tr := res.(protocol.ToolResult)
	if c.jsonOut {
		printJSON(e.stdout, tr)
	} else {
		fmt.Fprintln(e.stdout, tr.Output)
	}
	if tr.IsError {
		// stdout stays the tool's output, as the model reads it; a person
		// at a shell reads why on stderr, beside the folder used.
		fmt.Fprintf(e.stderr, "agentd tool: %s answered an error: %s\n", pos[0], strings.TrimSpace(tr.Output))
		return 1
	}
	return 0
}

// state is `agentd state`: the folder's todo list and goal.
type state struct{ shell }

func (*state) Name() string          { return "state" }
func (*state) Usage([]string) string { return stateUsage }
func (*state) ShortHelp() string {
	return "  agentd state [--json]                 print the todo list and goal\n"
}

func (c *state) Run(ctx context.Context, e *env, pos []string) int {
	if len(pos) > 0 {
		fmt.Fprint(e.stderr, stateUsage)
		return 2
	}
	folder, err := workspaceFolder(e, c.target)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentd state: %v\n", err)
		return 1
	}
	res, err := oneShot(ctx, e, c.target, folder, protocol.CmdState, &protocol.NoArgs{})
	if err != nil {
		fmt.Fprintf(e.stderr, "agentd state: %v\n", err)
		return 1
	}
	st := res.(protocol.State)
	taskFileNow(&st)
	if c.jsonOut {
		printJSON(e.stdout, st)
		return 0
	}
	fmt.Fprint(e.stdout, formatState(st))
	return 0
}

// taskFileNow replaces what the goal's snapshot says of its task file
// (exists, size, sha256, modifiedAt, checkboxes) with what is there now: no watcher
// keeps the snapshot fresh while no daemon runs, and a shell command
// reports the file as it is. A file that cannot be read reads as missing.
func taskFileNow(st *protocol.State) {
	if st.Goal == nil || st.Goal.TaskFile == nil {
		return
	}
	root, err := wsfolder.PathFromURI(st.Workspace)
	if err != nil {
		return
	}
	tf := st.Goal.TaskFile
	now, _ := taskfile.Read(root, tf.Path)
	tf.Exists, tf.Size, tf.SHA256, tf.ModifiedAt, tf.Checkboxes = now.Exists, now.Size, now.SHA256, now.ModifiedAt, (*protocol.Checkboxes)(now.Checkboxes)
}

// teamFileLine is the notice n of an unused team file in one line
// (workspace.TeamFileNotice.Line).
func teamFileLine(n *protocol.TeamFileNotice) string {
	return (*workspace.TeamFileNotice)(n).Line()
}

func printJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// formatState is the human view of `agentd state`.
func formatState(st protocol.State) string {
	var b strings.Builder
	path, err := wsfolder.PathFromURI(st.Workspace)
	if err != nil {
		path = st.Workspace
	}
	fmt.Fprintf(&b, "Workspace %s, session %q, revision %d\n", path, st.Session, st.Revision)
	if st.Stale {
		b.WriteString(staleNote)
	}
	if st.TeamFile != nil {
		b.WriteString(teamFileLine(st.TeamFile) + "\n")
	}
	b.WriteString("\n")
	b.WriteString(formatTodos(st.Todos, false))
	b.WriteString("\n")
	b.WriteString(formatGoal(st))
	if len(st.Queue.Items) > 0 {
		b.WriteString("\n")
		b.WriteString(formatQueue(st.Queue))
	}
	return b.String()
}

// formatTodos is the todo list of the human view, each subagent's list
// indented under the item it is linked to; lists linked to no item of the
// list follow it (docs/runtime.md §1.3). numbered numbers the items from 1,
// as agentd todo names them.
func formatTodos(t protocol.TodosState, numbered bool) string {
	var b strings.Builder
	shown := make([]bool, len(t.SubagentLists))
	sublists := func(title, indent string) {
		for i, l := range t.SubagentLists {
			if shown[i] || (title != "" && l.ParentItem != title) {
				continue
			}
			shown[i] = true
			fmt.Fprintf(&b, "%ssubagent %s:\n", indent, l.Agent)
			if len(l.Items) == 0 {
				fmt.Fprintf(&b, "%s  (empty)\n", indent)
			}
			for _, it := range l.Items {
				fmt.Fprintf(&b, "%s  [%s] %s\n", indent, it.Status, it.Title)
			}
		}
	}
	if len(t.Items) == 0 {
		b.WriteString("Todo list is empty.\n")
	} else {
		b.WriteString("Todo list:\n")
		for i, it := range t.Items {
			num := ""
			if numbered {
				num = strconv.Itoa(i+1) + ". "
			}
			fmt.Fprintf(&b, "  %s[%s] %s\n", num, it.Status, it.Title)
			sublists(it.Title, "    ")
		}
	}
	if slices.Contains(shown, false) {
		b.WriteString("Subagent lists under no item:\n")
		sublists("", "  ")
	}
	return b.String()
}

// staleNote is what the human views say of a State with Stale set: the
// folder's etcd does not answer (docs/team.md, "Faults").
const staleNote = "Stale: etcd does not answer; this is the last state this machine saw, and changes fail until it is back (docs/team.md)\n"

// formatPlan is the human view of the progress of st's goal from its
// plan (docs/runtime.md §2.12): "  Progress: 2/5 todo items done, 3/7
// checked in TASKS.md", then the open items, or that the goal does not
// require them.
func formatPlan(st protocol.State) string {
	g, p := st.Goal, st.Goal.Progress
	var parts []string
	if p != nil && p.Todos != nil {
		noun := "items"
		if p.Todos.Total == 1 {
			noun = "item"
		}
		parts = append(parts, fmt.Sprintf("%d/%d todo %s done", p.Todos.Done, p.Todos.Total, noun))
	}
	if p != nil && p.Checkboxes != nil && g.TaskFile != nil {
		parts = append(parts, fmt.Sprintf("%d/%d checked in %s", p.Checkboxes.Checked, p.Checkboxes.Total, g.TaskFile.Path))
	}
	var b strings.Builder
	if len(parts) > 0 {
		fmt.Fprintf(&b, "  Progress: %s\n", strings.Join(parts, ", "))
	}
	if p != nil && p.Todos != nil && len(p.Todos.Open) > 0 {
		open := make([]string, len(p.Todos.Open))
		for i, t := range p.Todos.Open {
			open[i] = strconv.Quote(t)
		}
		fmt.Fprintf(&b, "  Open items: %s", strings.Join(open, ", "))
		if more := p.Todos.Total - p.Todos.Done - len(open); more > 0 {
			fmt.Fprintf(&b, " and %d more", more)
		}
		b.WriteString("\n")
	}
	switch {
	case !g.RequireTodos:
		b.WriteString("  Completion does not wait for the todo items\n")
	case p != nil && p.Todos != nil:
		b.WriteString("  Completion waits for every todo item to be done\n")
	}
	return b.String()
}

// formatGoal is the human view of a session's goal.
func formatGoal(st protocol.State) string {
	g := st.Goal
	if g == nil {
		return "No goal.\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Goal (%s): %s\n", g.Status, g.Objective)
	if g.CompletionCriterion != "" {
		fmt.Fprintf(&b, "  Done when: %s\n", g.CompletionCriterion)
	}
	if g.TerminalReason != "" {
		fmt.Fprintf(&b, "  Reason: %s\n", g.TerminalReason)
	}
	b.WriteString(formatWait(g.Wait))
	fmt.Fprintf(&b, "  Used: %s\n", commands.FormatProgress(g))
	b.WriteString(formatPlan(st))
	if g.TaskFile != nil {
		state := "present"
		if !g.TaskFile.Exists {
			state = "missing"
		}
		fmt.Fprintf(&b, "  Task file: %s (%s)", g.TaskFile.Path, state)
		if c := g.TaskFile.Checkboxes; c != nil && g.TaskFile.Exists {
			fmt.Fprintf(&b, ", %d/%d checked", c.Checked, c.Total)
		}
		b.WriteString("\n")
	}
	if g.Stalled {
		b.WriteString("  Stalled: the last goal turns changed neither the todo list nor the task file\n")
	}
	if c := g.Check; c != nil {
		fmt.Fprintf(&b, "  Check: %s\n", commands.VisibleText(c.Command))
		switch {
		case c.Running:
			b.WriteString("    running now\n")
		case c.LastRun != nil:
			fmt.Fprintf(&b, "    last run: %s at %s\n", commands.CheckRunSummary(*c.LastRun, c.Command), c.LastRun.At.Local().Format(time.DateTime))
		}
		b.WriteString(commands.FormatCheckConsent(c))
	}
	return b.String()
}
