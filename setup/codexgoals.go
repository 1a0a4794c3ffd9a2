package setup

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Codex's own goals (its create_goal, get_goal and update_goal tools and
// their continuation loop) are a feature, "goals", on by default in Codex
// 0.169. Beside agentd's goal tools they give the model two goal systems,
// two budgets and two continuations (docs/hooks.md, "Keep the agent's own
// goal feature off"), so setup turns the feature off in the Codex config
// file it writes the MCP entry to, with one line under [features] that it
// knows again by its comment and takes out with --remove. A goals key the
// file already has (true or false) is the user's and stays as it is.

// codexGoalsLine is the line setup writes under [features].
const codexGoalsLine = "goals = false # agentd setup: agentd's goal tools replace Codex's own\n"

// codexFeaturesHeader is the table the line goes in.
const codexFeaturesHeader = "[features]"

// planCodexConfig edits a Codex config file: the MCP entry (planTOML),
// then Codex's own goals off (or, with remove, back to Codex's default).
func planCodexConfig(path string, before []byte, want object, remove bool) (Action, []byte, error) {
	action, after, err := planTOML(path, before, want, remove)
	if err != nil {
		return "", nil, err
	}
	text := after
	if action == Already || action == Absent {
		text = before
	}
	goals, text, err := codexGoals(path, text, remove)
	switch {
	case err != nil:
		return "", nil, err
	case goals == Already || goals == Absent:
		return action, after, nil
	case remove && len(bytes.TrimSpace(text)) == 0:
		return Removed, nil, nil
	case remove:
		return Removed, text, nil
	case action == Already || action == Updated:
		return Updated, text, nil
	}
	return Added, text, nil
}

// codexGoals adds setup's goals line to text (or takes it out), parsing
// the result again before it is accepted.
func codexGoals(path string, text []byte, remove bool) (Action, []byte, error) {
	var doc map[string]any
	if err := toml.Unmarshal(text, &doc); err != nil {
		return "", nil, fmt.Errorf("%s is not valid TOML (%v): changed nothing; fix or move the file, then run agentd setup again", path, err)
	}
	lines := strings.SplitAfter(string(text), "\n")
	if remove {
		return removeGoalsLine(path, lines)
	}
	features, _ := doc["features"].(map[string]any)
	if _, set := features["goals"]; set {
		return Already, text, nil // the user's own choice, or setup's line
	}
	header := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == codexFeaturesHeader {
			header = i
			break
		}
	}
	var out string
	if header >= 0 {
		out = strings.Join(lines[:header+1], "") + codexGoalsLine + strings.Join(lines[header+1:], "")
	} else {
		var b strings.Builder
		b.Write(text)
		if len(text) > 0 {
			if !bytes.HasSuffix(text, []byte("\n")) {
				b.WriteByte('\n')
			}
			b.WriteByte('\n')
		}
		b.WriteString(codexFeaturesHeader + "\n" + codexGoalsLine)
		out = b.String()
	}
	doc = nil
	err := toml.Unmarshal([]byte(out), &doc)
	if features, _ = doc["features"].(map[string]any); err != nil || features["goals"] != false {
		return "", nil, fmt.Errorf("%s: cannot add goals = false under %s (it defines features in a way a table line cannot extend): changed nothing; add it by hand to turn Codex's own goals off", path, codexFeaturesHeader)
	}
	return Added, []byte(out), nil
}

// removeGoalsLine takes setup's goals line out of lines, and the
// [features] header with it when nothing else is left in that table.
func removeGoalsLine(path string, lines []string) (Action, []byte, error) {
	at := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == strings.TrimSpace(codexGoalsLine) {
			at = i
			break
		}
	}
	if at < 0 {
		return Absent, []byte(strings.Join(lines, "")), nil
	}
	lines = append(lines[:at:at], lines[at+1:]...)
	next := at // the next line with something on it
	for next < len(lines) && strings.TrimSpace(lines[next]) == "" {
		next++
	}
	if at > 0 && strings.TrimSpace(lines[at-1]) == codexFeaturesHeader && (next == len(lines) || strings.HasPrefix(strings.TrimSpace(lines[next]), "[")) {
		start := at - 1
		if start > 0 && strings.TrimSpace(lines[start-1]) == "" {
			start-- // the blank line setup put before the table
		}
		lines = append(lines[:start:start], lines[at:]...)
	}
	out := []byte(strings.Join(lines, ""))
	var doc map[string]any
	if err := toml.Unmarshal(out, &doc); err != nil {
		return "", nil, fmt.Errorf("%s: taking out setup's goals line would leave the file broken: changed nothing; delete it by hand", path)
	}
	return Removed, out, nil
}
