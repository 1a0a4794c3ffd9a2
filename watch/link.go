package watch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/lsp/daemon/client"
)

// historyShown is how many of the newest history events the panel reads.
const historyShown = 30

// The wait before dialling a lost daemon again: redialFirst, doubled
// after each failure up to redialLast (docs/commands.md, "agentd watch").
const (
	redialFirst = time.Second
	redialLast  = 30 * time.Second
)

// Options configure Run and Once.
type Options struct {
	Folder  string // the workspace folder, an absolute path
	Session string // "" is the daemon's default
	// Dial connects to the shared daemon (started when none runs, as
	// `agentd mcp` does), for the first connection and after one is lost.
	Dial func(context.Context) (io.ReadWriteCloser, error)
	In   io.Reader // the keys: the terminal
	Out  io.Writer // the panel: the terminal
}

// conn is the panel's connection to the daemon: the open session, if any,
// and what to tell the model.
type conn struct {
	opts Options
	tell func(any) // sends a message to the model

	mu   sync.Mutex
	sess *client.Session
	// name is the session's name from the last state read: the
	// notifications of the folder's other sessions are passed over.
	name string
}

// serve keeps a session open until ctx ends: it dials, reads the state
// and history, reads them again at each change the daemon tells, and when
// the connection ends tells the model, waits and dials again.
func (c *conn) serve(ctx context.Context) {
	wait := redialFirst
	for ctx.Err() == nil {
		c.tell(linkMsg{state: connecting})
		opened, err := c.run(ctx)
		if ctx.Err() != nil {
			return
		}
		if opened { // the waits start again from the first
			wait = redialFirst
		}
		c.tell(linkMsg{state: lost, err: err, retry: time.Now().Add(wait)})
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, redialLast)
	}
}

// errGone is the error of a session the daemon ended.
var errGone = errors.New("the daemon closed the connection")

// run runs one session until it ends: opened says whether it was open,
// err why it ended (errGone: the daemon closed it) or could not open.
func (c *conn) run(ctx context.Context) (opened bool, err error) {
	changed := make(chan struct{}, 1) // a change to read; one pending is enough
	s, err := open(ctx, c.opts, func(method string, params json.RawMessage) {
		if c.ours(method, params) {
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	})
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	c.sess = s
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.sess = nil
		c.mu.Unlock()
		s.Close()
	}()
	if err := c.read(ctx, s); err != nil {
		return true, err
	}
	c.tell(linkMsg{state: live})
	for {
		select {
		case <-ctx.Done():
			return true, nil
		case <-s.Done():
			return true, errGone
		case <-changed:
			if err := c.read(ctx, s); err != nil {
				return true, err
			}
		}
	}
}

// open dials the daemon and begins a session on the folder, whose
// notifications go to onNotify (on the connection's read goroutine).
func open(ctx context.Context, opts Options, onNotify func(string, json.RawMessage)) (*client.Session, error) {
	rw, err := opts.Dial(ctx)
	if err != nil {
		return nil, err
	}
	beginCtx, cancel := context.WithTimeout(ctx, client.DefaultCallWaits.Begin)
	defer cancel()
	return client.OpenSession(beginCtx, rw, client.SessionOptions{
		Folder: opts.Folder, Session: opts.Session, ClientName: "agentd-watch", OnNotify: onNotify,
	})
}

// ours says whether a notification tells a change of the panel's session.
func (c *conn) ours(method string, params json.RawMessage) bool {
	switch method {
	case protocol.MethodTodoChanged, protocol.MethodGoalChanged, protocol.MethodQueueChanged, protocol.MethodTaskFileChanged:
	default:
		return false
	}
	var p struct{ Session string }
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.name == "" || p.Session == c.name
}

// read reads the state and the history on s and tells the model.
func (c *conn) read(ctx context.Context, s *client.Session) error {
	snap, err := readSnapshot(ctx, s)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.name = snap.State.Session
	c.mu.Unlock()
	c.tell(snapshotMsg{snap})
	return nil
}

// readSnapshot reads agentd.state and agentd.history on s.
func readSnapshot(ctx context.Context, s *client.Session) (Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, client.DefaultCallWaits.Command)
	defer cancel()
	raw, err := s.Execute(ctx, protocol.CmdState, &protocol.NoArgs{})
	if err != nil {
		return Snapshot{}, fmt.Errorf("reading the state: %w", err)
	}
	snap := Snapshot{At: time.Now()}
	if err := json.Unmarshal(raw, &snap.State); err != nil {
		return Snapshot{}, fmt.Errorf("reading the state: %w", err)
	}
	raw, err = s.Execute(ctx, protocol.CmdHistory, &protocol.HistoryArgs{Limit: historyShown})
	if err != nil {
		return Snapshot{}, fmt.Errorf("reading the history: %w", err)
	}
	var h protocol.HistoryResult
	if err := json.Unmarshal(raw, &h); err != nil {
		return Snapshot{}, fmt.Errorf("reading the history: %w", err)
	}
	snap.History = h.Events
	return snap, nil
}

// send runs a person's command on the open session.
func (c *conn) send(id protocol.CommandID, args any) error {
	c.mu.Lock()
	s := c.sess
	c.mu.Unlock()
	if s == nil {
		return fmt.Errorf("%s was not sent: not connected to the agentd daemon", id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), client.DefaultCallWaits.Command)
	defer cancel()
	_, err := s.Execute(ctx, id, args)
	return err
}
