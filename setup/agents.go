package setup

import (
	"encoding/json"
	"path/filepath"
	"slices"
)

// What Copilot CLI and Qwen Code need beside the MCP entry and the hook
// groups every agent gets (docs/hooks.md, "GitHub Copilot CLI" and "Qwen
// Code").

// copilotHooksPath is Copilot CLI's hooks file of agentd: a file of its
// own in the folder Copilot CLI reads every *.json of (.github/hooks in a
// project, ~/.copilot/hooks for the user).
func copilotHooksPath(base string, user bool) string {
	if user {
		return filepath.Join(base, ".copilot", "hooks", "agentd.json")
	}
	return filepath.Join(base, ".github", "hooks", "agentd.json")
}

// copilotEntry is one Copilot CLI hook: a command entry of its own, with
// no matcher group around it, run by bash with a timeout in seconds.
func copilotEntry(line string) object {
	var h object
	h.set("type", mustJSON("command"))
	h.set("bash", mustJSON(line))
	h.set("timeoutSec", mustJSON(hookTimeout["copilot"]))
	return h
}

// hookLine is the command line of a hook entry read from a file, when the
// entry has one command: Copilot CLI's entry itself (bash), every other
// agent's group with one hook (command).
func hookLine(agent string, g any) (string, bool) {
	m, _ := g.(map[string]any)
	if agent == "copilot" {
		line, ok := m["bash"].(string)
		return line, ok
	}
	hs, _ := m["hooks"].([]any)
	if len(hs) != 1 {
		return "", false
	}
	h, _ := hs[0].(map[string]any)
	line, ok := h["command"].(string)
	return line, ok
}

// copilotVersion is the format version Copilot CLI's hooks files declare.
const copilotVersion = 1

// qwenGoalTools are Qwen Code's own goal tools, which setup disables in
// the project's settings (tools.disabled) so that the model has one goal
// system, agentd's; Qwen Code honours tools.disabled from a project file
// (its goals.modelProposed is honoured only from the user's).
var qwenGoalTools = []string{"get_goal", "update_goal", "propose_goal"}

// planExtras edits what a hooks file needs besides its hooks: the version
// of a Copilot CLI hooks file, and Qwen Code's goal tools in tools.disabled
// (added, or taken out on remove; other entries stay).
func planExtras(top *object, opts Options) Action {
	switch opts.Agent {
	case "copilot":
		if _, ok := top.get("version"); ok || opts.Remove {
			return Already
		}
		top.set("version", mustJSON(copilotVersion))
		return Added
	case "qwen":
		return planQwenTools(top, opts.Remove)
	}
	return Already
}

// planQwenTools adds qwenGoalTools to tools.disabled, or takes them out. A
// tools or tools.disabled of another type is left as it is.
func planQwenTools(top *object, remove bool) Action {
	var tools object
	if raw, ok := top.get("tools"); ok && json.Unmarshal(raw, &tools) != nil {
		return Already
	}
	var disabled []string
	if raw, ok := tools.get("disabled"); ok && json.Unmarshal(raw, &disabled) != nil {
		return Already
	}
	action, kept := Already, disabled[:0:0]
	for _, name := range disabled {
		if remove && slices.Contains(qwenGoalTools, name) {
			action = Removed
			continue
		}
		kept = append(kept, name)
	}
	for _, name := range qwenGoalTools {
		if !remove && !slices.Contains(kept, name) {
			kept, action = append(kept, name), Added
		}
	}
	if action == Already {
		return Already
	}
	if len(kept) == 0 {
		tools.remove("disabled")
	} else {
		tools.set("disabled", mustJSON(kept))
	}
	if len(tools.keys) == 0 {
		top.remove("tools")
	} else {
		top.set("tools", mustJSON(tools))
	}
	return action
}

// onlyVersion says that a Copilot CLI hooks file holds nothing but its
// version, once agentd's hooks are out: agentd's file, removed whole.
func onlyVersion(agent string, top object) bool {
	return agent == "copilot" && len(top.keys) == 1 && top.keys[0] == "version"
}
