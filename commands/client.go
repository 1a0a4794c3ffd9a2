package commands

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/agentd/agentd/caller"
	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/reminder"
	"github.com/agentd/agentd/service"
	"github.com/agentd/agentd/workspace"
	"github.com/agentd/agentd/workspace/wsfolder"
)

// Defaults are a client's defaults for the common arguments (docs/protocol.md §2,
// initializationOptions).
type Defaults struct {
	Session  string
	Agent    string
	Settings reminder.Settings
}

// Client is one caller of commands: an LSP connection or a shell command. It
// holds the caller's workspace folders (opened through the registry and
// released by Close), defaults, and the turns it has begun. Safe for
// concurrent use.
type Client struct {
	svc *service.Service

	mu       sync.Mutex
	folders  []*folder // in the order the client gave them
	defaults Defaults
	caller   caller.Agent // who the client acts for (SetCaller); zero: a person
	closed   bool
	turns    map[turnKey]struct{} // turns begun and not yet ended

	waitsEnd     chan struct{} // closed by EndWaits
	endWaitsOnce sync.Once
	// held are stores of removed folders on which the client still has live
	// turns: kept open (and so locked against other processes, which would
	// take those turns for a dead process's) until the turns end or the
	// client closes.
	held []*workspace.Workspace
}

// folder is one workspace folder of a client. ws is nil while the folder
// could not be opened (openErr says why); every command retries the open.
type folder struct {
	uri     string // as the client wrote it
	path    string
	ws      *workspace.Workspace
	openErr error
}

// NewClient returns a client of svc with no folders. Zero reminder settings
// mean the defaults of docs/runtime.md §1.1.
func NewClient(s *service.Service, d Defaults) *Client {
	c := &Client{svc: s, waitsEnd: make(chan struct{})}
	if d.Settings == (reminder.Settings{}) {
		d.Settings = reminder.DefaultSettings()
	}
	c.SetDefaults(d)
	return c
}

// SetDefaults replaces the client's defaults; empty fields take the
// built-in defaults ("default" session, "main" agent, reminder defaults).
func (c *Client) SetDefaults(d Defaults) {
	if d.Session == "" {
		d.Session = workspace.DefaultSession
	}
	if d.Agent == "" {
		d.Agent = goal.MainAgent
	}
	c.mu.Lock()
	c.defaults = d
	c.mu.Unlock()
}

// Defaults returns the client's current defaults.
func (c *Client) Defaults() Defaults {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.defaults
}

// EndWaits ends the client's waits: an agentd.awaitChange in progress, or
// started later, answers the current state at once, as when its timeout
// passes. A connection calls it at shutdown, so that every request received
// before shutdown is answered (docs/protocol.md §2.2).
func (c *Client) EndWaits() {
	c.endWaitsOnce.Do(func() { close(c.waitsEnd) })
}

// AddFolder adds a workspace folder given as a file URI or an absolute path,
// and tries to open its store. A folder that is not a valid local folder is
// refused (args.invalid). A folder whose store cannot be opened now (e.g.
// workspace.locked) is kept and its error returned: commands on it answer
// that error until an open succeeds.
func (c *Client) AddFolder(uriOrPath string) error {
	path, err := folderPath(uriOrPath)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		return argsErrorf("workspace folder %s is not a folder on this machine", path)
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errors.New("client is closed")
	}
	for _, f := range c.folders {
		if f.path == path {
			c.mu.Unlock()
			return c.open(f)
		}
	}
	f := &folder{uri: uriOrPath, path: path}
	if strings.HasPrefix(uriOrPath, "/") {
		f.uri = wsfolder.URIFromPath(path)
	}
	c.folders = append(c.folders, f)
	c.mu.Unlock()
	return c.open(f)
}

// RemoveFolder drops a folder (URI or path) and releases its store, or
// holds it while the client has live turns on it (see Client.held).
func (c *Client) RemoveFolder(uriOrPath string) error {
	path, err := folderPath(uriOrPath)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, f := range c.folders {
		if f.path == path {
			if f.ws != nil {
				c.dropLocked(f.ws)
			}
			c.folders = append(c.folders[:i], c.folders[i+1:]...)
			return nil
		}
	}
	return nil
}

// FolderURI returns the URI the client uses for ws, and whether ws is one
// of its folders: open, or not open yet (being opened, or to be retried).
// So what the restart rule changes while a folder opens reaches the clients
// that open it (docs/runtime.md §2.3.2).
func (c *Client) FolderURI(ws *workspace.Workspace) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.folders {
		if f.ws == ws || (f.ws == nil && f.path == ws.Root()) {
			return f.uri, true
		}
	}
	return "", false
}

// FolderErrors lists, for the user, the folders that could not be opened.
func (c *Client) FolderErrors() []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, f := range c.folders {
		if f.openErr != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.path, f.openErr))
		}
	}
	return errs
}

// Recovered lists messages about state files found corrupt and moved aside
// when this client's folders were opened (docs/protocol.md §1).
func (c *Client) Recovered() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var msgs []string
	for _, f := range c.folders {
		if f.ws != nil && f.ws.Recovered() != "" {
			msgs = append(msgs, f.ws.Recovered())
		}
	}
	return msgs
}

// Close ends the turns the client left open (pausing their goals) and
// releases every folder. The client must not be used afterwards.
func (c *Client) Close() {
	c.abandonTurns()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, f := range c.folders {
		if f.ws != nil {
			f.ws.Release()
			f.ws = nil
		}
	}
	c.folders = nil
	for _, ws := range c.held {
		ws.Release()
	}
	c.held = nil
}

// open opens f's store if it is not open yet, or opens it again when the
// registry reopened the folder (Workspace.Retired: its team file was
// accepted), moving the client to the new store. A folder the client no
// longer has (removed since a command picked it, or the client closed)
// answers workspace.unknown. It must be called without c.mu held: opening
// may run the restart rule, whose notices reach the fan-out, which asks
// this client for its folders (FolderURI).
func (c *Client) open(f *folder) error {
	c.mu.Lock()
	ws, path, gone := f.ws, f.path, c.closed || !c.hasLocked(f)
	c.mu.Unlock()
	switch {
	case gone:
		return folderGone(f)
	case ws != nil && !ws.Retired():
		return nil
	}
	nw, err := c.svc.Registry().Open(path)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case f.ws != ws: // another call opened it first
		if err == nil {
			nw.Release()
		}
		if c.closed || !c.hasLocked(f) {
			return folderGone(f)
		}
		return nil
	case err != nil:
		f.openErr = err
		if ws != nil {
			c.dropLocked(ws)
			f.ws = nil
		}
	case c.closed || !c.hasLocked(f):
		nw.Release()
		return folderGone(f)
	default:
		if ws != nil {
			c.dropLocked(ws)
		}
		f.ws, f.openErr = nw, nil
	}
	return err
}

// dropLocked lets go of ws, a store the client no longer uses for a
// folder: released, or held while the client has live turns on it (see
// Client.held). c.mu must be held.
func (c *Client) dropLocked(ws *workspace.Workspace) {
	if c.hasTurnsLocked(ws) {
		c.held = append(c.held, ws)
		return
	}
	ws.Release()
}

// folderGone is the refusal of a command whose folder was removed from the
// client after the command picked it.
func folderGone(f *folder) error {
	return &Error{Code: protocol.CodeUnknownWorkspace, Msg: fmt.Sprintf("%s is no longer an open workspace folder (it was removed after this request arrived): nothing was done", f.path)}
}

func (c *Client) hasLocked(f *folder) bool {
	for _, g := range c.folders {
		if g == f {
			return true
		}
	}
	return false
}

// pick chooses the folder named by want, or the only one.
func (c *Client) pick(want string) (*folder, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.folders) == 0 {
		return nil, &Error{Code: protocol.CodeNoWorkspace, Msg: "no workspace folder is open: open a folder in the editor (LSP workspaceFolders or rootUri), or give --workspace to a shell command"}
	}
	var f *folder
	switch {
	case want != "":
		path, err := folderPath(want)
		if err != nil {
			return nil, err
		}
		for _, g := range c.folders {
			if g.path == path {
				f = g
			}
		}
		if f == nil {
			return nil, &Error{Code: protocol.CodeUnknownWorkspace, Msg: fmt.Sprintf("%s is not an open workspace folder; open folders: %s", want, c.pathsLocked())}
		}
	case len(c.folders) == 1:
		f = c.folders[0]
	default:
		return nil, &Error{Code: protocol.CodeUnknownWorkspace, Msg: fmt.Sprintf("several workspace folders are open (%s): say which one with the \"workspace\" argument", c.pathsLocked())}
	}
	return f, nil
}

func (c *Client) pathsLocked() string {
	paths := make([]string, len(c.folders))
	for i, f := range c.folders {
		paths[i] = f.path
	}
	sort.Strings(paths)
	return strings.Join(paths, ", ")
}

// folderPath converts a folder URI or absolute path into a clean absolute
// path with symbolic links resolved, so that one folder reached through a
// link and through its real path shares one state.
func folderPath(uriOrPath string) (string, error) {
	if uriOrPath == "" {
		return "", argsErrorf("workspace folder is empty")
	}
	p := filepath.Clean(uriOrPath)
	if !strings.HasPrefix(uriOrPath, "/") {
		var err error
		if p, err = wsfolder.PathFromURI(uriOrPath); err != nil {
			return "", argsErrorf("workspace folder %q: %v", uriOrPath, err)
		}
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	return p, nil
}
