package tests

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentd/agentd/tests/etcdtest"
	"github.com/agentd/agentd/tests/lsptest"
)

// End-to-end tests of the trust rules of team mode (docs/team.md,
// "Accepting a team file" and "Credentials"): a team file that came with a
// checkout is not dialed before this machine's person accepts it, and etcd
// credentials go only to endpoints that person chose, never over http://.

// countingListener is a plain TCP listener on 127.0.0.1 that counts the
// connections made to it and the bytes they sent; it answers nothing.
type countingListener struct {
	ln    net.Listener
	conns atomic.Int64
	bytes atomic.Int64
}

func listenCounting(t *testing.T) *countingListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &countingListener{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.conns.Add(1)
			go func() {
				defer c.Close()
				n, _ := io.Copy(io.Discard, c)
				l.bytes.Add(n)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return l
}

func (l *countingListener) url(scheme string) string { return scheme + "://" + l.ln.Addr().String() }

// untouched fails the test when anything connected to l.
func (l *countingListener) untouched(t *testing.T) {
	t.Helper()
	if n, b := l.conns.Load(), l.bytes.Load(); n != 0 || b != 0 {
		t.Fatalf("the endpoint %s got %d connections and %d bytes, want none", l.url("tcp"), n, b)
	}
}

// teamFileNotice is agentd.state's teamFile.
type teamFileNotice struct {
	Status, Path, ID, SHA256, Accept, Error string
	Endpoints                               []string
}

func teamFileSHA(t *testing.T, e *env) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(e.ws, ".agentd", "team.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// TestTeamCloneNotDialedUntilAccepted: a clone whose committed team.json
// names an endpoint nobody on this machine chose is never dialed; the
// folder works on this machine's state, and agentd state, goal status,
// team status, agentd.state's teamFile and the hook's first context (once)
// say how to accept it.
func TestTeamCloneNotDialedUntilAccepted(t *testing.T) {
	t.Parallel()
	l := listenCounting(t)
	e := newEnv(t)
	e.useDaemon()
	writeUnacceptedTeamFile(t, testTeamID, []string{l.url("http")}, e)
	line := "Team file .agentd/team.json (etcd " + l.url("http") + ") is not accepted on this machine: agentd team accept"

	if out, errOut, code := e.cli("state", "--workspace", e.ws); code != 0 || !strings.Contains(out, line) {
		t.Fatalf("agentd state on a fresh clone: exit %d, %q %q; want the local state and %q", code, out, errOut, line)
	}
	if _, errOut, code := e.cli("tool", "TodoList", `{"todos":[{"title":"local","status":"pending"}]}`, "--workspace", e.ws); code != 0 {
		t.Fatalf("TodoList on the clone: exit %d %s", code, errOut)
	}
	if out, errOut, code := e.cli("state", "--workspace", e.ws); code != 0 || !strings.Contains(out, "[pending] local") || !strings.Contains(out, line) {
		t.Fatalf("agentd state: exit %d, %q %q; want the local list and %q", code, out, errOut, line)
	}
	if _, errOut, code := e.cli("goal", "status", "--workspace", e.ws); code != 0 || !strings.Contains(errOut, line) {
		t.Fatalf("agentd goal status: exit %d, stderr %q; want %q", code, errOut, line)
	}
	if out, _, code := e.cli("team", "status", "--workspace", e.ws); code != 0 || !strings.Contains(out, "store: bbolt") || !strings.Contains(out, line) {
		t.Fatalf("agentd team status: exit %d, %q; want store bbolt and %q", code, out, line)
	}

	cl := e.start().connect()
	cl.Initialize(nil, e.ws)
	var st struct {
		Todos    struct{ Items []struct{ Title string } }
		TeamFile *teamFileNotice
	}
	cl.MustExec("agentd.state", nil, &st)
	tf := st.TeamFile
	if tf == nil || tf.Status != "pending" || tf.Path != ".agentd/team.json" || tf.ID != testTeamID || strings.Join(tf.Endpoints, ",") != l.url("http") ||
		tf.SHA256 != teamFileSHA(t, e) || tf.Accept != "agentd team accept" || len(st.Todos.Items) != 1 {
		t.Fatalf("agentd.state = %+v, teamFile %+v; want the local list and the pending team file", st, tf)
	}

	prompt := func(text string) string {
		out, _ := e.hook("claude", `{"session_id":"s1","transcript_path":"","cwd":"`+jsonText(e.ws)+`","hook_event_name":"UserPromptSubmit","prompt":"`+text+`"}`, "--workspace", e.ws)
		return out
	}
	if out := prompt("go"); !strings.Contains(out, "team file .agentd/team.json (etcd "+l.url("http")+") is not accepted on this machine") ||
		!strings.Contains(out, "ask the user") || !strings.Contains(out, "agentd team accept") {
		t.Fatalf("the hook's first prompt context: %s; want the team file's notice telling the model to ask the user", out)
	}
	if out := prompt("again"); strings.Contains(out, "team file") {
		t.Fatalf("the hook's second prompt context: %s; the notice is said once", out)
	}
	l.untouched(t)
}

// TestTeamAcceptServesFromEtcd: agentd team accept, run while an editor
// holds the clone open in the shared daemon, shows the team and where the
// credentials go, and the open folder moves to the team's etcd at once
// (the client is told with agentd/storeChanged and reads the team's
// state); a changed file asks again; a panel's accept of a hash that is no
// longer the file's is refused.
func TestTeamAcceptServesFromEtcd(t *testing.T) {
	t.Parallel()
	c := etcdtest.Start(t, 1)
	eps := strings.Join(c.Endpoints(), ",")
	e1, e2 := newEnv(t), newEnv(t)
	writeTeamFile(t, testTeamID, c.Endpoints(), e1)
	if _, errOut, code := e1.cli("tool", "TodoList", `{"todos":[{"title":"from the team","status":"pending"}]}`, "--workspace", e1.ws); code != 0 {
		t.Fatalf("TodoList on the team: exit %d %s", code, errOut)
	}

	e2.useDaemon()
	writeUnacceptedTeamFile(t, testTeamID, c.Endpoints(), e2)
	cl := e2.start().connect()
	cl.Initialize(nil, e2.ws)
	var st struct {
		Todos    struct{ Items []struct{ Title string } }
		TeamFile *teamFileNotice
	}
	cl.MustExec("agentd.state", nil, &st)
	if st.TeamFile == nil || st.TeamFile.Status != "pending" || len(st.Todos.Items) != 0 {
		t.Fatalf("the clone before accepting: %+v; want its own empty state and a pending team file", st)
	}
	err := cl.Exec("agentd.team.accept", map[string]any{"sha256": strings.Repeat("0", 64)}, nil)
	var le *lsptest.Error
	if !errors.As(err, &le) || le.DataCode() != "args.invalid" || !strings.Contains(err.Error(), "changed since it was shown") {
		t.Fatalf("agentd.team.accept of another file's hash: %v; want args.invalid saying the file changed", err)
	}

	out := acceptTeam(t, e2)
	if !strings.Contains(out, "accepted .agentd/team.json on this machine: team "+testTeamID+" at "+eps) ||
		!strings.Contains(out, "your etcd credentials will be sent to: "+eps) {
		t.Fatalf("agentd team accept printed %q; want the team, its endpoints and where the credentials go", out)
	}
	cl.Await("agentd/storeChanged", func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"stale":false`) })
	st.TeamFile = nil
	cl.MustExec("agentd.state", nil, &st)
	if st.TeamFile != nil || len(st.Todos.Items) != 1 || st.Todos.Items[0].Title != "from the team" {
		t.Fatalf("the open clone after accepting: %+v; want the team's list and no team file notice", st)
	}
	if out, _, code := e2.cli("team", "status", "--workspace", e2.ws); code != 0 || !strings.Contains(out, "store: etcd, team "+testTeamID) {
		t.Fatalf("agentd team status after accepting: exit %d %q", code, out)
	}

	path := filepath.Join(e2.ws, ".agentd", "team.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(data, ' '), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _, code := e2.cli("state", "--workspace", e2.ws); code != 0 || !strings.Contains(out, "Team file .agentd/team.json (etcd "+eps+") is not accepted on this machine: agentd team accept") {
		t.Fatalf("agentd state after one byte of the file changed: exit %d %q; want it asked again", code, out)
	}
	if out := acceptTeam(t, e2); !strings.Contains(out, "accepted .agentd/team.json on this machine") {
		t.Fatalf("accepting the changed file: %q", out)
	}
}

// TestTeamCredentialsNeverInClear: with a user and password, a client
// certificate or a CA configured, an accepted http:// endpoint (the team
// file's or this machine's) is refused with args.invalid naming the fix,
// the folder is not opened, and not a byte reaches the endpoint.
func TestTeamCredentialsNeverInClear(t *testing.T) {
	l := listenCounting(t)
	certs := etcdtest.NewTLS(t)
	e := newEnv(t)
	writeTeamFile(t, testTeamID, []string{l.url("http")}, e)
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"user and password", map[string]string{"AGENTD_ETCD_USER": "root", "AGENTD_ETCD_PASSWORD": "s3cret"}, nil},
		{"CA certificate", map[string]string{"AGENTD_ETCD_CACERT": certs.CAFile}, nil},
		{"client certificate", map[string]string{"AGENTD_ETCD_CERT": certs.ClientCert, "AGENTD_ETCD_KEY": certs.ClientKey}, nil},
		{"this machine's http endpoint", map[string]string{"AGENTD_ETCD_PASSWORD": "s3cret"}, []string{"--etcd-user", "root", "--etcd-endpoints", l.url("http")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			for _, cmd := range [][]string{{"state"}, {"team", "status"}} {
				_, errOut, code := e.cli(append(append(cmd, "--workspace", e.ws), tc.args...)...)
				if code == 0 || !strings.Contains(errOut, "is plain http://") || !strings.Contains(errOut, "use https:// endpoints, or drop the credentials") {
					t.Fatalf("agentd %v: exit %d, stderr %q; want a refusal naming the fix", cmd, code, errOut)
				}
			}
			p := e.start(append([]string{"serve"}, tc.args...)...)
			cl := p.connect()
			cl.Initialize(nil, e.ws)
			err := cl.Exec("agentd.state", nil, nil)
			var le *lsptest.Error
			if !errors.As(err, &le) || le.DataCode() != "args.invalid" || !strings.Contains(err.Error(), "is plain http://") {
				t.Fatalf("agentd.state over LSP: %v; want args.invalid", err)
			}
			l.untouched(t)
		})
	}
}

// TestTeamCredentialsNotSentToUnacceptedEndpoint: with this machine's
// etcd credentials set, a team file that names an https endpoint nobody
// here accepted (a fresh clone, or a pull that changed an accepted file)
// is never dialed: the credentials do not go there.
func TestTeamCredentialsNotSentToUnacceptedEndpoint(t *testing.T) {
	l := listenCounting(t)
	certs := etcdtest.NewTLS(t)
	c := etcdtest.Start(t, 1, etcdtest.WithTLS(certs))
	t.Setenv("AGENTD_ETCD_CACERT", certs.CAFile)
	t.Setenv("AGENTD_ETCD_CERT", certs.ClientCert)
	t.Setenv("AGENTD_ETCD_KEY", certs.ClientKey)
	e := newEnv(t)
	writeTeamFile(t, testTeamID, c.Endpoints(), e)
	if _, errOut, code := e.cli("tool", "TodoList", `{"todos":[{"title":"in the team","status":"pending"}]}`, "--workspace", e.ws); code != 0 {
		t.Fatalf("TodoList on the accepted team: exit %d %s", code, errOut)
	}
	t.Setenv("AGENTD_ETCD_USER", "root")
	t.Setenv("AGENTD_ETCD_PASSWORD", "s3cret")
	// A pull changes the accepted file to name another endpoint.
	writeUnacceptedTeamFile(t, testTeamID, []string{l.url("https")}, e)
	out, errOut, code := e.cli("state", "--workspace", e.ws)
	if code != 0 || strings.Contains(out, "in the team") || !strings.Contains(out, "(etcd "+l.url("https")+") is not accepted on this machine") {
		t.Fatalf("agentd state after the file changed: exit %d, %q %q; want this machine's state and the notice", code, out, errOut)
	}
	// A fresh clone naming it.
	e2 := newEnv(t)
	writeUnacceptedTeamFile(t, testTeamID, []string{l.url("https")}, e2)
	if _, errOut, code := e2.cli("tool", "TodoList", `{"todos":[{"title":"local","status":"pending"}]}`, "--workspace", e2.ws); code != 0 {
		t.Fatalf("TodoList on the clone: exit %d %s", code, errOut)
	}
	for _, env := range []*env{e, e2} {
		cl := env.start().connect()
		cl.Initialize(nil, env.ws)
		cl.MustExec("agentd.state", nil, nil)
		if out, _, code := env.cli("team", "status", "--workspace", env.ws); code != 0 || !strings.Contains(out, "store: bbolt") {
			t.Fatalf("agentd team status: exit %d %q; want bbolt, nothing dialed", code, out)
		}
	}
	l.untouched(t)
}
