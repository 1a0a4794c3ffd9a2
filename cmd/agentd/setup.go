package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/agentd/agentd/cmd/internal/cli"
	"github.com/agentd/agentd/setup"
)

const setupUsage = `usage: agentd setup claude|gemini|codex|copilot|qwen|opencode|cursor [--workspace DIR] [--user] [--print] [--remove]
  registers agentd mcp in the agent's config: the project's file (default; --workspace
  or the workspace rule picks the folder) or, with --user, the one in your home folder;
  for claude, gemini, codex, copilot and qwen also agentd's hooks on the agent's loop events, as
  agentd-hook AGENT when agentd-hook sits beside this agentd, else agentd hook AGENT
  (docs/hooks.md), and for opencode agentd's plugin, which runs them; --print shows the result without writing, --remove takes it out again
`

// setupHints are what to do next, per agent and scope.
var setupHints = map[string]string{
	"claude":        "Start Claude Code in this folder and approve the project's agentd server when asked; `claude mcp list` shows it.",
	"claude-user":   "Claude Code starts agentd in every folder; `claude mcp list` shows it.",
	"gemini":        "Gemini CLI reads .gemini/settings.json in trusted folders only: trust this folder when it asks; /mcp shows agentd.",
	"gemini-user":   "Gemini CLI starts agentd in every folder; /mcp shows it.",
	"codex":         "One step left, once: Codex runs no hooks until you trust them, and `codex exec` says nothing about it. Start `codex` in this folder, trust the project if it asks, and choose \"Trust all and continue\" at \"Hooks need review\" (again whenever agentd setup changes the hooks). `codex mcp list` shows agentd.",
	"codex-user":    "One step left, once: Codex runs no hooks until you trust them, and `codex exec` says nothing about it. Start `codex` and choose \"Trust all and continue\" at \"Hooks need review\" (again whenever agentd setup changes the hooks). Codex starts agentd in every project; `codex mcp list` shows it.",
	"copilot":       "Copilot CLI reads .github/mcp.json and .github/hooks/agentd.json in folders you trust: trust this folder when it asks (copilot -p: --trust-folder); /mcp shows agentd.",
	"copilot-user":  "Copilot CLI starts agentd in every folder; /mcp shows it.",
	"qwen":          "Qwen Code reads .qwen/settings.json in trusted folders only: trust this folder when it asks; /mcp shows agentd. Qwen Code's own goal tools are turned off in this folder (tools.disabled).",
	"qwen-user":     "Qwen Code starts agentd in every folder; /mcp shows it. Its own goal tools are turned off (tools.disabled).",
	"opencode":      "opencode loads opencode.json and .opencode/plugins/agentd.js when it starts in this folder (its first start installs its plugin package into .opencode from the npm registry); `opencode mcp list` shows agentd.",
	"opencode-user": "opencode starts agentd and loads agentd's plugin in every folder; `opencode mcp list` shows agentd.",
	"cursor":        "Cursor lists agentd under Settings, MCP: enable it there.",
	"cursor-user":   "Cursor lists agentd under Settings, MCP: enable it there.",
}

// setupCmd is `agentd setup AGENT` (README, "Use with your agent").
type setupCmd struct {
	workspace           string
	user, print, remove bool
}

func (*setupCmd) Name() string          { return "setup" }
func (*setupCmd) Usage([]string) string { return setupUsage }
func (*setupCmd) ShortHelp() string {
	return `  agentd setup claude|gemini|codex|copilot|qwen|opencode|cursor [--user] [--print] [--remove]
                                        register agentd mcp, and for all but cursor
                                        its hooks (docs/hooks.md), in that agent's
                                        config (the project's; --user: yours) or take them out
`
}

func (c *setupCmd) SetFlags(fs *flag.FlagSet) {
	cli.WorkspaceVar(fs, &c.workspace)
	fs.BoolVar(&c.user, "user", false, "setup: the agent's config in your home folder")
	fs.BoolVar(&c.print, "print", false, "setup: show the change without writing it")
	fs.BoolVar(&c.remove, "remove", false, "setup: take agentd's entry out")
}

func (*setupCmd) printsForPerson() bool { return true }

func (c *setupCmd) Run(ctx context.Context, e *env, pos []string) int {
	if len(pos) != 1 {
		fmt.Fprint(e.stderr, setupUsage)
		return 2
	}
	opts, code := c.options(e, pos[0])
	if code != 0 {
		return code
	}
	changes, err := setup.PlanAll(opts)
	if err != nil {
		fmt.Fprintf(e.stderr, "agentd setup %s: %v\n", opts.Agent, err)
		if strings.HasPrefix(err.Error(), "unknown agent") {
			return 2
		}
		return 1
	}
	if c.print {
		printPlan(e.stdout, changes)
		return 0
	}
	added, ok := applyChanges(e, opts.Agent, changes)
	if !ok {
		return 1
	}
	// Codex's hooks may still wait for the user's trust when nothing
	// changed: its step is said then too (docs/hooks.md, "Codex").
	if added || opts.Agent == "codex" && !c.remove {
		c.nextSteps(e, opts)
	}
	return 0
}

// options are setup's for agent: the agent's config in the project's
// folder (the workspace rule) or, with --user, in the home folder, and the
// commands the entries run. A non-zero code: the error is said.
func (c *setupCmd) options(e *env, agent string) (setup.Options, int) {
	opts := setup.Options{Agent: agent, User: c.user, Remove: c.remove, Command: "agentd", CodexHome: os.Getenv("CODEX_HOME")}
	if c.user {
		home, err := os.UserHomeDir()
		if err != nil {
			fmt.Fprintf(e.stderr, "agentd setup: no home folder: %v\n", err)
			return opts, 1
		}
		opts.Home = home
		// A file in the home folder is the user's own: name this agentd
		// wherever it is, so that no PATH is needed, unless it is a
		// temporary build (go run) that will not last.
		if exe, err := os.Executable(); err == nil {
			var temporary bool
			if opts.Command, temporary = setup.UserCommand(exe); temporary {
				fmt.Fprintf(e.stderr, "agentd setup: note: this agentd (%s) is a temporary build (go run, or a file in the temp folder) that will not last, so the entry names plain agentd, which %s finds on your PATH; to name a lasting binary, build or install agentd (README, Install) and run its agentd setup %s --user\n", exe, opts.Agent, opts.Agent)
			}
		}
	} else {
		folder, err := workspaceFolder(e, target{workspace: c.workspace})
		if err != nil {
			fmt.Fprintf(e.stderr, "agentd setup: %v\n", err)
			return opts, 2
		}
		opts.Workspace = folder
	}
	// The hooks run agentd-hook when it sits beside this agentd: one exec
	// per agent event that links no store (docs/hooks.md).
	if exe, err := os.Executable(); err == nil {
		opts.HookCommand = setup.HookCommandFor(exe, opts.Command)
	}
	return opts, 0
}

// printPlan is `agentd setup --print`: each file as it would be written.
func printPlan(stdout io.Writer, changes []setup.Change) {
	for _, c := range changes {
		if c.Refusal() != nil {
			fmt.Fprintf(stdout, "# %s has comments, which agentd setup cannot keep: it writes nothing there; copy agentd's entries from this into it by hand (its comments are left out here)\n", shown(c))
		}
		switch {
		case c.After == nil:
			fmt.Fprintf(stdout, "# %s: would be removed (nothing else is left in it)\n", shown(c))
		case c.Action == setup.Already || c.Action == setup.Absent:
			fmt.Fprintf(stdout, "# %s: unchanged (%s)\n%s", shown(c), describe(c), c.After)
		default:
			fmt.Fprintf(stdout, "# %s: would be written as\n%s", shown(c), c.After)
		}
	}
}

// applyChanges writes changes, all files or none when one refuses, and
// says what each did; added: an entry was added or updated. false: the
// error is said.
func applyChanges(e *env, agent string, changes []setup.Change) (added, ok bool) {
	for _, c := range changes {
		if err := c.Refusal(); err != nil {
			fmt.Fprintf(e.stderr, "agentd setup %s: %v\n", agent, err)
			return false, false
		}
	}
	for _, c := range changes {
		if err := c.Apply(); err != nil {
			fmt.Fprintf(e.stderr, "agentd setup %s: writing %s: %v\n", agent, shown(c), err)
			return false, false
		}
		fmt.Fprintf(e.stdout, "%s: %s\n", shown(c), describe(c))
		added = added || c.Action == setup.Added || c.Action == setup.Updated
	}
	return added, true
}

// nextSteps says what to do next in the agent, and warns when a program
// the entries name plainly is not on the PATH.
func (c *setupCmd) nextSteps(e *env, opts setup.Options) {
	hint := opts.Agent
	if c.user {
		hint += "-user"
	}
	fmt.Fprintln(e.stdout, setupHints[hint])
	for _, program := range []string{opts.Command, opts.HookCommand} {
		if program != setup.ServerName && program != setup.HookProgram {
			continue
		}
		if _, err := exec.LookPath(program); err != nil {
			fmt.Fprintf(e.stderr, "agentd setup: note: %s is not on your PATH, so %s cannot start it: install it (README, Install), or run an installed agentd's setup with --user, which writes its full path\n", program, opts.Agent)
		}
	}
}

// shown names a change's file, and the file it writes when that is
// reached through a symbolic link (docs/mcp.md, "Symbolic links").
func shown(c setup.Change) string {
	if c.Linked {
		return c.Path + " (through the link, " + c.Target + ")"
	}
	return c.Path
}

func describe(c setup.Change) string {
	switch c.Action {
	case setup.Added:
		return "added " + c.What
	case setup.Updated:
		return "updated " + c.What + " to run this agentd"
	case setup.Already:
		return "agentd is already set up"
	case setup.Removed:
		return "removed " + c.What
	}
	return "no agentd entry to remove"
}
