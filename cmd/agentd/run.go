package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentd/agentd/caller"
	"github.com/agentd/agentd/cmd/internal/cli"
	"github.com/agentd/agentd/commands"
	"github.com/agentd/agentd/lsp"
	"github.com/agentd/agentd/lsp/daemon/client"
	"github.com/agentd/agentd/service"
	"github.com/agentd/agentd/workspace"
	"github.com/agentd/agentd/workspace/wsfolder"
)

// version is set at build time with -ldflags "-X main.version=..."; else the
// module version from the build info.
var version = ""

func agentdVersion() string { return cli.Version(version) }

const usage = `agentd keeps AI agents' todo lists and goals per workspace folder and
serves them to editors and agents over LSP (JSON-RPC with Content-Length framing).

Usage:
  agentd [serve] [--stdio]              LSP over stdin/stdout (what editors start)
  agentd --remote=auto                  LSP over stdin/stdout relayed to your shared daemon,
                                        started when none runs (--remote=unix:PATH: that socket)
  agentd serve --listen=unix:PATH       shared daemon on a Unix socket; exits after
                                        --listen.timeout (default 1m, 0 = never) without clients
  agentd tool NAME [JSON]               call a tool (TodoList, CreateGoal, GetGoal,
                                        SetGoalBudget, UpdateGoal) and print its output;
                                        exit 1 when the tool answers an error
  agentd state [--json]                 print the todo list and goal
  agentd goal create|pause|resume|cancel|budget|status|queue|set-check|check ...
                                        the user's goal controls (agentd goal for help)
  agentd undo [--scope todo|goal] [--json]
                                        revert the newest change of the todo list or the goal
  agentd history [--limit N] [--before SEQ] [--json]
                                        print the session's history, newest first
  agentd simulate [--script NAME|FILE]  play a scripted agent loop (built-in: complete,
                                        turn-budget) and print injections and continuations
  agentd mcp [--remote=auto|off|unix:PATH]
                                        MCP server on stdin/stdout for coding agents: the
                                        tools, the state as resources, a goal prompt
  agentd hook claude|gemini|codex|copilot|qwen|opencode
                                        run one agent hook event (stdin to stdout): turns,
                                        steps, reminders and goal continuation inside the agent
  agentd setup claude|gemini|codex|copilot|qwen|opencode|cursor [--user] [--print] [--remove]
                                        register agentd mcp, and for all but cursor
                                        its hooks (docs/hooks.md), in that agent's
                                        config (the project's; --user: yours) or take them out
  agentd team init --etcd URL[,URL...]  share this folder's goal and todo lists through etcd:
                                        writes .agentd/team.json and copies the state (docs/team.md)
  agentd team accept                    use the folder's committed .agentd/team.json on this machine
                                        (shows its team and etcd endpoints; docs/team.md)
  agentd team status [--json]           which store serves the folder, reachable, round trip
  agentd version                        print the version (also agentd --version)
  agentd SUB --help                     that subcommand's usage (also agentd help SUB)

Flags (before or after the arguments; text that starts with - goes after --; a flag the
subcommand does not take is refused, naming the subcommands that take it):
  --workspace DIR      workspace folder for tool/state/goal/undo/history/simulate/mcp/hook/setup (default: the
                       nearest folder up from the current one that an agentd process has
                       open, or that has agentd state and lies within the repository; else
                       the repository root, else the current folder; docs/protocol.md §1.3)
  --session S          session (default "default")
  --state-dir DIR      where state lives (default $XDG_STATE_HOME/agentd, else the system's: docs/platforms.md)
  --log-file FILE      write logs there instead of stderr
  --log-level LEVEL    debug, info, warn or error (default info)
  --remote unix:PATH   tool/state/goal: use the daemon on that socket (default: the shared
                       daemon when one answers, else the state directly)
  --etcd-endpoints, --etcd-cacert, --etcd-cert, --etcd-key, --etcd-user
                       this machine's etcd settings for team folders (also AGENTD_ETCD_ENDPOINTS,
                       AGENTD_ETCD_CACERT, AGENTD_ETCD_CERT, AGENTD_ETCD_KEY, AGENTD_ETCD_USER,
                       AGENTD_ETCD_PASSWORD; docs/team.md)

Docs: README.md and docs/ in the agentd repository.
`

// options are the flags every subcommand shares.
type options struct {
	stateDir  string
	logFile   string
	logLevel  string
	workspace string
	session   string
	jsonOut   bool
	stdio     bool
	// the shared daemon
	listen        string        // serve --listen=unix:PATH
	listenTimeout time.Duration // serve --listen.timeout
	remote        string        // --remote=auto or unix:PATH
	// agentd goal ...
	criterion string
	replace   bool
	taskFile  string
	clear     bool // goal set-check --clear
	approve   bool // goal check --approve
	reason    string
	check     optString // goal create --check, goal queue add --check
	exitCode  bool
	scope     string // agentd undo --scope
	limit     int    // agentd history --limit
	before    uint64 // agentd history --before
	version   bool   // --version, as agentd version
	// agentd simulate
	script  string
	verbose bool
	// agentd setup
	user, print, remove bool
	// team folders (docs/team.md): agentd team init --etcd, and this
	// machine's etcd settings (teamOptions)
	etcd                                                   string
	etcdEndpoints, etcdCACert, etcdCert, etcdKey, etcdUser string
}

func newFlagSet(o *options, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("agentd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	fs.StringVar(&o.stateDir, "state-dir", "", "state directory")
	fs.StringVar(&o.logFile, "log-file", "", "log file")
	fs.StringVar(&o.logLevel, "log-level", "info", "log level")
	fs.StringVar(&o.workspace, "workspace", "", "workspace folder")
	fs.StringVar(&o.session, "session", "", "session")
	fs.BoolVar(&o.jsonOut, "json", false, "print JSON")
	fs.BoolVar(&o.stdio, "stdio", false, "serve LSP on stdin/stdout (the default)")
	fs.StringVar(&o.listen, "listen", "", "serve the shared daemon on unix:PATH")
	fs.DurationVar(&o.listenTimeout, "listen.timeout", client.DefaultIdleTimeout, "daemon: exit after this long without clients (0: never)")
	fs.StringVar(&o.remote, "remote", "", "relay to the shared daemon: auto or unix:PATH")
	fs.StringVar(&o.criterion, "criterion", "", "goal create: completion criterion")
	fs.BoolVar(&o.replace, "replace", false, "goal create: replace the current goal")
	fs.StringVar(&o.taskFile, "task-file", "", "goal create: task file path")
	fs.BoolVar(&o.clear, "clear", false, "goal set-check: remove the goal's check")
	fs.BoolVar(&o.approve, "approve", false, "goal check: approve the goal's check on this machine instead of running it")
	fs.StringVar(&o.reason, "reason", "", "goal pause: reason")
	fs.Var(&o.check, "check", "goal create, goal queue add: the command that proves the goal is done")
	fs.StringVar(&o.scope, "scope", "", "undo: todo or goal")
	fs.IntVar(&o.limit, "limit", 0, "history: how many events (default 50)")
	fs.Uint64Var(&o.before, "before", 0, "history: only events older than this seq")
	fs.StringVar(&o.script, "script", "", "simulate: built-in script name or JSON file")
	fs.BoolVar(&o.verbose, "verbose", false, "simulate: print whole injections and prompts")
	fs.BoolVar(&o.user, "user", false, "setup: the agent's config in your home folder")
	fs.BoolVar(&o.print, "print", false, "setup: show the change without writing it")
	fs.BoolVar(&o.remove, "remove", false, "setup: take agentd's entry out")
	fs.BoolVar(&o.exitCode, "exit-code", false, "goal status: exit "+commands.StatusExitCodes()+"; "+strconv.Itoa(exitFailure)+" a failure")
	fs.BoolVar(&o.version, "version", false, "print the version")
	fs.StringVar(&o.etcd, "etcd", "", "team init: the etcd endpoints for team.json, URL[,URL...]")
	fs.StringVar(&o.etcdEndpoints, "etcd-endpoints", "", "team folders: this machine's etcd endpoints, URL[,URL...] (else AGENTD_ETCD_ENDPOINTS, else team.json's)")
	fs.StringVar(&o.etcdCACert, "etcd-cacert", "", "team folders: CA certificate file of the etcd members (else AGENTD_ETCD_CACERT)")
	fs.StringVar(&o.etcdCert, "etcd-cert", "", "team folders: client certificate file (else AGENTD_ETCD_CERT)")
	fs.StringVar(&o.etcdKey, "etcd-key", "", "team folders: client key file (else AGENTD_ETCD_KEY)")
	fs.StringVar(&o.etcdUser, "etcd-user", "", "team folders: etcd user; the password comes from AGENTD_ETCD_PASSWORD (else AGENTD_ETCD_USER)")
	return fs
}

// run is the whole program behind main's OS setup; it returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var o options
	sub, pos, code, done := parseCommandLine(&o, args, stdout, stderr)
	if done {
		return code
	}
	log, closeLog, err := cli.OpenLog("agentd", o.logFile, o.logLevel, stderr)
	if sub == "hook" && errors.Is(err, cli.ErrLogFile) {
		return cli.HookNotHandled("agentd hook", err, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentd: %v\n", err)
		return failBeforeRun(args, 2)
	}
	defer closeLog()
	stateDir, err := cli.ResolveStateDir(o.stateDir)
	if sub == "hook" && err != nil {
		return cli.HookNotHandled("agentd hook", err, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentd: %v\n", err)
		return failBeforeRun(args, 2)
	}
	s, ok := lookup(sub)
	if !ok || s.run == nil {
		fmt.Fprintf(stderr, "agentd: unknown command %q (see agentd --help)\n", sub)
		return failBeforeRun(args, 2)
	}
	if s.visible {
		if !o.jsonOut {
			stdout = visibleWriter{stdout}
		}
		stderr = visibleWriter{stderr}
	}
	return s.run(ctx, invocation{o: o, stateDir: stateDir, log: log, pos: pos, stdin: stdin, stdout: stdout, stderr: stderr})
}

// failBeforeRun is the exit code of a failure before a subcommand runs:
// with --exit-code on the line (or a misspelling of it), exitFailure,
// which `agentd goal status --exit-code` gives no state.
func failBeforeRun(args []string, code int) int {
	if exitCodeAsked(args) {
		return exitFailure
	}
	return code
}

// parseCommandLine parses args into o and returns the subcommand ("serve"
// when none is named) and its positional arguments. done is true when the
// command line is answered already (help, version, a flag error or a flag
// the subcommand does not take), with code the exit code.
func parseCommandLine(o *options, args []string, stdout, stderr io.Writer) (sub string, pos []string, code int, done bool) {
	fs := newFlagSet(o, stderr)
	pos, err := cli.ParseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usageOf(pos))
		return "", nil, 0, true
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentd: %v\n", err)
		return "", nil, failBeforeRun(args, 2), true
	}
	if o.version && len(pos) == 0 {
		pos = []string{"version"}
	}
	if cmd, ok := commandOf(pos); ok {
		if err := checkFlags(fs, cmd); err != nil {
			fmt.Fprintf(stderr, "agentd: %v\n", err)
			return "", nil, failBeforeRun(args, 2), true
		}
	}
	sub = "serve"
	if len(pos) > 0 {
		sub, pos = pos[0], pos[1:]
	}
	switch sub {
	case "version":
		fmt.Fprintf(stdout, "agentd %s\n", agentdVersion())
		return "", nil, 0, true
	case "help":
		fmt.Fprint(stdout, usageOf(pos))
		return "", nil, 0, true
	}
	return sub, pos, 0, false
}

// runServe runs agentd serve: LSP on stdio, relayed to the shared daemon
// (--remote), or the shared daemon itself (--listen).
func runServe(ctx context.Context, o options, stateDir string, log *slog.Logger, pos []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "agentd serve: unexpected argument %q\n", pos[0])
		return 2
	}
	switch {
	case o.listen != "" && (o.remote != "" || o.stdio):
		fmt.Fprint(stderr, "agentd serve: --listen cannot go with --remote or --stdio\n")
		return 2
	case o.listen != "":
		return serveDaemon(ctx, o, stateDir, log, stderr)
	case o.remote != "":
		return forward(ctx, o, stateDir, log, stdin, stdout, stderr)
	}
	return serveStdio(ctx, o, stateDir, log, stdin, stdout, stderr)
}

// Usages of the subcommands that have their own: what `agentd SUB --help`
// and `agentd help SUB` print, and what a wrong command line of SUB shows.
const (
	toolUsage     = "usage: agentd tool NAME [JSON] [--json] [--workspace DIR] [--session S]\n  calls the tool (TodoList, CreateGoal, GetGoal, SetGoalBudget, UpdateGoal) and prints its\n  output; exit 1 when the tool answers an error; the workspace folder used is named on stderr\n"
	stateUsage    = "usage: agentd state [--json] [--workspace DIR] [--session S]\n  prints the workspace folder, the todo list and the goal\n"
	mcpUsage      = "usage: agentd mcp [--workspace DIR] [--session S] [--remote=auto|off|unix:PATH]\n  serves MCP on stdin/stdout for coding agents (docs/mcp.md)\n"
	simulateUsage = "usage: agentd simulate [--script NAME|FILE] [--workspace DIR] [--session S] [--verbose]\n  plays a scripted agent loop (built-in: complete, turn-budget) and prints what the agent sees\n"
)

// usageOf is the help for the command line pos (its positional arguments):
// the subcommand's usage when it has one, else agentd's.
func usageOf(pos []string) string {
	if len(pos) == 0 {
		return usage
	}
	if s, ok := lookup(pos[0]); ok && s.usage != nil {
		return s.usage(pos[1:])
	}
	return usage
}

// exitCodeAsked says whether args asks for `goal status --exit-code`: a
// flag before "--" named exit-code (not set to false), or one whose name
// starts with "exit", which can only be a misspelling of it (a name with
// a space is text, as cli.ParseInterspersed reads it).
func exitCodeAsked(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, value, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(name, "exit") && !strings.ContainsAny(name, " \t\n") && !(name == "exit-code" && value == "false") {
			return true
		}
	}
	return false
}

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

func serveStdio(ctx context.Context, o options, stateDir string, log *slog.Logger, stdin io.Reader, stdout, stderr io.Writer) int {
	terminalHint(stdin, stderr, "agentd is a language server for agents' todo lists and goals; it now waits for LSP messages on stdin.\n"+
		"Editors start it for you. From a shell, try: agentd tool TodoList, agentd state, agentd --help. Press Ctrl-D to quit.\n")
	svc := service.New(o.storeOptions(stateDir, log), service.Daemon)
	defer svc.Close()
	srv := lsp.NewServer(svc, agentdVersion(), log)
	defer srv.Close()
	in, restore := pollableStdin(stdin)
	defer restore()
	// The peer is the process that started this one: who this process
	// acts for is who it does.
	return srv.ServeConn(ctx, stdio{in, stdout}, lsp.ConnOptions{WatchParent: true, Caller: caller.Self()})
}

// oneShot runs one command on the workspace folder abs (workspaceFolder),
// for the shell commands. It is the one place that decides where: through
// the shared daemon when one serves this state (viaDaemon), else on the
// state opened directly. Either way the result is decoded the same
// (resultOf), and a refusal is an error that carries its code
// (commands.ErrorCode).
func oneShot(ctx context.Context, o options, stateDir string, log *slog.Logger, abs, id string, args map[string]any) (any, error) {
	if _, explicit, err := cli.RemoteSocket(o.remote); err == nil && !explicit && id == "agentd.state" {
		// No state file: nothing holds state for the folder, not even a
		// daemon (which creates the file when it opens a folder). Answer
		// the empty state without creating one.
		if st, ok, err := commands.FreshState(stateDir, abs, o.session); err != nil || ok {
			return st, err
		}
	}
	raw, err := viaDaemon(ctx, o, stateDir, log, abs, id, args)
	if errors.Is(err, errDirect) {
		raw, err = direct(ctx, o, stateDir, log, abs, id, args)
	}
	if err != nil {
		return nil, err
	}
	return resultOf(id, raw)
}

// oneShotHere runs command id with args (oneShot) on the workspace folder of
// the command line (workspaceFolder), which it names on stderr (noteFolder)
// after withFolder, when not nil, has completed args with that folder. Any
// failure is printed on stderr as "agentd NAME: ERROR" and ok is false: the
// caller exits 1.
func oneShotHere(ctx context.Context, o options, stateDir string, log *slog.Logger, stderr io.Writer, name, id string, args map[string]any, withFolder func(folder string) error) (res any, ok bool) {
	folder, err := workspaceFolder(o, stateDir)
	if err == nil && withFolder != nil {
		err = withFolder(folder)
	}
	if err == nil {
		noteFolder(stderr, folder)
		res, err = oneShot(ctx, o, stateDir, log, folder, id, args)
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentd %s: %v\n", name, err)
		return nil, false
	}
	return res, true
}

// workspaceFolder is the folder a command works on: --workspace when given,
// else the one wsfolder.FindFolder finds from the current folder (the rule
// of docs/protocol.md §1.3).
func workspaceFolder(o options, stateDir string) (string, error) {
	return cli.WorkspaceFolder(o.workspace, stateDir)
}

// noteFolder tells, on stderr, which workspace folder a shell command that
// writes, or `agentd goal status`, used (docs/protocol.md
// §1.3); their stdout stays the command's output.
func noteFolder(stderr io.Writer, folder string) {
	fmt.Fprintf(stderr, "agentd: workspace %s\n", folder)
}

// direct runs one command on the state of folder abs, opened in this
// process, for whom this process acts (caller.Self: a person, or an
// agent's shell).
func direct(ctx context.Context, o options, stateDir string, log *slog.Logger, abs, id string, args map[string]any) (json.RawMessage, error) {
	svc := service.New(o.storeOptions(stateDir, log), service.OneShot)
	defer svc.Close()
	cl := commands.NewClient(svc, commands.Defaults{})
	defer cl.Close()
	cl.SetCaller(caller.Self()) // as the shared daemon does with its peer
	if err := cl.AddFolder(abs); err != nil {
		return nil, err
	}
	if o.session != "" {
		args["session"] = o.session // Execute checks it as it checks every command's session
	}
	arguments, err := json.Marshal([]any{args})
	if err != nil {
		return nil, err
	}
	res, err := cl.Execute(ctx, id, arguments)
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

func runTool(ctx context.Context, o options, stateDir string, log *slog.Logger, pos []string, stdout, stderr io.Writer) int {
	if len(pos) < 1 || len(pos) > 2 {
		fmt.Fprint(stderr, toolUsage)
		return 2
	}
	input := json.RawMessage("{}")
	if len(pos) == 2 {
		input = json.RawMessage(pos[1])
		if !json.Valid(input) {
			fmt.Fprintf(stderr, "agentd tool: the input is not valid JSON: %s\n", pos[1])
			return 2
		}
	}
	res, ok := oneShotHere(ctx, o, stateDir, log, stderr, "tool", "agentd.callTool", map[string]any{"name": pos[0], "input": input}, nil)
	if !ok {
		return 1
	}
	tr := res.(commands.ToolResult)
	if o.jsonOut {
		printJSON(stdout, tr)
	} else {
		fmt.Fprintln(stdout, tr.Output)
	}
	if tr.IsError {
		return 1
	}
	return 0
}

func runState(ctx context.Context, o options, stateDir string, log *slog.Logger, pos []string, stdout, stderr io.Writer) int {
	if len(pos) > 0 {
		fmt.Fprint(stderr, stateUsage)
		return 2
	}
	folder, err := workspaceFolder(o, stateDir)
	if err != nil {
		fmt.Fprintf(stderr, "agentd state: %v\n", err)
		return 1
	}
	res, err := oneShot(ctx, o, stateDir, log, folder, "agentd.state", map[string]any{})
	if err != nil {
		fmt.Fprintf(stderr, "agentd state: %v\n", err)
		return 1
	}
	st := res.(commands.State)
	taskFileNow(&st)
	if o.jsonOut {
		printJSON(stdout, st)
		return 0
	}
	fmt.Fprint(stdout, formatState(st))
	return 0
}

// taskFileNow replaces what the goal's snapshot says of its task file
// (exists, size, sha256, modifiedAt, checkboxes) with what is there now: no watcher
// keeps the snapshot fresh while no daemon runs, and a shell command
// reports the file as it is. A file that cannot be read reads as missing.
func taskFileNow(st *commands.State) {
	if st.Goal == nil || st.Goal.TaskFile == nil {
		return
	}
	root, err := wsfolder.PathFromURI(st.Workspace)
	if err != nil {
		return
	}
	tf := st.Goal.TaskFile
	now, _ := workspace.ReadTaskFile(root, tf.Path)
	tf.Exists, tf.Size, tf.SHA256, tf.ModifiedAt, tf.Checkboxes = now.Exists, now.Size, now.SHA256, now.ModifiedAt, now.Checkboxes
}

func printJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// formatState is the human view of `agentd state`.
func formatState(st commands.State) string {
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
		b.WriteString(st.TeamFile.Line() + "\n")
	}
	b.WriteString("\n")
	if len(st.Todos.Items) == 0 {
		b.WriteString("Todo list is empty.\n")
	} else {
		b.WriteString("Todo list:\n")
		for _, it := range st.Todos.Items {
			fmt.Fprintf(&b, "  [%s] %s\n", it.Status, it.Title)
		}
	}
	b.WriteString("\n")
	b.WriteString(formatGoal(st))
	if len(st.Queue.Items) > 0 {
		b.WriteString("\n")
		b.WriteString(formatQueue(st.Queue))
	}
	return b.String()
}

// staleNote is what the human views say of a State with Stale set: the
// folder's etcd does not answer (docs/team.md, "Faults").
const staleNote = "Stale: etcd does not answer; this is the last state this machine saw, and changes fail until it is back (docs/team.md)\n"

// formatGoal is the human view of a session's goal.
func formatGoal(st commands.State) string {
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
	fmt.Fprintf(&b, "  Used: %s\n", commands.FormatProgress(g))
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
			fmt.Fprintf(&b, "    last run: %s at %s\n", c.LastRun.Summary(c.Command), c.LastRun.At.Local().Format(time.DateTime))
		}
		b.WriteString(commands.FormatCheckConsent(c))
	}
	return b.String()
}
