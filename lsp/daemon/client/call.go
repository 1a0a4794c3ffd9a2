package client

// This file is the one-shot client of the shell commands (Call) and the
// rebuilding of a daemon's coded errors.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/agentd/agentd/commands/protocol"
	"github.com/agentd/agentd/lsp/jsonrpc"
)

// CallWaits bound how long Call waits for a daemon's answers. A zero
// field is the one of DefaultCallWaits.
type CallWaits struct {
	Begin   time.Duration // for the answer to initialize
	Command time.Duration // for the answer to the command
}

// DefaultCallWaits are the shell commands' bounds (docs/shared-daemon.md,
// "Troubleshooting"): 5 s for initialize, 30 s for a command, which may
// wait about a second for a file lock.
var DefaultCallWaits = CallWaits{Begin: 5 * time.Second, Command: 30 * time.Second}

// SilentError is Call's or Forward's error when a daemon
// accepted the connection but did not answer What within Wait: it is
// stopped (SIGSTOP) or stuck.
type SilentError struct {
	What string // "initialize" or the command
	Wait time.Duration
	// MayHaveRun: the command was sent, and may or may not have run.
	MayHaveRun bool
}

func (e *SilentError) Error() string {
	msg := fmt.Sprintf("the daemon accepted the connection but did not answer %s within %v", e.What, e.Wait)
	if e.MayHaveRun {
		msg += "; the command may or may not have run"
	}
	return msg
}

// Call runs one command through a daemon connection, as a short LSP
// session (OpenSession with folder, an absolute path, and session when set;
// Session.Execute; Session.Close), waiting at most waits for the answers.
// It closes conn.
//
// When the session cannot begin, the error wraps ErrNoDaemon: the command
// was not sent. A daemon that does not answer in time gives a
// *SilentError. A refusal of the command comes back as a
// *protocol.Error with the code and data the daemon sent
// (protocol.ErrorCode works on it); other JSON-RPC errors as an error with
// the daemon's message.
func Call(ctx context.Context, conn io.ReadWriteCloser, folder, session string, command protocol.CommandID, args any, waits CallWaits) (json.RawMessage, error) {
	waits.Begin = cmp.Or(waits.Begin, DefaultCallWaits.Begin)
	waits.Command = cmp.Or(waits.Command, DefaultCallWaits.Command)
	beginCtx, cancel := context.WithTimeout(ctx, waits.Begin)
	s, err := OpenSession(beginCtx, conn, SessionOptions{Folder: folder, Session: session, ClientName: "agentd-cli"})
	cancel()
	if err != nil {
		if ctx.Err() == nil && errors.Is(beginCtx.Err(), context.DeadlineExceeded) {
			return nil, &SilentError{What: "initialize", Wait: waits.Begin}
		}
		return nil, err
	}
	cmdCtx, cancel := context.WithTimeout(ctx, waits.Command)
	defer cancel()
	res, err := s.Execute(cmdCtx, command, args)
	if err != nil && ctx.Err() == nil && errors.Is(cmdCtx.Err(), context.DeadlineExceeded) {
		s.end() // no polite end with a daemon that does not answer
		return nil, &SilentError{What: string(command), Wait: waits.Command, MayHaveRun: true}
	}
	s.Close()
	return res, err
}

// commandError rebuilds the command error a daemon answered: a JSON-RPC
// error with data.code becomes a *protocol.Error carrying that code, its
// message, and the rest of data.
func commandError(err error) error {
	var e *jsonrpc.Error
	if !errors.As(err, &e) {
		return err
	}
	var data map[string]any
	switch d := e.Data.(type) {
	case json.RawMessage:
		_ = json.Unmarshal(d, &data)
	case map[string]any:
		data = d
	}
	code, _ := data["code"].(string)
	if code == "" {
		return errors.New(e.Message)
	}
	rest := map[string]any{}
	for k, v := range data {
		if k != "code" {
			rest[k] = v
		}
	}
	if len(rest) == 0 {
		rest = nil
	}
	return &protocol.Error{Code: code, Msg: e.Message, Data: rest}
}
