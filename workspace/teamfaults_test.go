package workspace

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd/agentd/tests/etcdtest"
	"github.com/agentd/agentd/workspace/etcdstore"
	"github.com/agentd/agentd/workspace/storage"
)

// Team mode under the network's faults (docs/team.md, "Faults" and
// "Liveness"), made by etcdtest's proxies in front of real members.

// write sets session name's list to one item, i; its error.
func write(w *Workspace, name string, i int) error {
	_, err := w.Update(name, func(s *Session) (Change, error) {
		s.Todos = items(fmt.Sprint(i))
		return Change{Kind: "todo.set", Todos: true}, nil
	})
	return err
}

// staleNotices counts the store notices of w marking it stale.
func staleNotices(t *testing.T, w *Workspace) *atomic.Int32 {
	var n atomic.Int32
	cancel := w.reg.Subscribe(func(nt Notice) {
		if nt.Workspace == w && nt.Store != nil && nt.Store.Stale {
			n.Add(1)
		}
	})
	t.Cleanup(cancel)
	return &n
}

// alwaysConflicts is a store on which another daemon wrote every session
// just before each commit: every commit is refused as a conflict.
type alwaysConflicts struct{ storage.Interface }

func (s alwaysConflicts) Unwrap() storage.Interface { return s.Interface }

func (s alwaysConflicts) Commit(c *storage.Commit) error {
	fresh, err := s.Get(c.Session)
	if err != nil {
		return err
	}
	c.Fresh = fresh
	return storage.ErrConflict
}

// TestUpdateContended: a change that meets a conflict on every attempt is
// refused with its own code, workspace.contended, not the code of an
// unreachable cluster: etcd answered every time. Nothing is written.
func TestUpdateContended(t *testing.T) {
	r := newRegistry(t, t.TempDir(), func(o *Options) {
		o.WrapStore = func(s storage.Interface) storage.Interface { return alwaysConflicts{s} }
	})
	w := openWorkspace(t, r, folder(t))
	runs := 0
	_, err := w.Update("s", func(s *Session) (Change, error) {
		runs++
		s.Todos = items("a")
		return Change{Kind: "todo.set", Todos: true}, nil
	})
	if errorCode(err) != CodeContended || !errors.Is(err, ErrNotSaved) || !strings.Contains(err.Error(), "kept changing") {
		t.Fatalf("Update on a session that always changed first: %v (code %q), want %s wrapping ErrNotSaved", err, errorCode(err), CodeContended)
	}
	if runs != maxUpdateAttempts {
		t.Fatalf("fn ran %d times, want %d", runs, maxUpdateAttempts)
	}
	if got := mustView(t, w, "s"); got.Revision != 0 {
		t.Fatalf("the session after a refused change: %+v", got)
	}
}

// TestTeamHungMember: one member of three hangs (its client port frozen:
// TCP open, no byte answered) while the cluster stays healthy. Writes
// fail for a while after the freeze, then succeed, 10 in a row, with the
// member still hung; neither daemon's panels are marked stale, nor is
// either taken for gone (its lease kept alive through the others). How
// long the writes failed is logged beside docs/team.md's bound ("Faults":
// 8 s), not asserted: a starved machine delays the prober that finds the
// hung member. Before the shared client's prober, 59 writes of 61 failed
// for the whole minute it hung.
func TestTeamHungMember(t *testing.T) {
	c := etcdtest.Start(t, 3)
	var gone atomic.Int32
	a, b := teamPair(t, c.Endpoints(), func(o *Options) {
		o.OnPeerGone = func(*Workspace, string) { gone.Add(1) }
	})
	staleA, staleB := staleNotices(t, a), staleNotices(t, b)
	if err := write(a, "s", -1); err != nil {
		t.Fatal(err)
	}
	frozen := c.Members[0].Proxy()
	frozen.Freeze()
	start := time.Now()
	var lastFail time.Duration
	var failed, after int
	for i := 0; after < 10; i++ {
		if time.Since(start) > teamHangGuard {
			t.Fatalf("with one member of three hung, writes still fail after %v (%d failed, the last %s after the freeze)", teamHangGuard, failed, lastFail.Round(time.Millisecond))
		}
		if err := write(a, "s", i); err != nil {
			// Unanswered on the hung member: the write was not sent
			// (unavailable) or its outcome is unknown.
			if c := errorCode(err); c != CodeUnavailable && c != CodeOutcomeUnknown {
				t.Fatalf("write %d: %v", i, err)
			}
			failed++
			lastFail, after = time.Since(start), 0
			continue
		}
		after++
	}
	t.Logf("member frozen: %d writes failed, the last %s after the freeze (docs/team.md's bound: 8 s); %d writes in a row succeeded since", failed, lastFail.Round(time.Millisecond), after)
	if n, m := staleA.Load(), staleB.Load(); n != 0 || m != 0 {
		t.Fatalf("panels marked stale %d and %d times with one member hung, want 0", n, m)
	}
	// The lease keep-alives moved to the other members in time: neither
	// daemon took the other for gone (which would pause the goal it drives).
	if n := gone.Load(); n != 0 || !a.Alive("daemon-1") || !b.Alive("daemon-0") {
		t.Fatalf("with one member hung, a daemon was taken for gone (%d times)", n)
	}
	frozen.Restore()
	if err := write(b, "s", 1000); err != nil {
		t.Fatalf("write after the member came back: %v", err)
	}
}

// commitStarts is a store that tells started, without waiting, as each
// commit begins.
type commitStarts struct {
	storage.Interface
	started chan<- struct{}
}

func (s commitStarts) Unwrap() storage.Interface { return s.Interface }

func (s commitStarts) Commit(c *storage.Commit) error {
	select {
	case s.started <- struct{}{}:
	default:
	}
	return s.Interface.Commit(c)
}

// TestTeamStaleHysteresis: one request that fails (its connections reset
// under it) marks nothing stale; an outage of the whole cluster does,
// once sustained, and its end clears the mark.
func TestTeamStaleHysteresis(t *testing.T) {
	c := etcdtest.Start(t, 3)
	started := make(chan struct{}, 1)
	a, _ := teamPair(t, c.Endpoints(), func(o *Options) {
		o.WrapStore = func(s storage.Interface) storage.Interface { return commitStarts{s, started} }
	})
	if err := write(a, "s", 0); err != nil {
		t.Fatal(err)
	}
	status := notices(t, a, "s")
	stale := staleNotices(t, a)
	each := func(f func(p *etcdtest.Proxy)) {
		for _, m := range c.Members {
			f(m.Proxy())
		}
	}
	received := func() (n int64) {
		for _, m := range c.Members {
			n += m.Proxy().Received(etcdtest.ToServer)
		}
		return n
	}
	each((*etcdtest.Proxy).Freeze)
	<-started // the first write's
	done := make(chan error, 1)
	go func() { done <- write(a, "s", 1) }()
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the write did not begin its commit in 30 s")
	}
	// The write is on its way, held by the freeze, once its bytes reached
	// a proxy (a probe's first, at worst: then the write goes on the new
	// connections, and may succeed, as below).
	sent := received()
	waitFor(t, "a request held by the freeze", func() bool { return received() > sent })
	each(func(p *etcdtest.Proxy) { p.Drop() })
	each((*etcdtest.Proxy).Restore)
	// Sent again on the new connections (docs/team.md, "What a write
	// acknowledges"), the write may succeed; else it fails as unanswered.
	if err := <-done; err != nil && errorCode(err) != CodeUnavailable && errorCode(err) != CodeOutcomeUnknown {
		t.Fatalf("the write whose connection was reset: %v, want success, %s or %s", err, CodeUnavailable, CodeOutcomeUnknown)
	}
	// Three probes of the cluster, all answered: nothing stale.
	time.Sleep(3 * time.Second)
	if n := stale.Load(); n != 0 || a.Stale() {
		t.Fatalf("one failed request marked the folder stale (%d notices)", n)
	}
	// A sustained outage (every member hung) is marked, and its end too.
	each((*etcdtest.Proxy).Freeze)
	waitNotice(t, status, func(n Notice) bool { return n.Store != nil && n.Store.Stale })
	each((*etcdtest.Proxy).Restore)
	waitNotice(t, status, func(n Notice) bool { return n.Store != nil && !n.Store.Stale })
	if err := write(a, "s", 2); err != nil {
		t.Fatalf("write after the outage: %v", err)
	}
}

// TestTeamLivenessWhenLeaderDies: a daemon that dies (its connections
// frozen: no keep-alive, no revoke) is taken for gone by the other, alone
// and when the etcd leader dies at the same moment (the new leader extends
// every lease by an election timeout when it takes over). How long that
// takes is measured and logged beside the bound docs/team.md gives; it is
// not asserted: a starved machine delays etcd's lease checks and this
// process's timers alike, so only a hang fails (teamHangGuard). Before,
// docs said 5 s in both cases and 8.2 s was measured.
func TestTeamLivenessWhenLeaderDies(t *testing.T) {
	c := etcdtest.Start(t, 3)
	id := NewTeamID()
	gone := make(chan string, 4)
	ra := newRegistry(t, t.TempDir(), func(o *Options) {
		o.Identity = "watcher"
		o.OnPeerGone = func(_ *Workspace, identity string) { gone <- identity }
	})
	openWorkspace(t, ra, accepted(t, ra, teamFolder(t, id, c.Endpoints())))
	// dies opens the folder as a daemon that reaches the members through
	// proxies of its own, and returns what kills it.
	dies := func(name string) func() {
		var eps []string
		var ps []*etcdtest.Proxy
		for _, m := range c.Members {
			p := etcdtest.NewProxy(t, m.Proxy().Addr())
			ps = append(ps, p)
			eps = append(eps, "http://"+p.Addr())
		}
		r := newRegistry(t, t.TempDir(), func(o *Options) { o.Identity = name })
		openWorkspace(t, r, accepted(t, r, teamFolder(t, id, eps)))
		return func() {
			for _, p := range ps {
				p.Freeze()
			}
		}
	}
	await := func(name string, start time.Time, bound time.Duration) {
		t.Helper()
		select {
		case got := <-gone:
			took := time.Since(start)
			if got != name {
				t.Fatalf("OnPeerGone(%q) %s after the kill, want %q", got, took, name)
			}
			t.Logf("%s taken for gone %s after the kill (docs/team.md's bound: %s)", name, took.Round(time.Millisecond), bound)
		case <-time.After(teamHangGuard):
			t.Fatalf("%s not taken for gone within %s", name, teamHangGuard)
		}
	}
	kill := dies("crashed")
	start := time.Now()
	kill()
	await("crashed", start, etcdstore.LeaseTTL+500*time.Millisecond)

	kill = dies("crashed-with-leader")
	start = time.Now()
	kill()
	c.KillLeader()
	await("crashed-with-leader", start, leaderDeathBound(etcdtest.ElectionTimeout))
}

// leaderDeathBound is how long a daemon's death may take to be seen when
// the etcd leader dies with it, for the members' election timeout et
// (docs/team.md, "Liveness"): up to two election timeouts before a
// follower campaigns, the new leader's extension of every lease by one,
// the lease's TTL, and the half second between etcd's checks of expired
// leases.
func leaderDeathBound(et time.Duration) time.Duration {
	return etcdstore.LeaseTTL + 3*et + 500*time.Millisecond
}
