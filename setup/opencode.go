package setup

import (
	"bytes"
	_ "embed"
	"fmt"
	"path/filepath"
)

// opencode has no command hooks: setup writes agentd's plugin instead
// (docs/hooks.md, "opencode"), a JavaScript file opencode loads from its
// plugins folder, which runs the hook program once per event without a
// shell.
//
//	project .opencode/plugins/agentd.js   user ~/.config/opencode/plugins/agentd.js
//
// The file is setup's own: it is written whole, replaced when it differs
// (another agentd, or an older plugin), and removed; a file there that
// does not begin with the plugin's first line is someone else's and is
// refused.

//go:embed opencode_plugin.js
var opencodePluginText []byte

// pluginCommandMark is where the plugin's text takes the hook command.
var pluginCommandMark = []byte("__AGENTD_HOOK_COMMAND__")

// pluginFirstLine is how a plugin file setup wrote begins.
var pluginFirstLine = opencodePluginText[:bytes.IndexByte(opencodePluginText, '\n')+1]

// opencodeEntry is agentd's entry under "mcp" in opencode.json.
func opencodeEntry(command string) object {
	var e object
	e.set("type", mustJSON("local"))
	e.set("command", mustJSON([]string{command, "mcp"}))
	return e
}

// serversKey is the key of the MCP servers object in the agent's file.
func serversKey(agent string) string {
	if agent == "opencode" {
		return "mcp"
	}
	return "mcpServers"
}

// entryCommand is the program an entry read from a file runs: its
// "command" (opencode's is an array: its first word), or "".
func entryCommand(agent string, got any) string {
	m, _ := got.(map[string]any)
	if agent == "opencode" {
		words, _ := m["command"].([]any)
		if len(words) == 0 {
			return ""
		}
		s, _ := words[0].(string)
		return s
	}
	s, _ := m["command"].(string)
	return s
}

// pluginPath is agentd's plugin file for the scope of opts.
func pluginPath(opts Options) string {
	if opts.User {
		return filepath.Join(opts.Home, ".config", "opencode", "plugins", "agentd.js")
	}
	return filepath.Join(opts.Workspace, ".opencode", "plugins", "agentd.js")
}

// opencodePlugin is the plugin's text for opts: the hook command as an
// argument list, `agentd-hook opencode` or `agentd hook opencode`.
func opencodePlugin(opts Options) []byte {
	argv := []string{opts.Command, "hook", "opencode"}
	if opts.HookCommand != "" {
		argv = []string{opts.HookCommand, "opencode"}
	}
	return bytes.Replace(opencodePluginText, pluginCommandMark, mustJSON(argv), 1)
}

// planOpencode is PlanAll for opencode: opencode.json's entry, then the
// plugin file.
func planOpencode(opts Options, mcp Change) ([]Change, error) {
	path := pluginPath(opts)
	pc, err := newChange(path, opts, false)
	if err != nil {
		return nil, err
	}
	pc.What = "agentd's opencode plugin"
	pc.dirs = []string{filepath.Dir(path), filepath.Dir(filepath.Dir(path))}
	want := opencodePlugin(opts)
	switch {
	case pc.Before != nil && !bytes.HasPrefix(pc.Before, pluginFirstLine):
		return nil, fmt.Errorf("%s exists and is not the plugin agentd setup writes: changed nothing; move or delete it by hand, then run agentd setup again", path)
	case opts.Remove && pc.Before == nil:
		pc.Action = Absent
	case opts.Remove:
		pc.Action = Removed
	case pc.Before == nil:
		pc.Action, pc.After = Added, want
	case bytes.Equal(pc.Before, want):
		pc.Action = Already
	default:
		pc.Action, pc.After = Updated, want
	}
	if pc.Action == Already || pc.Action == Absent {
		pc.After = pc.Before
	}
	pc.keepLink()
	return []Change{mcp, pc}, nil
}
