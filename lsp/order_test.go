package lsp

import (
	"context"
	"testing"
	"time"
)

// runnable reports whether every request t comes after is done, so that
// t.wait would return at once.
func runnable(t *ticket) bool {
	for _, ch := range t.after {
		select {
		case <-ch:
		default:
			return false
		}
	}
	return true
}

// waitTurn fails the test unless t's turn comes within a bound that only
// guards against a hang.
func waitTurn(tb testing.TB, t *ticket, what string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := t.wait(ctx); err != nil {
		tb.Fatalf("%s: its turn did not come: %v", what, err)
	}
}

// TestOrderOneSessionInArrivalOrder: requests on one session run one at a
// time in the order their tickets were taken.
func TestOrderOneSessionInArrivalOrder(t *testing.T) {
	var o requestOrder
	a, b, c := o.take("/f", "s"), o.take("/f", "s"), o.take("/f", "s")
	if !runnable(a) || runnable(b) || runnable(c) {
		t.Fatalf("runnable = %v %v %v, want only the first", runnable(a), runnable(b), runnable(c))
	}
	a.finish()
	if !runnable(b) || runnable(c) {
		t.Fatalf("after the first is done: runnable = %v %v, want the second only", runnable(b), runnable(c))
	}
	b.finish()
	waitTurn(t, c, "third request")
	c.finish()
	if len(o.folders) != 0 {
		t.Fatalf("queues left after every request is done: %v", o.folders)
	}
}

// TestOrderOtherStateRunsAlongside: requests on another session or another
// folder do not wait.
func TestOrderOtherStateRunsAlongside(t *testing.T) {
	var o requestOrder
	first := o.take("/f", "s")
	for _, other := range []*ticket{o.take("/f", "t"), o.take("/g", "s"), o.take("/h", "")} {
		if !runnable(other) {
			t.Fatalf("a request on %s %q waits for one on /f \"s\"", other.folder, other.session)
		}
	}
	first.finish()
}

// TestOrderWholeFolder: a request on the whole folder comes after every
// earlier request on its sessions, and later requests on any of its
// sessions come after it.
func TestOrderWholeFolder(t *testing.T) {
	var o requestOrder
	s, u := o.take("/f", "s"), o.take("/f", "u")
	whole := o.take("/f", "")
	later, elsewhere := o.take("/f", "v"), o.take("/g", "s")
	if runnable(whole) || runnable(later) || !runnable(elsewhere) {
		t.Fatalf("runnable whole %v, later %v, other folder %v; want false, false, true", runnable(whole), runnable(later), runnable(elsewhere))
	}
	s.finish()
	if runnable(whole) {
		t.Fatal("the folder-wide request runs before every earlier session request is done")
	}
	u.finish()
	waitTurn(t, whole, "folder-wide request")
	if runnable(later) {
		t.Fatal("a later session request runs before the folder-wide one is done")
	}
	whole.finish()
	waitTurn(t, later, "request after the folder-wide one")
	later.finish()
	elsewhere.finish()
	if len(o.folders) != 0 {
		t.Fatalf("queues left after every request is done: %v", o.folders)
	}
}

// TestOrderCancelledWhileQueued: a request cancelled while it waits returns
// at once without running; the request after it still waits for the one
// before it, and gets its turn when that one is done.
func TestOrderCancelledWhileQueued(t *testing.T) {
	var o requestOrder
	a, b, c := o.take("/f", "s"), o.take("/f", "s"), o.take("/f", "s")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.wait(ctx); err != context.Canceled {
		t.Fatalf("wait of a cancelled queued request = %v, want context.Canceled", err)
	}
	if runnable(c) {
		t.Fatal("the request after a cancelled one runs before the one before it is done")
	}
	a.finish()
	waitTurn(t, c, "request after a cancelled one")
	c.finish()
	if len(o.folders) != 0 {
		t.Fatalf("queues left after every request is done: %v", o.folders)
	}
}
