package lsptest

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// Client is a Conn for tests: every wait is bounded by Limit, and the
// Must and Await helpers fail the test instead of returning errors. At the
// test's end it reports a message the server wrote that go.lsp.dev/jsonrpc2
// could not read (Options.Lenient turns that off).
type Client struct {
	*Conn
	T     testing.TB
	Limit time.Duration // bounds every wait; it only turns a hang into a failure
}

// NewClient wraps c for t, with waits bounded by limit.
func NewClient(t testing.TB, c *Conn, limit time.Duration) *Client {
	t.Cleanup(func() {
		if err := c.Violation(); err != nil {
			t.Errorf("%v", err)
		}
	})
	return &Client{Conn: c, T: t, Limit: limit}
}

func (c *Client) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), c.Limit)
}

// Call sends a request and decodes its result into result (may be nil); a
// JSON-RPC error comes back as *Error.
func (c *Client) Call(method string, params, result any) error {
	ctx, cancel := c.ctx()
	defer cancel()
	return c.Conn.CallResult(ctx, method, params, result)
}

// Request sends a request and returns its response (Result or Error).
func (c *Client) Request(method string, params any) (*Message, error) {
	ctx, cancel := c.ctx()
	defer cancel()
	return c.Conn.Call(ctx, method, params)
}

// Exec runs an agentd command with one ARGS object (none when args is nil)
// and decodes its result into result (may be nil); a JSON-RPC error comes
// back as *Error.
func (c *Client) Exec(command string, args, result any) error {
	ctx, cancel := c.ctx()
	defer cancel()
	return c.Conn.Exec(ctx, command, args, result)
}

// MustExec is Exec that fails the test on any error.
func (c *Client) MustExec(command string, args, result any) {
	c.T.Helper()
	if err := c.Exec(command, args, result); err != nil {
		c.T.Fatalf("%s: %s %v: %v", c.o.Name, command, args, err)
	}
}

// MustNotify sends a notification or fails the test.
func (c *Client) MustNotify(method string, params any) {
	c.T.Helper()
	if err := c.Notify(method, params); err != nil {
		c.T.Fatalf("%s: notify %s: %v", c.o.Name, method, err)
	}
}

// Initialize runs initialize and initialized with initOptions (may be nil)
// and folders as workspaceFolders, and returns the initialize result.
func (c *Client) Initialize(initOptions any, folders ...string) map[string]any {
	c.T.Helper()
	return c.MustInit(Init{Folders: folders, Options: initOptions})
}

// InitializeRoot runs initialize and initialized with folder as rootUri
// ("": null) and no workspaceFolders.
func (c *Client) InitializeRoot(folder string, initOptions any) {
	c.T.Helper()
	c.MustInit(Init{RootFolder: folder, Options: initOptions})
}

// MustInit runs initialize and initialized with in, or fails the test.
func (c *Client) MustInit(in Init) map[string]any {
	c.T.Helper()
	ctx, cancel := c.ctx()
	defer cancel()
	res, err := c.Conn.Initialize(ctx, in)
	if err != nil {
		c.T.Fatal(err)
	}
	return res
}

// Await waits for a notification of method whose params satisfy match
// (nil: any), searching those received before too, and returns its params.
func (c *Client) Await(method string, match func(json.RawMessage) bool) json.RawMessage {
	c.T.Helper()
	ctx, cancel := c.ctx()
	defer cancel()
	params, err := c.Conn.Await(ctx, method, match)
	if err != nil {
		c.T.Fatal(err)
	}
	return params
}

// Wait is Conn.Wait bounded by Limit.
func (c *Client) Wait(ch <-chan *Message, what string) (*Message, error) {
	ctx, cancel := c.ctx()
	defer cancel()
	return c.Conn.Wait(ctx, ch, what)
}

// Shutdown sends shutdown and exit, failing the test when shutdown is not
// answered.
func (c *Client) Shutdown() {
	c.T.Helper()
	ctx, cancel := c.ctx()
	defer cancel()
	if err := c.Conn.Shutdown(ctx); err != nil {
		c.T.Fatalf("%s: shutdown: %v", c.o.Name, err)
	}
}

// AwaitClosed waits until the server ends the connection; what names the
// cause in the failure.
func (c *Client) AwaitClosed(what string) {
	c.T.Helper()
	select {
	case <-c.Done():
	case <-time.After(c.Limit):
		c.T.Fatalf("%s: the connection was not closed after %s within %v", c.o.Name, what, c.Limit)
	}
}
