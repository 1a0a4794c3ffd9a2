package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/agentd/agentd/goal"
	"github.com/agentd/agentd/tests/etcdtest"
	"github.com/agentd/agentd/todo"
)

// teamFolder makes a folder whose team file names a new team on eps.
func teamFolder(t testing.TB, id string, eps []string) string {
	t.Helper()
	root := folder(t)
	if err := WriteTeam(root, Team{ID: id, Etcd: eps}); err != nil {
		t.Fatal(err)
	}
	return root
}

// accepted accepts root's team file on r's machine, as its person does
// (agentd team accept), and returns root.
func accepted(t testing.TB, r *Registry, root string) string {
	t.Helper()
	if _, err := r.AcceptTeam(root, ""); err != nil {
		t.Fatal(err)
	}
	return root
}

// teamPair opens one team from two registries (two "machines": own state
// directories, own folders sharing the team file) and returns both.
func teamPair(t *testing.T, eps []string, mods ...func(*Options)) (*Workspace, *Workspace) {
	t.Helper()
	id := NewTeamID()
	var ws []*Workspace
	for i := range 2 {
		r := newRegistry(t, t.TempDir(), append([]func(*Options){func(o *Options) { o.Identity = fmt.Sprintf("daemon-%d", i) }}, mods...)...)
		ws = append(ws, openWorkspace(t, r, accepted(t, r, teamFolder(t, id, eps))))
	}
	return ws[0], ws[1]
}

// notices subscribes to w's registry and returns a channel of its notices
// of session name.
func notices(t testing.TB, w *Workspace, name string) <-chan Notice {
	ch := make(chan Notice, 1000)
	cancel := w.reg.Subscribe(func(n Notice) {
		if n.Workspace == w && (n.Store != nil || n.Session.Name == name) {
			ch <- n
		}
	})
	t.Cleanup(cancel)
	return ch
}

// teamHangGuard bounds the team tests' waits on events (a notice, a
// write's answer, a peer taken for gone): it only turns a hang into a
// failure, so it is long. The embedded etcd members run in this
// race-instrumented process, which a loaded 2-core machine starves for
// seconds at a time.
const teamHangGuard = 60 * time.Second

func waitNotice(t testing.TB, ch <-chan Notice, ok func(Notice) bool) Notice {
	t.Helper()
	deadline := time.After(teamHangGuard)
	for {
		select {
		case n := <-ch:
			if ok(n) {
				return n
			}
		case <-deadline:
			t.Fatalf("no matching notice within %v", teamHangGuard)
		}
	}
}

func TestTeamSharesOneStateAcrossDaemons(t *testing.T) {
	c := etcdtest.Start(t, 1)
	a, b := teamPair(t, c.Endpoints())
	if a.Root() == b.Root() {
		t.Fatal("the two daemons must serve two clones")
	}
	seen := notices(t, b, "s")
	setTodos(t, a, "s", items("one", "two"))
	n := waitNotice(t, seen, func(n Notice) bool { return n.Store == nil })
	if !n.Change.Todos || n.Change.Kind != "todo.set" || n.Session.Revision != 1 || len(n.Session.Todos) != 2 {
		t.Fatalf("notice on the other daemon = %+v, want todo.set of revision 1 with 2 items", n)
	}
	if got := mustView(t, b, "s"); got.Revision != 1 || got.Todos[1].Title != "two" {
		t.Fatalf("the other daemon reads %+v", got)
	}
	// Its own write goes on from what the first wrote.
	setTodos(t, b, "s", items("three"))
	if got := mustHistory(t, a, "s", 0); len(got) != 2 || got[0].Seq != 2 || got[1].Seq != 1 {
		t.Fatalf("history read by the first daemon = %v, want seqs [2 1]", seqs(got))
	}
	list, err := a.Sessions()
	if err != nil || len(list) != 1 || list[0].Revision != 2 {
		t.Fatalf("Sessions = %+v, %v", list, err)
	}
}

// TestTeamCompareAndSet: two daemons increment one counter (the title of
// the list's only item) 250 times each, concurrently; every increment is
// kept, so the update function ran again on what the other daemon wrote.
func TestTeamCompareAndSet(t *testing.T) {
	c := etcdtest.Start(t, 1)
	a, b := teamPair(t, c.Endpoints())
	seen := notices(t, a, "n")
	const each = 250
	var wg sync.WaitGroup
	var runs [2]int
	for i, w := range []*Workspace{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				_, err := w.Update("n", func(s *Session) (Change, error) {
					runs[i]++
					n := 0
					if len(s.Todos) == 1 {
						fmt.Sscan(s.Todos[0].Title, &n)
					}
					s.Todos = items(fmt.Sprint(n + 1))
					return Change{Kind: "todo.set", Todos: true}, nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	// b's last write reaches a's cache through its watch.
	if mustView(t, a, "n").Revision < 2*each {
		waitNotice(t, seen, func(n Notice) bool { return n.Session.Revision == 2*each })
	}
	got := mustView(t, a, "n")
	if got.Todos[0].Title != fmt.Sprint(2*each) || got.Revision != 2*each {
		t.Fatalf("after %d increments: %q at revision %d", 2*each, got.Todos[0].Title, got.Revision)
	}
	t.Logf("update functions ran %d times for %d updates", runs[0]+runs[1], 2*each)
	if ev := mustHistory(t, b, "n", 1); len(ev) != 1 || ev[0].Seq != 2*each {
		t.Fatalf("newest event = %+v, want seq %d", ev, 2*each)
	}
}

// TestTeamLargestList: a todo list at todo.MaxListBytes, with its history
// event (the list after and before it), fits one etcd request, and the
// history stays bounded by bytes.
func TestTeamLargestList(t *testing.T) {
	c := etcdtest.Start(t, 1)
	a, b := teamPair(t, c.Endpoints())
	seen := notices(t, b, "big")
	big := make([]todo.Item, todo.MaxItems)
	for i := range big {
		big[i] = todo.Item{Title: fmt.Sprintf("%03d %s", i, strings.Repeat("€", 420)), Status: todo.Pending}
	}
	if _, err := todo.Normalize(big); err != nil {
		t.Fatalf("the test list is not a valid list: %v", err)
	}
	for range 20 { // 20 events of ~256 KiB: over MaxHistoryBytes
		if _, err := a.Update("big", func(s *Session) (Change, error) {
			s.Todos = big
			// As agentd.todo.set stores it: the list, and the list before
			// it in the event (docs/runtime.md §6).
			return Change{Kind: "todo.set", Todos: true, Payload: record{map[string]any{"items": big}}, Before: record{map[string]any{"items": big}}}, nil
		}); err != nil {
			t.Fatalf("storing the largest list: %v", err)
		}
	}
	waitNotice(t, seen, func(n Notice) bool { return n.Session.Revision == 20 })
	s := mustView(t, b, "big")
	if len(s.Todos) != todo.MaxItems || s.Revision != 20 {
		t.Fatalf("other daemon reads %d items at revision %d", len(s.Todos), s.Revision)
	}
	var kept []Event
	for before := uint64(0); ; {
		page := mustHistoryPage(t, b, "big", 100, before)
		kept = append(kept, page.Events...)
		if !page.More {
			break
		}
		before = page.Events[len(page.Events)-1].Seq
	}
	var total int
	for _, e := range kept {
		total += len(e.Payload) + len(e.Before)
	}
	// At the largest list an event holds it twice (payload and before), so
	// the 7 newest are kept at least (docs/reliability.md, Limits).
	if n := len(kept); kept[0].Seq != 20 || n < 7 || n >= 20 || total > MaxHistoryBytes {
		t.Fatalf("history keeps %d of 20 events of ~512 KiB (%d bytes of payload and before): not bounded by MaxHistoryBytes as bbolt is", n, total)
	}
}

// TestTeamHistoryBound: the bound by count holds whichever daemon appends.
func TestTeamHistoryBound(t *testing.T) {
	old := maxHistory
	maxHistory = 5
	t.Cleanup(func() { maxHistory = old })
	c := etcdtest.Start(t, 1)
	a, b := teamPair(t, c.Endpoints())
	for i := range 12 {
		w := a
		if i%3 == 0 {
			w = b
		}
		setTodos(t, w, "h", items(fmt.Sprint(i)))
	}
	got := mustHistory(t, a, "h", 0)
	if want := []uint64{12, 11, 10, 9, 8}; fmt.Sprint(seqs(got)) != fmt.Sprint(want) {
		t.Fatalf("history = %v, want %v", seqs(got), want)
	}
}

// TestTeamLiveness: each daemon holds a live key; when one closes the
// folder (or dies: its lease expires) the other is told, once.
func TestTeamLiveness(t *testing.T) {
	c := etcdtest.Start(t, 1)
	gone := make(chan string, 4)
	id := NewTeamID()
	ra := newRegistry(t, t.TempDir(), func(o *Options) {
		o.Identity = "a"
		o.OnPeerGone = func(w *Workspace, identity string) { gone <- identity }
	})
	a := openWorkspace(t, ra, accepted(t, ra, teamFolder(t, id, c.Endpoints())))
	rb := NewRegistry(Options{StateDir: t.TempDir(), Identity: "b"})
	b, err := rb.Open(accepted(t, rb, teamFolder(t, id, c.Endpoints())))
	if err != nil {
		t.Fatal(err)
	}
	if !a.Alive("b") || !b.Alive("a") || a.Alive("c") {
		t.Fatalf("live daemons: a sees b %v, b sees a %v, a sees c %v", a.Alive("b"), b.Alive("a"), a.Alive("c"))
	}
	b.Release()
	rb.Close()
	select {
	case id := <-gone:
		if id != "b" {
			t.Fatalf("OnPeerGone(%q), want b", id)
		}
	case <-time.After(teamHangGuard):
		t.Fatal("the other daemon was not told that b is gone")
	}
	if a.Alive("b") {
		t.Fatal("b still reads as alive")
	}
}

// TestTeamUnavailable: with the cluster down, writes fail with
// workspace.unavailable and are not kept; reads answer the last state,
// marked stale; once it is back, writes go through and the other daemon
// converges.
func TestTeamUnavailable(t *testing.T) {
	c := etcdtest.Start(t, 1)
	a, b := teamPair(t, c.Endpoints())
	setTodos(t, a, "s", items("before"))
	status := notices(t, a, "s")
	c.Stop()
	_, err := a.Update("s", func(s *Session) (Change, error) {
		s.Todos = items("during")
		return Change{Kind: "todo.set", Todos: true}, nil
	})
	if errorCode(err) != CodeUnavailable {
		t.Fatalf("write with etcd down: %v (code %q), want %s", err, errorCode(err), CodeUnavailable)
	}
	waitNotice(t, status, func(n Notice) bool { return n.Store != nil && n.Store.Stale })
	if !a.Stale() {
		t.Fatal("Stale() is false with etcd down")
	}
	if s := mustView(t, a, "s"); s.Todos[0].Title != "before" || s.Revision != 1 {
		t.Fatalf("read with etcd down = %+v, want the last state", s)
	}
	c.Restart()
	waitNotice(t, status, func(n Notice) bool { return n.Store != nil && !n.Store.Stale })
	seen := notices(t, b, "s")
	setTodos(t, a, "s", items("after"))
	waitNotice(t, seen, func(n Notice) bool { return n.Store == nil && n.Session.Revision == 2 })
	if s := mustView(t, b, "s"); s.Todos[0].Title != "after" {
		t.Fatalf("other daemon reads %+v after the cluster came back", s)
	}
}

// TestTeamMemberLoss: one member of three is stopped during writes; every
// acknowledged write is kept. A write that meets the election after the
// stop may fail (workspace.unavailable, or workspace.outcome_unknown when
// it was sent to the stopped member and no answer came: not acknowledged,
// though etcd may have applied it); the writes after it go through with 2
// of 3 members.
func TestTeamMemberLoss(t *testing.T) {
	c := etcdtest.Start(t, 3)
	a, b := teamPair(t, c.Endpoints())
	seen := notices(t, b, "m")
	var acked []int
	for i := range 60 {
		if i == 20 {
			c.Members[0].Stop()
		}
		_, err := a.Update("m", func(s *Session) (Change, error) {
			s.Todos = items(fmt.Sprint(i))
			return Change{Kind: "todo.set", Todos: true, Actor: goal.User, Payload: record{map[string]int{"i": i}}}, nil
		})
		if err == nil {
			acked = append(acked, i)
		} else if c := errorCode(err); c != CodeUnavailable && c != CodeOutcomeUnknown {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if len(acked) == 0 || acked[len(acked)-1] != 59 {
		t.Fatalf("acknowledged writes %v: the last ones must go through with 2 of 3 members up", acked)
	}
	kept := map[int]bool{}
	for _, ev := range mustHistory(t, b, "m", 100) {
		var p struct{ I int }
		if err := json.Unmarshal(ev.Payload, &p); err != nil {
			t.Fatalf("event %d: %v", ev.Seq, err)
		}
		kept[p.I] = true
	}
	for _, i := range acked {
		if !kept[i] {
			t.Fatalf("acknowledged write %d is not in the history read through the other daemon (acknowledged %v)", i, acked)
		}
	}
	// The other daemon learns of the writes through its watch, after they
	// were acknowledged here: wait for the last one to reach it.
	waitNotice(t, seen, func(n Notice) bool {
		return n.Store == nil && len(n.Session.Todos) == 1 && n.Session.Todos[0].Title == "59"
	})
	if s := mustView(t, b, "m"); s.Todos[0].Title != "59" {
		t.Fatalf("the other daemon reads %q, want the last acknowledged write, 59", s.Todos[0].Title)
	}
}

// TestTeamTLS: a cluster that requires client certificates is served with
// the CA, certificate and key of TeamOptions, and refused without them.
func TestTeamTLS(t *testing.T) {
	certs := etcdtest.NewTLS(t)
	c := etcdtest.Start(t, 1, etcdtest.WithTLS(certs))
	root := teamFolder(t, NewTeamID(), c.Endpoints())
	good := newRegistry(t, t.TempDir(), func(o *Options) {
		o.Team = TeamOptions{CACert: certs.CAFile, Cert: certs.ClientCert, Key: certs.ClientKey}
	})
	w := openWorkspace(t, good, accepted(t, good, root))
	setTodos(t, w, "s", items("secure"))
	bad := newRegistry(t, t.TempDir(), func(o *Options) { o.Team = TeamOptions{CACert: certs.CAFile} })
	if _, err := bad.Open(accepted(t, bad, root)); errorCode(err) != CodeUnavailable {
		t.Fatalf("open without a client certificate: %v, want %s", err, CodeUnavailable)
	}
}

// TestTeamWatchBehindCompaction: a daemon cut off from the cluster while
// the other writes and the history of revisions is compacted resumes its
// watch below the compaction: it re-reads the sessions and tells its
// subscribers the newest state.
func TestTeamWatchBehindCompaction(t *testing.T) {
	c := etcdtest.Start(t, 3)
	id := NewTeamID()
	eps := c.Endpoints()
	ra := newRegistry(t, t.TempDir(), func(o *Options) { o.Team.Endpoints = eps[1:] })
	a := openWorkspace(t, ra, accepted(t, ra, teamFolder(t, id, eps)))
	rb := newRegistry(t, t.TempDir(), func(o *Options) { o.Team.Endpoints = eps[:1] })
	b := openWorkspace(t, rb, accepted(t, rb, teamFolder(t, id, eps)))
	seen := notices(t, b, "s")
	setTodos(t, a, "s", items("1"))
	waitNotice(t, seen, func(n Notice) bool { return n.Store == nil && n.Session.Revision == 1 })

	c.Members[0].Stop() // b's only member
	c.AwaitLeader()
	for i := 2; i <= 5; i++ {
		setTodos(t, a, "s", items(fmt.Sprint(i)))
	}
	setTodos(t, a, "other", items("later")) // the compaction goes past s's last write
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps[1:], DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Compact(ctx, resp.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	c.Restart()
	n := waitNotice(t, seen, func(n Notice) bool { return n.Store == nil && n.Session.Revision == 5 })
	if !n.Change.Todos || n.Session.Todos[0].Title != "5" || n.Change.Kind != "todo.set" {
		t.Fatalf("notice after the re-read: %+v", n)
	}
	if s := mustView(t, b, "s"); s.Revision != 5 {
		t.Fatalf("b reads revision %d, want 5", s.Revision)
	}
}

// TestTeamOpenUnreachable: a team folder whose etcd does not answer fails
// to open with workspace.unavailable, and no client is told of a stale
// store, since it never served a state.
func TestTeamOpenUnreachable(t *testing.T) {
	root := teamFolder(t, NewTeamID(), []string{"http://127.0.0.1:1"})
	r := newRegistry(t, t.TempDir())
	var notices atomic.Int32
	defer r.Subscribe(func(n Notice) {
		if n.Store != nil {
			notices.Add(1)
		}
	})()
	_, err := r.Open(accepted(t, r, root))
	if errorCode(err) != CodeUnavailable || !strings.Contains(err.Error(), "opening the team state failed") {
		t.Fatalf("open with etcd unreachable: %v, want %s", err, CodeUnavailable)
	}
	if n := notices.Load(); n != 0 {
		t.Errorf("a folder that never opened published %d store notices, want 0", n)
	}
}

// TestTeamAuth: a cluster with authentication on serves the user and
// password of TeamOptions (over TLS: credentials never go over plain http,
// TestTeamCredentialsNotInClear), and refuses a wrong password with
// workspace.unavailable naming etcd's reason.
func TestTeamAuth(t *testing.T) {
	certs := etcdtest.NewTLS(t)
	c := etcdtest.Start(t, 1, etcdtest.WithTLS(certs))
	withCert := TeamOptions{CACert: certs.CAFile, Cert: certs.ClientCert, Key: certs.ClientKey}
	tc, err := teamTLS(withCert)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, TLS: tc})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, step := range []func() error{
		func() error { _, err := cli.RoleAdd(ctx, "root"); return err },
		func() error { _, err := cli.UserAdd(ctx, "root", "s3cret"); return err },
		func() error { _, err := cli.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := cli.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatalf("enabling etcd authentication: %v", err)
		}
	}
	root := teamFolder(t, NewTeamID(), c.Endpoints())
	user := func(password string) func(o *Options) {
		return func(o *Options) { o.Team, o.Team.User, o.Team.Password = withCert, "root", password }
	}
	good := newRegistry(t, t.TempDir(), user("s3cret"))
	setTodos(t, openWorkspace(t, good, accepted(t, good, root)), "s", items("authenticated"))
	bad := newRegistry(t, t.TempDir(), user("wrong"))
	_, err = bad.Open(accepted(t, bad, root))
	if errorCode(err) != CodeUnavailable || !strings.Contains(err.Error(), "authentication failed") {
		t.Fatalf("open with a wrong password: %v, want %s naming the authentication failure", err, CodeUnavailable)
	}
}
