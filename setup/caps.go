package setup

import (
	"encoding/json"
	"fmt"
)

// The agents' own loop limits (docs/hooks.md, "The agents' own limits"):
// where an agent lets its settings raise one that would end a goal's run
// well before a person's budget, setup raises it beside the hooks, in the
// same file, and says so. Claude Code obeys 8 Stop hook blocks in a row
// unless CLAUDE_CODE_STOP_HOOK_BLOCK_CAP says otherwise; an `env` entry of
// its settings sets it for the session and its hooks. Setup raises it to
// 100, not off: the cap stays a guard against a Stop hook that never lets
// go, and agentd pauses the goal at it with the reason.

// raisedCap is one environment entry setup writes to raise a limit.
type raisedCap struct{ name, value string }

// agentCaps are the raised limits per agent, in its settings' `env`.
var agentCaps = map[string]raisedCap{"claude": {"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "100"}}

// capsNote is what a change of the agent's settings from before to after
// does to its raised limits, for the output of setup: "" when nothing.
func capsNote(agent string, before, after []byte) string {
	c, ok := agentCaps[agent]
	if !ok {
		return ""
	}
	had, has := envValue(before, c.name) == c.value, envValue(after, c.name) == c.value
	switch {
	case has && !had:
		return fmt.Sprintf(" and env %s=%s (Claude Code's limit of Stop hook continuations in a row, raised from 8 so that the goal's budget binds first; docs/hooks.md, \"The agents' own limits\")", c.name, c.value)
	case had && !has:
		return fmt.Sprintf(" and env %s=%s", c.name, c.value)
	}
	return ""
}

// envValue is the string at env.name of a JSON settings file, or "".
func envValue(file []byte, name string) string {
	var s struct {
		Env map[string]any `json:"env"`
	}
	if json.Unmarshal(file, &s) != nil {
		return ""
	}
	v, _ := s.Env[name].(string)
	return v
}

// planCaps sets (or, with opts.Remove, takes out) the agent's raised
// limits in top's `env`. A value already there that is not setup's is the
// person's: it stays, and so does it at a removal.
func planCaps(path string, top *object, opts Options) (Action, error) {
	c, ok := agentCaps[opts.Agent]
	if !ok {
		return Already, nil
	}
	var env object
	if raw, ok := top.get("env"); ok {
		if err := json.Unmarshal(raw, &env); err != nil {
			return "", fmt.Errorf("%s: \"env\" is not an object: changed nothing; fix the file, then run agentd setup again", path)
		}
	}
	raw, set := env.get(c.name)
	var value string
	ours := set && json.Unmarshal(raw, &value) == nil && value == c.value
	switch {
	case opts.Remove && ours:
		env.remove(c.name)
	case opts.Remove || set:
		return Already, nil
	default:
		env.set(c.name, mustJSON(c.value))
	}
	if len(env.keys) == 0 {
		top.remove("env")
	} else {
		top.set("env", mustJSON(env))
	}
	if opts.Remove {
		return Removed, nil
	}
	return Added, nil
}
