// Package setup is `agentd setup AGENT` (README, "Use with your agent"): it
// registers `agentd mcp` in a coding agent's own config file, in the format
// that agent documents, and takes it out again.
//
//	claude  project .mcp.json              user ~/.claude.json          JSON mcpServers.agentd
//	gemini  project .gemini/settings.json  user ~/.gemini/settings.json JSON mcpServers.agentd
//	codex   project .codex/config.toml     user $CODEX_HOME/config.toml TOML [mcp_servers.agentd]
//	copilot project .github/mcp.json       user ~/.copilot/mcp-config.json JSON mcpServers.agentd
//	qwen    project .qwen/settings.json    user ~/.qwen/settings.json   JSON mcpServers.agentd
//	cursor  project .cursor/mcp.json       user ~/.cursor/mcp.json      JSON mcpServers.agentd
//	opencode project opencode.json         user ~/.config/opencode/opencode.json JSON mcp.agentd
//
// A file is merged, never replaced: every other key stays as it was (JSON
// keys keep their order; a TOML file keeps its text, comments included, and
// gets one table appended). Setting up twice changes nothing; a file that
// exists but does not parse, or already has an agentd entry that setup did
// not write, is refused and left untouched (an entry setup wrote for an
// agentd at another path is updated), and so is a JSON file with comments,
// which writing would lose (Change.Refusal); removing takes out exactly the
// entry setup writes (and the mcpServers object or the file when nothing
// else is left in them). It never moves data across a symbolic link
// (links.go). It imports only the standard library and
// github.com/pelletier/go-toml/v2.
package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Agents are the agents setup knows, in the order the usage lists them.
var Agents = []string{"claude", "gemini", "codex", "copilot", "qwen", "opencode", "cursor"}

// ServerName is the name agentd's entry has in every config file.
const ServerName = "agentd"

// HookProgram is the lean program of agentd's hooks, installed beside
// agentd (docs/hooks.md).
const HookProgram = "agentd-hook"

// Options say what to set up.
type Options struct {
	Agent     string // one of Agents
	Workspace string // the project folder, absolute (project scope)
	User      bool   // the user's config in Home instead of the project's
	Home      string // the user's home folder (user scope)
	CodexHome string // $CODEX_HOME; "" is Home/.codex
	// Command is the program the agent starts: "agentd" on the PATH for a
	// project file, which others share, or an absolute path.
	Command string
	// HookCommand is the program the agent's hooks run with the agent as
	// its one argument: agentd-hook, named as Command names agentd
	// (HookCommandFor); "" runs `Command hook AGENT` (docs/hooks.md).
	HookCommand string
	Remove      bool // take the entry out instead
}

// Action is what a Change does.
type Action string

const (
	Added   Action = "added"   // the entry was not there and is added
	Updated Action = "updated" // setup's entry names another agentd (the binary moved): it now names Command
	Already Action = "already" // the entry is there as setup writes it: nothing to do
	Removed Action = "removed" // the entry is taken out
	Absent  Action = "absent"  // nothing to remove
)

// Change is the planned edit of one config file.
type Change struct {
	Path string
	// Target is the file the change reads and writes: Path with its
	// symbolic links resolved; Linked says Path, or its folder, is a link
	// (docs/mcp.md, "Symbolic links").
	Target string
	Linked bool
	Action Action
	What   string // what setup writes in the file, for messages ("the agentd MCP server")
	Before []byte // the file as it is; nil when it does not exist
	After  []byte // the file as it will be; nil when it is to be deleted (or does not exist)
	// Comments says the file has comments, which Gemini CLI accepts and
	// writing it would lose: Apply refuses a change that writes it
	// (Refusal), and After shows the file with agentd's entries, its
	// comments left out, to copy them from by hand.
	Comments bool
	mode     os.FileMode // of a new file
	ownDir   bool        // the file is in the agent's own folder (.gemini, ...), removed with it when empty
	empty    []byte      // the file with nothing in it, written instead of deleting it through a link
	// dirs are more folders a removal takes out when it leaves them empty,
	// innermost first (opencode's plugins folder, its .opencode folder)
	dirs []string
}

// Plan reads the agent's config file and works out the change, writing
// nothing. Refusals (an unknown agent, a file that does not parse, an
// agentd entry setup did not write) are errors that name the file and the
// problem.
func Plan(opts Options) (Change, error) {
	path, err := configPath(opts)
	if err != nil {
		return Change{}, err
	}
	c, err := newChange(path, opts, opts.Agent != "codex")
	if err != nil {
		return c, err
	}
	want := entry(opts.Agent, opts.Command)
	if opts.Agent == "codex" {
		c.Action, c.After, err = planCodexConfig(path, c.Before, want, opts.Remove)
	} else {
		c.Action, c.After, err = planJSON(path, opts.Agent, c.Before, want, opts.Remove)
	}
	if err != nil {
		return c, err
	}
	if c.Action == Already || c.Action == Absent {
		c.After = c.Before
	}
	c.keepLink()
	return c, nil
}

// Refusal is the error Apply answers for a change it will not write: a
// file with comments (Comments) that the change edits; nil for every other.
func (c Change) Refusal() error {
	if !c.Comments || c.Action == Already || c.Action == Absent {
		return nil
	}
	return fmt.Errorf("%s has comments (// or /* */), which agentd setup cannot keep when it writes the file: changed nothing; run the same agentd setup with --print and copy agentd's entries from what it shows into your file by hand", c.Path)
}

// Apply writes a planned change to its Target: the new file through a
// temporary file beside it and a rename (keeping the old file's mode; a new
// one gets 0600 in the home folder and 0644 in a project), or deletes the
// file when nothing is left in it, and then the agent's folder (.gemini,
// .codex, .cursor) when that is empty and not reached through a link.
// Already and Absent write nothing; a Refusal writes nothing and is the
// error.
func (c Change) Apply() error {
	if err := c.Refusal(); err != nil {
		return err
	}
	switch {
	case c.Action == Already || c.Action == Absent:
		return nil
	case c.After == nil:
		if err := os.Remove(c.Target); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if c.ownDir && !c.Linked {
			dir := filepath.Dir(c.Target)
			os.Remove(dir) // only when empty: .gemini, .codex, .cursor, Copilot CLI's hooks
			if up := filepath.Base(filepath.Dir(dir)); up == ".copilot" || up == ".github" {
				os.Remove(filepath.Dir(dir)) // when its hooks folder was the last thing in it
			}
		}
		for _, dir := range c.dirs {
			if !c.Linked {
				os.Remove(dir) // only when empty
			}
		}
		return nil
	}
	mode := c.mode
	if fi, err := os.Stat(c.Target); err == nil {
		mode = fi.Mode().Perm()
	}
	dir := filepath.Dir(c.Target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(c.Target)+".agentd-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(c.After); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), c.Target)
}

// UserCommand is the command a file in the home folder names for this
// agentd, whose executable is exe: exe itself, so that no PATH is needed,
// or plain "agentd" and true when exe is a temporary build that will not
// last: a file under the temp folder (os.TempDir, $GOTMPDIR) or Go's build
// cache ($GOCACHE, else the user cache folder's go-build), where `go run`
// puts the programs it builds (README, "Use with your agent").
func UserCommand(exe string) (string, bool) {
	temp := []string{os.TempDir(), os.Getenv("GOTMPDIR"), os.Getenv("GOCACHE")}
	if temp[2] == "" {
		if dir, err := os.UserCacheDir(); err == nil {
			temp[2] = filepath.Join(dir, "go-build")
		}
	}
	real := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return filepath.Clean(p)
	}
	file := real(exe)
	for _, dir := range temp {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		if below(real(dir), file) {
			return ServerName, true
		}
	}
	return exe, false
}

// below says whether path p lies in folder dir (not dir itself), both
// clean and absolute.
func below(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// configPath is the agent's config file for the scope of opts.
func configPath(opts Options) (string, error) {
	base := opts.Workspace
	if opts.User {
		base = opts.Home
	}
	if !filepath.IsAbs(base) {
		return "", fmt.Errorf("setup: folder %q is not absolute", base)
	}
	switch opts.Agent {
	case "claude":
		if opts.User {
			return filepath.Join(base, ".claude.json"), nil
		}
		return filepath.Join(base, ".mcp.json"), nil
	case "gemini":
		return filepath.Join(base, ".gemini", "settings.json"), nil
	case "codex":
		if opts.User && opts.CodexHome != "" {
			return filepath.Join(opts.CodexHome, "config.toml"), nil
		}
		return filepath.Join(base, ".codex", "config.toml"), nil
	case "copilot":
		if opts.User {
			return filepath.Join(base, ".copilot", "mcp-config.json"), nil
		}
		return filepath.Join(base, ".github", "mcp.json"), nil
	case "qwen":
		return filepath.Join(base, ".qwen", "settings.json"), nil
	case "cursor":
		return filepath.Join(base, ".cursor", "mcp.json"), nil
	case "opencode":
		if opts.User {
			return filepath.Join(base, ".config", "opencode", "opencode.json"), nil
		}
		return filepath.Join(base, "opencode.json"), nil
	}
	return "", fmt.Errorf("unknown agent %q: use one of %s", opts.Agent, strings.Join(Agents, ", "))
}

// entry is agentd's server entry as the agent documents it; Codex's
// passes on codexEnvVars.
func entry(agent, command string) object {
	e := firstEntry(agent, command)
	if agent == "codex" {
		e.set("env_vars", mustJSON(codexEnvVars))
	}
	return e
}

// codexEnvVars are the variables Codex passes to agentd mcp besides the
// few it passes every MCP server (HOME, PATH, SHELL, TERM, TMPDIR, LANG):
// with them agentd mcp reaches the daemon and state of the user's login
// session (docs/hooks.md, "What each agent passes").
var codexEnvVars = []string{"XDG_RUNTIME_DIR", "XDG_STATE_HOME"}

// firstEntry is the entry as setup wrote it before issue 26 (Codex's
// without env_vars), which setup still takes for its own and updates.
func firstEntry(agent, command string) object {
	var e object
	if agent == "opencode" {
		return opencodeEntry(command)
	}
	switch agent {
	case "claude":
		e.set("type", mustJSON("stdio"))
	case "copilot":
		e.set("type", mustJSON("local"))
	}
	e.set("command", mustJSON(command))
	e.set("args", mustJSON([]string{"mcp"}))
	if agent == "copilot" {
		e.set("tools", mustJSON([]string{"*"})) // Copilot CLI offers the model only the tools listed
	}
	return e
}

// ours says whether an entry read from a file is one setup wrote: want,
// or the entry setup writes for another command whose base name is agentd
// (another agentd binary, or this one before it moved), each also in its
// form from before issue 26 (firstEntry).
func ours(agent string, got any, want object) bool {
	cmd := entryCommand(agent, got)
	var wantCmd string
	json.Unmarshal(want.vals["command"], &wantCmd)
	if cmd != wantCmd && filepath.Base(cmd) != ServerName {
		return false
	}
	return same(got, entry(agent, cmd)) || same(got, firstEntry(agent, cmd))
}

// same compares an entry read from a file with the one setup writes, as
// JSON values.
func same(got any, want object) bool {
	var a, b any
	ga, err1 := json.Marshal(got)
	wb, err2 := json.Marshal(want)
	if err1 != nil || err2 != nil || json.Unmarshal(ga, &a) != nil || json.Unmarshal(wb, &b) != nil {
		return false
	}
	return reflect.DeepEqual(a, b)
}

func notOurs(path, key string) error {
	return fmt.Errorf("%s already has an %s entry that agentd setup did not write: changed nothing; edit or delete that entry by hand, then run agentd setup again", path, key)
}

// planJSON edits mcpServers.agentd of a JSON config file (opencode's
// mcp.agentd, serversKey).
func planJSON(path, agent string, before []byte, want object, remove bool) (Action, []byte, error) {
	top, err := jsonFile(path, before)
	if err != nil {
		return "", nil, err
	}
	key := serversKey(agent)
	var servers object
	if raw, ok := top.get(key); ok {
		if err := json.Unmarshal(raw, &servers); err != nil {
			return "", nil, fmt.Errorf("%s: %q is not an object: changed nothing; fix the file, then run agentd setup again", path, key)
		}
	}
	raw, has := servers.get(ServerName)
	var cur any
	if has && json.Unmarshal(raw, &cur) != nil {
		return "", nil, notOurs(path, key+"."+ServerName)
	}
	action := Added
	if has {
		if !ours(agent, cur, want) {
			return "", nil, notOurs(path, key+"."+ServerName)
		}
		action = Updated
	}
	switch {
	case remove && !has:
		return Absent, nil, nil
	case !remove && has && same(cur, want):
		return Already, nil, nil
	case remove:
		servers.remove(ServerName)
		if len(servers.keys) == 0 {
			top.remove(key)
		} else {
			top.set(key, mustJSON(servers))
		}
		if len(top.keys) == 0 {
			return Removed, nil, nil
		}
		return Removed, indented(top), nil
	}
	servers.set(ServerName, mustJSON(want))
	top.set(key, mustJSON(servers))
	return action, indented(top), nil
}

// jsonFile parses the text of a JSON config file (empty is an empty
// object), its comments (which Gemini CLI accepts) left out.
func jsonFile(path string, data []byte) (object, error) {
	var top object
	text, _ := stripComments(data)
	if len(bytes.TrimSpace(text)) == 0 {
		return top, nil
	}
	if err := json.Unmarshal(text, &top); err != nil {
		return top, fmt.Errorf("%s is not a JSON object (%v): changed nothing; fix or move the file, then run agentd setup again", path, err)
	}
	return top, nil
}

// stripComments is JSON text with its // and /* */ comments outside
// strings turned into spaces (line breaks kept, so that errors point at
// the right line), and whether it had any.
func stripComments(data []byte) ([]byte, bool) {
	out := bytes.Clone(data)
	found := false
	inString, escaped := false, false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && c == '/' && i+1 < len(out) && (out[i+1] == '/' || out[i+1] == '*'):
			found = true
			end := []byte("\n")
			if out[i+1] == '*' {
				end = []byte("*/")
			}
			n := bytes.Index(out[i+2:], end)
			stop := len(out)
			if n >= 0 {
				stop = i + 2 + n
				if end[0] == '*' {
					stop += 2
				}
			}
			for k := i; k < stop; k++ {
				if out[k] != '\n' {
					out[k] = ' '
				}
			}
			i = stop - 1
		}
	}
	return out, found
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil { // our own values: a bug
		panic(err)
	}
	return b
}

func indented(o object) []byte {
	b, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

// object is a JSON object that keeps its keys in order and its values as
// they were written.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

func (o *object) get(k string) (json.RawMessage, bool) {
	v, ok := o.vals[k]
	return v, ok
}

func (o *object) set(k string, v json.RawMessage) {
	if o.vals == nil {
		o.vals = map[string]json.RawMessage{}
	}
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *object) remove(k string) {
	delete(o.vals, k)
	o.keys = slices.DeleteFunc(o.keys, func(s string) bool { return s == k })
}

func (o *object) UnmarshalJSON(data []byte) error {
	d := json.NewDecoder(bytes.NewReader(data))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return errors.New("not an object")
	}
	*o = object{vals: map[string]json.RawMessage{}}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return err
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return err
		}
		o.set(t.(string), v)
	}
	if _, err := d.Token(); err != nil {
		return err
	}
	if _, err := d.Token(); err == nil {
		return errors.New("more after the object")
	}
	return nil
}

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// tomlHeader is the table setup appends to a Codex config file.
const tomlHeader = "[mcp_servers." + ServerName + "]"

// planTOML edits [mcp_servers.agentd] of a Codex config file as text, so
// that every other line (comments, order, spacing) stays as it is; the
// result is parsed again before it is accepted.
func planTOML(path string, before []byte, want object, remove bool) (Action, []byte, error) {
	var command string
	if err := json.Unmarshal(want.vals["command"], &command); err != nil {
		panic(err)
	}
	cur, has, err := tomlEntry(before)
	if err != nil {
		return "", nil, fmt.Errorf("%s is not valid TOML (%v): changed nothing; fix or move the file, then run agentd setup again", path, err)
	}
	if has && !ours("codex", cur, want) {
		return "", nil, notOurs(path, "mcp_servers."+ServerName)
	}
	switch {
	case remove && !has:
		return Absent, nil, nil
	case !remove && has && same(cur, want):
		return Already, nil, nil
	case remove || has:
		table := ""
		if !remove {
			table = tomlTable(command)
		}
		after, ok := replaceTOMLTable(before, table)
		if !ok {
			return "", nil, fmt.Errorf("%s has the %s entry in another form than the %s table agentd setup writes: changed nothing; delete it by hand", path, ServerName, tomlHeader)
		}
		got, still, err := tomlEntry(after)
		if !remove {
			if err != nil || !still || !same(got, want) {
				return "", nil, fmt.Errorf("%s: rewriting %s would leave the file broken: changed nothing; edit it by hand", path, tomlHeader)
			}
			return Updated, after, nil
		}
		if err != nil || still {
			return "", nil, fmt.Errorf("%s: taking out %s would leave the file broken: changed nothing; delete it by hand", path, tomlHeader)
		}
		if len(bytes.TrimSpace(after)) == 0 {
			return Removed, nil, nil
		}
		return Removed, after, nil
	}
	var b bytes.Buffer
	b.Write(before)
	if len(before) > 0 {
		if !bytes.HasSuffix(before, []byte("\n")) {
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
	b.WriteString(tomlTable(command))
	got, ok, err := tomlEntry(b.Bytes())
	if err != nil || !ok || !same(got, want) {
		return "", nil, fmt.Errorf("%s: cannot add a %s table to it (it defines mcp_servers in a way a table cannot extend): changed nothing; add the entry by hand", path, tomlHeader)
	}
	return Added, b.Bytes(), nil
}

// tomlTable is the [mcp_servers.agentd] table setup writes, for command.
func tomlTable(command string) string {
	vars := make([]string, len(codexEnvVars))
	for i, v := range codexEnvVars {
		vars[i] = tomlString(v)
	}
	return tomlHeader + "\n" + fmt.Sprintf("command = %s\n", tomlString(command)) + "args = [\"mcp\"]\n" +
		"env_vars = [" + strings.Join(vars, ", ") + "]\n"
}

// tomlEntry parses a TOML file and returns mcp_servers.agentd when it has one.
func tomlEntry(data []byte) (any, bool, error) {
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		return nil, false, err
	}
	servers, ok := doc["mcp_servers"].(map[string]any)
	if !ok {
		return nil, false, nil
	}
	e, ok := servers[ServerName]
	return e, ok, nil
}

// tomlString is s as a TOML basic string (JSON's escapes are TOML's).
func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// replaceTOMLTable replaces the [mcp_servers.agentd] table (its header
// line and the lines up to the next table header or the end) with table;
// an empty table removes it together with the one blank line setup put
// before it. false when there is no such header line.
func replaceTOMLTable(data []byte, table string) ([]byte, bool) {
	lines := strings.SplitAfter(string(data), "\n")
	start := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == tomlHeader {
			start = i
			break
		}
	}
	if start < 0 {
		return nil, false
	}
	end := start + 1
	for end < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[end]), "[") {
		end++
	}
	// Blank lines at the end of the table belong to what follows.
	for end > start+1 && strings.TrimSpace(lines[end-1]) == "" && end < len(lines) {
		end--
	}
	if table == "" && start > 0 && strings.TrimSpace(lines[start-1]) == "" {
		start--
	}
	return []byte(strings.Join(lines[:start:start], "") + table + strings.Join(lines[end:], "")), true
}
