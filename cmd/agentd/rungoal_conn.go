package main

// The connection of `agentd run` (rungoal.go) to the folder's daemon, and
// its replacement when the daemon goes away (a restart, an upgrade, a
// crash): the run connects again, at most reconnectTries times, reads the
// goal again and goes on where it was (docs/commands.md, "Running a goal
// unattended"). An agent process that runs meanwhile is left to run: it is
// watched again once the run is connected, and no other starts until it
// ends.

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentd/agentd/cmd/internal/cli"
	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/lsp/daemon/client"
)

// reconnectTries bounds the connections `agentd run` makes after its
// daemon went away before a command answers again; the first is made at
// once, each next after a wait twice the last, from reconnectWait.
const (
	reconnectTries = 5
	reconnectWait  = 500 * time.Millisecond
)

// connect opens the LSP session with the shared daemon (started when none
// runs, as agentd mcp and the hooks reach it), whose notifications wake
// the driver. d.sess changes only when it succeeds.
func (d *driver) connect(ctx context.Context) error {
	path, explicit, err := cli.RemoteSocket(d.t.remote)
	if err != nil {
		return err
	}
	conn, _, err := dialShared(ctx, d.e, d.t, path, explicit)
	if err != nil {
		return err
	}
	sess, err := client.OpenSession(ctx, conn, client.SessionOptions{Folder: d.folder, ClientName: "agentd-run",
		OnNotify: func(method string, _ json.RawMessage) {
			if method == protocol.MethodGoalChanged || method == protocol.MethodTodoChanged || method == protocol.MethodQueueChanged {
				d.wake()
			}
		}})
	if err != nil {
		return err
	}
	d.sess = sess
	return nil
}

// wake makes the driver read the state again.
func (d *driver) wake() {
	select {
	case d.changed <- struct{}{}:
	default:
	}
}

// lost says whether the session's connection has ended: the daemon went
// away.
func (d *driver) lost() bool {
	select {
	case <-d.sess.Done():
		return true
	default:
		return false
	}
}

// execute runs one command on the daemon; when the daemon was lost before
// it answered, it connects again (reconnect) and runs it again.
func (d *driver) execute(ctx context.Context, id protocol.CommandID, args any) (json.RawMessage, error) {
	for {
		raw, err := d.sess.Execute(ctx, id, args)
		if err == nil {
			d.lostTries = 0
			return raw, nil
		}
		if ctx.Err() != nil || !d.lost() {
			return nil, err
		}
		if err := d.reconnect(ctx, err); err != nil {
			return nil, err
		}
	}
}

// reconnect replaces the lost session with a new one, waiting between
// tries, and says so; an error when reconnectTries connections were made
// since a command last answered (the daemon keeps going away, or none can
// be reached).
func (d *driver) reconnect(ctx context.Context, cause error) error {
	d.sess.Drop()
	if d.lostTries == 0 {
		d.view.line(fmt.Sprintf("the agentd daemon went away: connecting again, at most %d tries", reconnectTries))
	}
	for d.lostTries < reconnectTries {
		if d.lostTries > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(reconnectWait << (d.lostTries - 1)):
			}
		}
		d.lostTries++
		err := d.connect(ctx)
		if err == nil {
			d.view.line("connected to the agentd daemon again: reading the goal again")
			d.wake() // what changed meanwhile was not told
			return nil
		}
		cause = err
	}
	return fmt.Errorf("the agentd daemon is gone: %d tries to connect again failed, the last: %v", reconnectTries, cause)
}

// state reads the session's state.
func (d *driver) state(ctx context.Context) (protocol.State, error) {
	raw, err := d.execute(ctx, protocol.CmdState, &protocol.NoArgs{})
	if err != nil {
		return protocol.State{}, err
	}
	var st protocol.State
	if err := json.Unmarshal(raw, &st); err != nil {
		return protocol.State{}, fmt.Errorf("reading agentd.state: %w", err)
	}
	return st, nil
}
