package lsp

import (
	"context"
	"sync"
)

// requestOrder makes the requests of one connection that read or change the
// same state take effect in the order they arrived, while requests on other
// state run alongside (docs/protocol.md §2.2). The state is
// a session of a workspace folder, or a whole folder: a request on the whole
// folder comes after every earlier request on any of its sessions, and every
// later one on any of them comes after it.
//
// The Router takes a ticket on the read goroutine, so tickets are taken in
// arrival order; the request's handler waits for the ticket's turn and marks
// it done when it has run.
type requestOrder struct {
	mu      sync.Mutex
	folders map[string]*folderLine // by folder path; only folders with requests not yet done
}

// folderLine is the queue of one folder: each channel is closed when the
// request it belongs to is done.
type folderLine struct {
	whole    chan struct{}            // the last request on the whole folder; nil when it is done
	sessions map[string]chan struct{} // the last request on each session since whole
}

// ticket is one request's place in its folder's queue.
type ticket struct {
	o               *requestOrder
	folder, session string
	after           []chan struct{} // the requests this one comes after
	done            chan struct{}   // closed by finish
	once            sync.Once
}

// take queues a request on session of folder, or on the whole folder when
// session is "". It must be called in arrival order.
func (o *requestOrder) take(folder, session string) *ticket {
	t := &ticket{o: o, folder: folder, session: session, done: make(chan struct{})}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.folders == nil {
		o.folders = map[string]*folderLine{}
	}
	line := o.folders[folder]
	if line == nil {
		line = &folderLine{sessions: map[string]chan struct{}{}}
		o.folders[folder] = line
	}
	if line.whole != nil {
		t.after = append(t.after, line.whole)
	}
	if session == "" {
		for _, ch := range line.sessions {
			t.after = append(t.after, ch)
		}
		line.whole = t.done
		clear(line.sessions) // later requests come after this one, which comes after these
		return t
	}
	if ch := line.sessions[session]; ch != nil {
		t.after = append(t.after, ch)
	}
	line.sessions[session] = t.done
	return t
}

// wait blocks until every request this one comes after is done, or ctx
// ends. When ctx ends first it returns ctx.Err() and the ticket is done
// as soon as those requests are: the request is not run, and the requests
// after it still wait for the ones before it.
func (t *ticket) wait(ctx context.Context) error {
	for i, ch := range t.after {
		select {
		case <-ch:
		case <-ctx.Done():
			rest := t.after[i:]
			go func() {
				for _, ch := range rest {
					<-ch
				}
				t.finish()
			}()
			return ctx.Err()
		}
	}
	return nil
}

// finish marks the request done: the requests after it may run. A
// request may finish before it returns (a goal check,
// commands.WithOrderRelease); later calls do nothing.
func (t *ticket) finish() { t.once.Do(t.release) }

func (t *ticket) release() {
	o := t.o
	o.mu.Lock()
	defer o.mu.Unlock()
	close(t.done)
	line := o.folders[t.folder]
	switch {
	case line == nil:
	case t.session == "" && line.whole == t.done:
		line.whole = nil
	case t.session != "" && line.sessions[t.session] == t.done:
		delete(line.sessions, t.session)
	}
	if line != nil && line.whole == nil && len(line.sessions) == 0 {
		delete(o.folders, t.folder)
	}
}
