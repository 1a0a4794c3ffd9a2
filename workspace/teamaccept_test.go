package workspace

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentd/agentd/tests/etcdtest"
	"github.com/agentd/agentd/workspace/boltstore"
)

// countConns listens on 127.0.0.1 and counts the connections made to it.
func countConns(t *testing.T) (url string, conns *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	conns = new(atomic.Int64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			c.Close()
		}
	}()
	return ln.Addr().String(), conns
}

// TestTeamFileNotAccepted: a folder whose team file this machine did not
// accept is served from its bbolt file and nothing dials the endpoint; the
// notice says so; accepting serves it from the team at the next open; one
// byte more in the file asks again; a file that cannot be used is reported,
// not accepted.
func TestTeamFileNotAccepted(t *testing.T) {
	addr, conns := countConns(t)
	root := teamFolder(t, NewTeamID(), []string{"http://" + addr})
	r := newRegistry(t, t.TempDir())
	w := openWorkspace(t, r, root)
	setTodos(t, w, "s", items("local"))
	if _, bolt := w.store.(*boltstore.Store); !bolt {
		t.Fatal("a folder with a team file not accepted is served by a team store")
	}
	n, err := r.TeamFileNotice(root)
	if err != nil || n == nil || n.Status != TeamFilePending || n.Endpoints[0] != "http://"+addr || len(n.SHA256) != 64 {
		t.Fatalf("notice %+v, %v; want pending with the file's endpoint and hash", n, err)
	}
	if st, err := StatusOf(r.opts, root); err != nil || st.Store != "bbolt" || st.TeamFile == nil {
		t.Fatalf("StatusOf = %+v, %v; want bbolt and the notice, nothing dialed", st, err)
	}
	if _, err := r.AcceptTeam(root, strings.Repeat("0", 64)); errorCode(err) != "args.invalid" {
		t.Fatalf("accepting another hash: %v, want args.invalid", err)
	}

	path := filepath.Join(root, filepath.FromSlash(TeamFile))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if n2, _ := r.TeamFileNotice(root); n2 == nil || n2.SHA256 == n.SHA256 {
		t.Fatalf("after one more byte: notice %+v, want pending with another hash", n2)
	}
	if err := os.WriteFile(path, []byte(`{"id":"x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if n3, _ := r.TeamFileNotice(root); n3 == nil || n3.Status != TeamFileInvalid || !strings.Contains(n3.Error, "not a lowercase UUID") {
		t.Fatalf("an unusable file: notice %+v, want invalid naming the problem", n3)
	}
	if _, err := r.AcceptTeam(root, ""); errorCode(err) != "args.invalid" {
		t.Fatalf("accepting an unusable file: %v, want args.invalid", err)
	}
	if c := conns.Load(); c != 0 {
		t.Fatalf("the endpoint of a file not accepted got %d connections", c)
	}
}

// TestTeamAcceptReopens: accepting the team file of a folder open from its
// bbolt file retires that workspace, tells its subscribers the store is
// fresh, and the next Open is served from the team; the old store closes
// at its last Release.
func TestTeamAcceptReopens(t *testing.T) {
	c := etcdtest.Start(t, 1)
	id := NewTeamID()
	ra := newRegistry(t, t.TempDir())
	setTodos(t, openWorkspace(t, ra, accepted(t, ra, teamFolder(t, id, c.Endpoints()))), "s", items("from the team"))

	root := teamFolder(t, id, c.Endpoints())
	r := newRegistry(t, t.TempDir())
	old := openWorkspace(t, r, root)
	if s := mustView(t, old, "s"); len(s.Todos) != 0 {
		t.Fatalf("before accepting the clone reads %v, want its own empty list", s.Todos)
	}
	seen := notices(t, old, "s")
	res, err := r.AcceptTeam(root, "")
	if err != nil || !res.Reopened || res.Team.ID != id {
		t.Fatalf("AcceptTeam = %+v, %v; want the folder reopened", res, err)
	}
	if n := waitNotice(t, seen, func(n Notice) bool { return n.Store != nil }); n.Store.Stale {
		t.Fatalf("store notice %+v, want not stale", n.Store)
	}
	if !old.Retired() {
		t.Fatal("the workspace open before accepting is not retired")
	}
	w := openWorkspace(t, r, root)
	if w == old || w.team() == nil {
		t.Fatal("Open after accepting did not give a team store")
	}
	if s := mustView(t, w, "s"); len(s.Todos) != 1 || s.Todos[0].Title != "from the team" {
		t.Fatalf("after accepting the clone reads %v, want the team's list", s.Todos)
	}
	old.Release()
	if _, err := old.View("s"); err == nil {
		t.Fatal("the retired store is still open after its last Release")
	}
}

// TestTeamCredentialsNotInClear: with credentials or TLS settings, an
// http:// endpoint is refused with args.invalid naming the fix, before
// anything is dialed.
func TestTeamCredentialsNotInClear(t *testing.T) {
	addr, conns := countConns(t)
	root := teamFolder(t, NewTeamID(), []string{"http://" + addr})
	for _, o := range []TeamOptions{
		{User: "root", Password: "s3cret"},
		{CACert: "/nonexistent/ca.pem"},
		{Cert: "c.pem", Key: "k.pem"},
		{Password: "s3cret", Endpoints: []string{"https://127.0.0.1:1", "http://" + addr}},
	} {
		// Accepted before this machine had these settings: accepting with
		// them is refused too (TestTeamAcceptRefusesWhatWouldNotOpen).
		stateDir := t.TempDir()
		accepted(t, newRegistry(t, stateDir), root)
		r := newRegistry(t, stateDir, func(opts *Options) { opts.Team = o })
		_, err := r.Open(root)
		if errorCode(err) != "args.invalid" || !strings.Contains(err.Error(), "use https:// endpoints, or drop the credentials") {
			t.Fatalf("open with %+v: %v; want args.invalid naming the fix", o, err)
		}
	}
	if _, err := InitTeam(Options{StateDir: t.TempDir(), Team: TeamOptions{User: "u"}}, folder(t), []string{"http://" + addr}); errorCode(err) != "args.invalid" {
		t.Fatalf("team init with a user and an http endpoint: %v, want args.invalid", err)
	}
	if c := conns.Load(); c != 0 {
		t.Fatalf("the http endpoint got %d connections", c)
	}
}

// TestTeamFileLinkedOutside: a team file that is a symbolic link, or that
// lies in a linked .agentd folder leading out of the checkout, is not read:
// a repository cannot have agentd read (and show the model) a file of the
// person's elsewhere. It is reported as a team file that cannot be used.
func TestTeamFileLinkedOutside(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "id.json")
	if err := os.WriteFile(secret, []byte(`{"id":"TOPSECRET-api-key-123"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := newRegistry(t, t.TempDir())
	linkFile := t.TempDir()
	if err := os.MkdirAll(filepath.Join(linkFile, ".agentd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(linkFile, filepath.FromSlash(TeamFile))); err != nil {
		t.Fatal(err)
	}
	linkDir := t.TempDir()
	if err := os.Symlink(filepath.Dir(secret), filepath.Join(linkDir, ".agentd")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(secret, filepath.Join(filepath.Dir(secret), "team.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(filepath.Dir(secret), "team.json"), secret); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{linkFile, linkDir} {
		n, err := r.TeamFileNotice(root)
		if err != nil || n == nil || n.Status != TeamFileInvalid || !strings.Contains(n.Error, "leads out of the folder") || strings.Contains(n.Error, "TOPSECRET") {
			t.Errorf("%s: notice %+v, %v; want invalid, the file not read", root, n, err)
		}
	}
}

// TestTeamAcceptRefusesWhatWouldNotOpen: accepting a team file whose
// endpoints this machine would refuse to dial (plain http:// with a
// password set) is refused too, nothing recorded: accepting it said the
// credentials would go there and left a folder that never opens.
func TestTeamAcceptRefusesWhatWouldNotOpen(t *testing.T) {
	addr, conns := countConns(t)
	root := teamFolder(t, NewTeamID(), []string{"http://" + addr})
	stateDir := t.TempDir()
	r := newRegistry(t, stateDir, func(o *Options) { o.Team.User, o.Team.Password = "root", "s3cret" })
	if _, err := r.AcceptTeam(root, ""); errorCode(err) != "args.invalid" || !strings.Contains(err.Error(), "plain http://") {
		t.Fatalf("accepting an http:// team with a password set: %v, want args.invalid naming plain http://", err)
	}
	if a := acceptanceOf(stateDir, root); a != nil {
		t.Fatalf("acceptance recorded: %+v", a)
	}
	if n := conns.Load(); n != 0 {
		t.Fatalf("%d connections to the endpoint", n)
	}
}
