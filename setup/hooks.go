package setup

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The hooks setup installs beside the MCP server (docs/hooks.md): each
// event `agentd hook AGENT` handles gets one matcher group running it
// (as `agentd-hook AGENT` when agentd-hook sits beside agentd), in
// the agent's documented hooks format, merged by the same rules as the MCP
// entry.
//
//	claude  project .claude/settings.json  user ~/.claude/settings.json   hooks.EVENT[]
//	gemini  project .gemini/settings.json  user ~/.gemini/settings.json   hooks.EVENT[] (the MCP file)
//	codex   project .codex/hooks.json      user $CODEX_HOME/hooks.json    hooks.EVENT[]
//	copilot project .github/hooks/agentd.json user ~/.copilot/hooks/agentd.json hooks.EVENT[] (entries, no groups)
//	qwen    project .qwen/settings.json    user ~/.qwen/settings.json     hooks.EVENT[] (the MCP file)
//	opencode project .opencode/plugins/agentd.js  user ~/.config/opencode/plugins/agentd.js (opencode.go)
//
// Cursor gets no hooks.

// hookEvent is one event and the matcher of its group ("" for none).
type hookEvent struct{ name, matcher string }

var hookEvents = map[string][]hookEvent{
	"claude": {{"UserPromptSubmit", ""}, {"PreToolUse", "*"}, {"PostToolUse", "TodoWrite"}, {"PostToolBatch", ""},
		{"Stop", ""}, {"StopFailure", ""}, {"SessionEnd", ""}},
	"gemini": {{"BeforeAgent", ""}, {"BeforeModel", ""}, {"BeforeTool", ".*"}, {"AfterTool", "write_todos"},
		{"AfterAgent", ""}, {"SessionEnd", ""}},
	"codex": {{"UserPromptSubmit", ""}, {"PreToolUse", ""}, {"PostToolUse", ""}, {"Stop", ""}, {"Interrupt", ""}, {"SessionEnd", ""}},
	"copilot": {{"sessionStart", ""}, {"userPromptSubmitted", ""}, {"preToolUse", ""}, {"postToolUse", ""},
		{"agentStop", ""}, {"sessionEnd", ""}},
	"qwen": {{"UserPromptSubmit", ""}, {"PreToolUse", ""}, {"PostToolUse", "todo_write"}, {"Stop", ""}, {"StopFailure", ""},
		{"SessionEnd", ""}},
}

// retiredHookEvents are events an older setup installed and this one does
// not: setup takes out its own groups there at the next run. Codex 0.169
// has no StopFailure; Gemini CLI runs AfterModel once per streamed chunk,
// a process each, and its tokens come from its transcript since (issue 26,
// docs/hooks.md).
var retiredHookEvents = map[string][]hookEvent{
	"codex":  {{"StopFailure", ""}},
	"gemini": {{"AfterModel", ""}},
}

// hookTimeout is each agent's hook timeout, in its unit (Gemini CLI counts
// milliseconds, the others seconds): well above agentd hook's own 2 s.
var hookTimeout = map[string]int{"claude": 10, "gemini": 10000, "codex": 10, "copilot": 10, "qwen": 10}

// eventTimeout is the timeout of an event whose agent allows less than
// hookTimeout (Codex 0.169 clamps its Interrupt and SessionEnd hooks to 3 s
// and warns at each run), still above agentd hook's 2 s.
var eventTimeout = map[string]int{"codex Interrupt": 3, "codex SessionEnd": 3}

// hooksPath is the agent's hooks file for the scope of opts, "" when setup
// installs no hooks for it.
func hooksPath(opts Options) (string, error) {
	if _, ok := hookEvents[opts.Agent]; !ok {
		return "", nil
	}
	if opts.Agent == "gemini" || opts.Agent == "qwen" {
		return configPath(opts)
	}
	base := opts.Workspace
	if opts.User {
		base = opts.Home
	}
	if !filepath.IsAbs(base) {
		return "", fmt.Errorf("setup: folder %q is not absolute", base)
	}
	if opts.Agent == "codex" {
		if opts.User && opts.CodexHome != "" {
			return filepath.Join(opts.CodexHome, "hooks.json"), nil
		}
		return filepath.Join(base, ".codex", "hooks.json"), nil
	}
	if opts.Agent == "copilot" {
		return copilotHooksPath(base, opts.User), nil
	}
	return filepath.Join(base, ".claude", "settings.json"), nil
}

// hookCommand is the shell command line the agent runs for a hook:
// `agentd-hook AGENT` when opts names agentd-hook (HookCommand), else
// `agentd hook AGENT`.
func hookCommand(opts Options) string {
	if opts.HookCommand != "" {
		return ShellQuote(opts.HookCommand) + " " + opts.Agent
	}
	return ShellQuote(opts.Command) + " hook " + opts.Agent
}

// HookCommandFor is Options.HookCommand for an agentd whose executable is
// exe and whose config entries name command (Options.Command): agentd-hook
// named the way command names agentd (plain, for a PATH lookup, or by the
// path beside command's) when an agentd-hook sits beside exe, else "",
// which keeps `agentd hook AGENT`.
func HookCommandFor(exe, command string) string {
	fi, err := os.Stat(filepath.Join(filepath.Dir(exe), HookProgram))
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return ""
	}
	if filepath.IsAbs(command) {
		return filepath.Join(filepath.Dir(command), HookProgram)
	}
	return HookProgram
}

// ShellQuote is s as one shell word (POSIX sh).
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ourGroup says whether a matcher group read from a file is one setup
// wrote for ev: the group hookGroup makes, for `W hook AGENT` where W's base
// name is agentd, or `W AGENT` where it is agentd-hook (another agentd
// binary, the same one before it moved, or the other of the two forms).
func ourGroup(agent string, ev hookEvent, g any) bool {
	line, ok := hookLine(agent, g)
	if !ok {
		return false
	}
	word, ok := strings.CutSuffix(line, " "+agent)
	if !ok {
		return false
	}
	program := HookProgram
	if w, ok := strings.CutSuffix(word, " hook"); ok {
		word, program = w, ServerName
	}
	cmd := word
	if q, ok := strings.CutPrefix(word, "'"); ok && strings.HasSuffix(q, "'") {
		cmd = strings.ReplaceAll(strings.TrimSuffix(q, "'"), `'\''`, "'")
	}
	return filepath.Base(cmd) == program && same(g, hookGroup(agent, line, ev))
}

// hookGroup is the matcher group setup writes for one event, running the
// command line line.
func hookGroup(agent, line string, ev hookEvent) object {
	if agent == "copilot" {
		return copilotEntry(line)
	}
	var h, g object
	h.set("type", mustJSON("command"))
	h.set("command", mustJSON(line))
	timeout, ok := eventTimeout[agent+" "+ev.name]
	if !ok {
		timeout = hookTimeout[agent]
	}
	h.set("timeout", mustJSON(timeout))
	if ev.matcher != "" {
		g.set("matcher", mustJSON(ev.matcher))
	}
	g.set("hooks", mustJSON([]object{h}))
	return g
}

// PlanAll is Plan and, for the agents with hooks, the hooks: one Change per
// file (Gemini CLI keeps both in one), all worked out before anything is
// written, so a refusal of either file changes nothing.
func PlanAll(opts Options) ([]Change, error) {
	mcp, err := Plan(opts)
	if err != nil {
		return nil, err
	}
	mcp.What = "the agentd MCP server"
	if opts.Agent == "opencode" {
		return planOpencode(opts, mcp)
	}
	path, err := hooksPath(opts)
	if err != nil || path == "" {
		return []Change{mcp}, err
	}
	hc, err := newChange(path, opts, true)
	if err != nil {
		return nil, err
	}
	if hc.Target == mcp.Target { // Gemini CLI's one file, or two linked to one
		action, after, err := planHooks(path, mcp.After, opts)
		if err != nil {
			return nil, err
		}
		mcp.Action, mcp.After = combine(mcp.Action, action), after
		mcp.What = "the agentd MCP server and hooks"
		mcp.keepLink()
		return []Change{mcp}, nil
	}
	hc.What = "agentd's hooks"
	if hc.Action, hc.After, err = planHooks(path, hc.Before, opts); err != nil {
		return nil, err
	}
	hc.What += capsNote(opts.Agent, hc.Before, hc.After) // caps.go
	hc.keepLink()
	return []Change{mcp, hc}, nil
}

// combine is the action of two edits of one file.
func combine(a, b Action) Action {
	switch {
	case a == Added || b == Added:
		return Added
	case a == Updated || b == Updated:
		return Updated
	case a == Removed || b == Removed:
		return Removed
	}
	return a
}

// planHooks adds (or removes) agentd's groups under hooks.EVENT of a JSON
// file whose text is before. A group of another tool stays; a group that
// runs `agentd hook` but is not the one setup writes is refused.
func planHooks(path string, before []byte, opts Options) (Action, []byte, error) {
	top, err := jsonFile(path, before)
	if err != nil {
		return "", nil, err
	}
	var hooks object
	if raw, ok := top.get("hooks"); ok {
		if err := json.Unmarshal(raw, &hooks); err != nil {
			return "", nil, fmt.Errorf("%s: \"hooks\" is not an object: changed nothing; fix the file, then run agentd setup again", path)
		}
	}
	action := Already
	events := hookEvents[opts.Agent]
	for i, ev := range slices.Concat(events, retiredHookEvents[opts.Agent]) {
		remove := opts.Remove || i >= len(events)
		want := hookGroup(opts.Agent, hookCommand(opts), ev)
		var groups []json.RawMessage
		if raw, ok := hooks.get(ev.name); ok {
			if err := json.Unmarshal(raw, &groups); err != nil {
				return "", nil, fmt.Errorf("%s: \"hooks.%s\" is not an array: changed nothing; fix the file, then run agentd setup again", path, ev.name)
			}
		}
		edit, kept, err := editGroups(path, opts.Agent, ev, want, groups, remove)
		if err != nil {
			return "", nil, err
		}
		if edit == Already {
			continue
		}
		if edit == Removed && !opts.Remove {
			edit = Updated // a retired event's group, gone in an install
		}
		action = combine(action, edit)
		if len(kept) == 0 {
			hooks.remove(ev.name)
		} else {
			hooks.set(ev.name, mustJSON(kept))
		}
	}
	capped, err := planCaps(path, &top, opts) // caps.go
	if err != nil {
		return "", nil, err
	}
	action = combine(action, capped)
	action = combine(action, planExtras(&top, opts))
	switch {
	case action == Already && opts.Remove:
		return Absent, before, nil
	case action == Already:
		return Already, before, nil
	case opts.Remove:
		if len(hooks.keys) == 0 {
			top.remove("hooks")
		} else {
			top.set("hooks", mustJSON(hooks))
		}
		if len(top.keys) == 0 || onlyVersion(opts.Agent, top) {
			return Removed, nil, nil
		}
		return Removed, indented(top), nil
	}
	top.set("hooks", mustJSON(hooks))
	return action, indented(top), nil
}

// editGroups adds setup's group want to the groups of event ev (or, with
// remove, takes setup's groups out): the edit, Already when there is none,
// and the groups after it. A group that runs `agentd hook` but is not one
// setup writes is refused.
func editGroups(path, agent string, ev hookEvent, want object, groups []json.RawMessage, remove bool) (Action, []json.RawMessage, error) {
	marker := "hook " + agent
	var at []int // setup's groups, for this agentd or another
	current := false
	for i, g := range groups {
		var v any
		switch {
		case json.Unmarshal(g, &v) == nil && (same(v, want) || ourGroup(agent, ev, v)):
			at = append(at, i)
			current = current || same(v, want)
		case strings.Contains(string(g), marker):
			return "", nil, notOurs(path, "hooks."+ev.name+" group running agentd "+marker)
		}
	}
	edit := Added
	switch {
	case remove && len(at) > 0:
		edit = Removed
	case remove || len(at) == 1 && current:
		return Already, groups, nil
	case len(at) > 0:
		edit = Updated
	}
	kept := groups[:0:0]
	for i, g := range groups {
		switch {
		case !slices.Contains(at, i):
			kept = append(kept, g)
		case edit == Updated && i == at[0]:
			kept = append(kept, mustJSON(want)) // in the place of the old one
		}
	}
	if edit == Added {
		kept = append(kept, mustJSON(want))
	}
	return edit, kept, nil
}
