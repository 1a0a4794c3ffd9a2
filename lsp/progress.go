package lsp

import (
	"context"
	"fmt"
	"time"

	"go.lsp.dev/protocol"

	"github.com/agentd/agentd/commands"
)

// requestTimeout bounds every server→client request (docs/protocol.md §4: never
// wait more than a few seconds for an answer).
const requestTimeout = 3 * time.Second

// progressUpdate is one goal change for a client's work-done progress.
type progressUpdate struct {
	key  string // folder URI + session
	news commands.GoalNews
}

// goalProgress reports an active goal as standard work-done progress
// (docs/protocol.md §4) to a client that declared window.workDoneProgress. It
// runs in its own goroutine, owned by the connection, so that the create
// request never holds up the fan-out.
type goalProgress struct {
	c       *connection
	updates chan progressUpdate
	tokens  map[string]string
	seq     int
}

func newGoalProgress(c *connection) *goalProgress {
	return &goalProgress{c: c, updates: make(chan progressUpdate, 256), tokens: map[string]string{}}
}

// post queues an update without blocking; when the client is that far
// behind, the update is dropped and the next one carries the state.
func (p *goalProgress) post(u progressUpdate) {
	select {
	case p.updates <- u:
	default:
		p.c.log.Warn("goal progress update dropped: client is not reading")
	}
}

func (p *goalProgress) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case u := <-p.updates:
			p.apply(ctx, u)
		}
	}
}

func (p *goalProgress) apply(ctx context.Context, u progressUpdate) {
	tok, has := p.tokens[u.key]
	switch {
	case u.news.Active && !has:
		p.seq++
		tok = fmt.Sprintf("agentd-goal-%d", p.seq)
		callCtx, cancel := context.WithTimeout(ctx, requestTimeout)
		_, err := p.c.rpc.Call(callCtx, "window/workDoneProgress/create", map[string]string{"token": tok})
		cancel()
		if err != nil {
			p.c.log.Info("client did not accept goal progress", "err", err)
			return
		}
		p.tokens[u.key] = tok
		p.send(tok, protocol.WorkDoneProgressBegin{Kind: protocol.WorkDoneProgressKindBegin, Title: "agentd", Message: u.news.Progress})
	case u.news.Active:
		p.send(tok, protocol.WorkDoneProgressReport{Kind: protocol.WorkDoneProgressKindReport, Message: u.news.Progress})
	case has:
		delete(p.tokens, u.key)
		p.send(tok, protocol.WorkDoneProgressEnd{Kind: protocol.WorkDoneProgressKindEnd, Message: u.news.Progress})
	}
}

// send writes $/progress. The params are built here rather than with
// protocol.ProgressParams, whose token marshals only through a pointer.
func (p *goalProgress) send(tok string, value any) {
	if err := p.c.rpc.Notify("$/progress", map[string]any{"token": tok, "value": value}); err != nil {
		p.c.log.Debug("progress not sent", "err", err)
	}
}
