package commands

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agentd/agentd/jsonin"
	"github.com/agentd/agentd/reminder"
)

// Configure applies LSP initializationOptions `{session, agent, settings}`
// (docs/protocol.md §2) to the client's defaults. Unknown keys are ignored and
// returned so the caller can log them once; a value of the wrong type or a
// key given twice is an args.invalid error and changes nothing. An empty
// array, as Lua clients send an empty table, is an empty object here and
// for settings.
func (cl *Client) Configure(initOptions json.RawMessage) (unknown []string, err error) {
	if isNull(initOptions) {
		return nil, nil
	}
	opts, err := optionsObject(initOptions, "initializationOptions")
	if err != nil {
		return nil, err
	}
	d := cl.Defaults()
	for key, raw := range opts {
		switch key {
		case "session", "agent":
			var v string
			if !isNull(raw) {
				if err := json.Unmarshal(raw, &v); err != nil {
					return nil, argsErrorf("initializationOptions.%s must be a string, got %s", key, jsonin.Kind(raw))
				}
			}
			if err := checkName(key, v); err != nil {
				return nil, err
			}
			if key == "session" {
				d.Session = v
			} else {
				d.Agent = v
			}
		case "settings":
			more, err := applySettings(&d.Settings, raw, "initializationOptions.settings")
			if err != nil {
				return nil, err
			}
			unknown = append(unknown, more...)
		default:
			unknown = append(unknown, "initializationOptions."+key)
		}
	}
	cl.SetDefaults(d)
	sort.Strings(unknown)
	return unknown, nil
}

// ConfigureSettings applies workspace/didChangeConfiguration params
// `{settings: {agentd: {...}}}` (docs/protocol.md §2). Settings of other tools
// are not ours and are ignored silently.
func (cl *Client) ConfigureSettings(params json.RawMessage) (unknown []string, err error) {
	var p struct {
		Settings struct {
			Agentd json.RawMessage `json:"agentd"`
		} `json:"settings"`
	}
	if json.Unmarshal(params, &p) != nil || isNull(p.Settings.Agentd) {
		return nil, nil
	}
	d := cl.Defaults()
	unknown, err = applySettings(&d.Settings, p.Settings.Agentd, "settings.agentd")
	if err != nil {
		return nil, err
	}
	cl.SetDefaults(d)
	return unknown, nil
}

// applySettings decodes the thresholds of reminder.SettingsTable (whole
// numbers >= 0; 0 turns the stale todo reminder, docs/runtime.md §1.1, or
// stall detection, §2.4.5, off).
func applySettings(s *reminder.Settings, raw json.RawMessage, where string) (unknown []string, err error) {
	if isNull(raw) {
		return nil, nil
	}
	m, err := optionsObject(raw, where)
	if err != nil {
		return nil, err
	}
	table := reminder.SettingsTable()
	next := *s
	for key, v := range m {
		i := slices.IndexFunc(table, func(st reminder.Setting) bool { return st.Name == key })
		if i < 0 {
			unknown = append(unknown, where+"."+key)
			continue
		}
		dst := table[i].Field(&next)
		if err := json.Unmarshal(v, dst); err != nil || *dst < 0 {
			return nil, argsErrorf("%s.%s must be a whole number of %s, 0 or more (0 turns it off), got %s", where, key, table[i].Unit, v)
		}
	}
	*s = next
	return unknown, nil
}

// SettingsReference is the table of settings in docs/commands.md
// ("Settings"), generated from reminder.SettingsTable: name, type, default
// (DefaultSettings) and meaning.
func SettingsReference() string {
	var b strings.Builder
	b.WriteString("| setting | type | default | meaning |\n|---|---|---|---|\n")
	def := reminder.DefaultSettings()
	for _, st := range reminder.SettingsTable() {
		fmt.Fprintf(&b, "| `%s` | whole number of %s, 0 or more | %d | %s |\n", st.Name, st.Unit, *st.Field(&def), st.Doc)
	}
	return b.String()
}

// optionsObject decodes an object of options whose values are read one by
// one: [] is {}, a key given twice is refused (jsonin.Decode's rules).
func optionsObject(raw json.RawMessage, where string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if raw = bytes.TrimSpace(raw); !json.Valid(raw) || raw[0] != '{' && !jsonin.IsEmptyArray(raw) {
		return nil, argsErrorf("%s must be an object, got %s", where, jsonin.Kind(raw))
	}
	if err := jsonin.Decode(raw, &m, where); err != nil {
		return nil, argsErrorf("%v", err)
	}
	return m, nil
}

func isNull(raw json.RawMessage) bool {
	t := string(raw)
	return len(raw) == 0 || t == "null"
}
