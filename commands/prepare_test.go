package commands_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/agentd/agentd/commands/protocol"

	"github.com/agentd/agentd/commands"
	"github.com/agentd/agentd/service"
	"github.com/agentd/agentd/workspace"
)

// newTestClient is a client of a daemon service in a temporary state
// directory, with one folder open; it returns the folder's real path.
// mods change the workspace options.
func newTestClient(t *testing.T, mods ...func(*workspace.Options)) (*commands.Client, string) {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "work")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	opts := workspace.Options{StateDir: filepath.Join(dir, "state")}
	for _, m := range mods {
		m(&opts)
	}
	svc := service.New(opts, service.Daemon)
	t.Cleanup(func() { svc.Close() })
	cl := commands.NewClient(svc, commands.Defaults{})
	t.Cleanup(cl.Close)
	if err := cl.AddFolder(root); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	return cl, real
}

// TestPreparedScope: what each kind of command is ordered by
// (docs/protocol.md §2.2).
func TestPreparedScope(t *testing.T) {
	cl, root := newTestClient(t)
	tests := []struct {
		id, args        string
		folder, session string
		ordered         bool
	}{
		{"agentd.callTool", `[{"name":"TodoList","input":{}}]`, root, "default", true},
		{"agentd.state", `[{"session":"s1"}]`, root, "s1", true},
		{"agentd.state", `[{"workspace":"` + root + `","session":"s1"}]`, root, "s1", true},
		{"agentd.turn.begin", `[{"turnId":"t","origin":"user"}]`, root, "default", true},
		{"agentd.sessions", ``, root, "", true},
		{"agentd.awaitChange", `[{"afterRevision":0}]`, "", "", false},
		{"agentd.tools", ``, "", "", false},
		{"agentd.describeTool", `[{"name":"TodoList"}]`, "", "", false},
	}
	for _, tc := range tests {
		p, err := cl.Prepare(tc.id, json.RawMessage(tc.args))
		if err != nil {
			t.Fatalf("Prepare(%s, %s): %v", tc.id, tc.args, err)
		}
		folder, session, ordered := p.Scope()
		if folder != tc.folder || session != tc.session || ordered != tc.ordered {
			t.Errorf("%s %s: Scope() = %q, %q, %v; want %q, %q, %v", tc.id, tc.args, folder, session, ordered, tc.folder, tc.session, tc.ordered)
		}
	}
}

// TestPreparedRunsAsResolvedOnArrival: a command prepared before the
// client's defaults change runs with the defaults of its arrival.
func TestPreparedRunsAsResolvedOnArrival(t *testing.T) {
	cl, _ := newTestClient(t)
	p, err := cl.Prepare("agentd.callTool", json.RawMessage(`[{"name":"TodoList","input":{"todos":[{"title":"a","status":"pending"}]}}]`))
	if err != nil {
		t.Fatal(err)
	}
	cl.SetDefaults(commands.Defaults{Session: "later"})
	if _, err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := cl.Execute(context.Background(), "agentd.state", json.RawMessage(`[{"session":"default"}]`))
	if err != nil {
		t.Fatal(err)
	}
	if st := res.(protocol.State); len(st.Todos.Items) != 1 {
		t.Fatalf("session default after the prepared write: %+v, want its list", st)
	}
}

// TestPreparedFolderRemoved: a command whose folder is removed before it
// runs answers workspace.unknown and does nothing.
func TestPreparedFolderRemoved(t *testing.T) {
	cl, root := newTestClient(t)
	p, err := cl.Prepare("agentd.callTool", json.RawMessage(`[{"name":"TodoList","input":{"todos":[{"title":"a","status":"pending"}]}}]`))
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.RemoveFolder(root); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(context.Background()); protocol.ErrorCode(err) != "workspace.unknown" {
		t.Fatalf("Run after the folder was removed: %v, want workspace.unknown", err)
	}
	if err := cl.AddFolder(root); err != nil {
		t.Fatal(err)
	}
	res, err := cl.Execute(context.Background(), "agentd.state", nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := res.(protocol.State); st.Revision != 0 {
		t.Fatalf("state after the refused write: %+v, want revision 0", st)
	}
}

// TestEndWaits: after EndWaits, an agentd.awaitChange started before it
// and one started after it answer the current state, as at their timeout.
func TestEndWaits(t *testing.T) {
	cl, _ := newTestClient(t)
	await := func() <-chan any {
		ch := make(chan any, 1)
		go func() {
			res, err := cl.Execute(context.Background(), "agentd.awaitChange", json.RawMessage(`[{"afterRevision":100,"timeoutMs":300000}]`))
			if err != nil {
				ch <- err
				return
			}
			ch <- res
		}()
		return ch
	}
	before := await()
	cl.EndWaits()
	for _, ch := range []<-chan any{before, await()} {
		select {
		case res := <-ch:
			if st, ok := res.(protocol.State); !ok || st.Revision != 0 {
				t.Fatalf("awaitChange after EndWaits = %v, want the state at revision 0", res)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("awaitChange still waits after EndWaits")
		}
	}
}

// TestResultTypes runs every command once, in an order in which each
// succeeds, and checks that it answers the result type its def declares
// (the type commands/protocolgen gives the clients).
func TestResultTypes(t *testing.T) {
	cl, root := newTestClient(t)
	team := pendingTeamFile(t, cl, root)
	calls := []struct{ id, args string }{
		{"agentd.state", ``},
		{"agentd.sessions", ``},
		{"agentd.todo.set", `[{"items":[{"title":"a","status":"pending"}]}]`},
		{"agentd.history", ``},
		{"agentd.awaitChange", `[{"afterRevision":0}]`},
		{"agentd.tools", ``},
		{"agentd.describeTool", `[{"name":"TodoList","input":{}}]`},
		{"agentd.callTool", `[{"name":"TodoList","input":{}}]`},
		{"agentd.goal.create", `[{"objective":"o"}]`},
		{"agentd.goal.setBudget", `[{"turns":5}]`},
		{"agentd.goal.setCheck", `[{"command":"true"}]`},
		{"agentd.goal.approveCheck", `[{"command":"true"}]`},
		{"agentd.goal.runCheck", ``},
		{"agentd.goal.pause", ``},
		{"agentd.goal.resume", ``},
		{"agentd.turn.begin", `[{"turnId":"t1","origin":"user"}]`},
		{"agentd.step.begin", `[{"turnId":"t1"}]`},
		{"agentd.step.next", `[{"turnId":"t1","outputTokens":3,"finishReason":"tool_calls"}]`},
		{"agentd.step.end", `[{"turnId":"t1","outputTokens":3,"finishReason":"stop"}]`},
		{"agentd.turn.end", `[{"turnId":"t1","outcome":"completed"}]`},
		{"agentd.goal.wait", `[{"for":"1h"}]`},
		{"agentd.goal.cancel", ``},
		{"agentd.goal.queue.add", `[{"objective":"a"}]`},
		{"agentd.goal.queue.list", ``},
		{"agentd.goal.queue.move", `[{"id":"$QUEUED0","index":0}]`},
		{"agentd.goal.queue.remove", `[{"id":"$QUEUED0"}]`},
		{"agentd.goal.queue.setAutoAdvance", `[{"on":false}]`},
		{"agentd.undo", `[{"scope":"goal"}]`},
		{"agentd.team.accept", `[{"sha256":"` + team.SHA256 + `"}]`}, // last: the folder then needs its etcd
	}
	declared := map[string]reflect.Type{}
	for _, c := range commands.Commands {
		if c.Result == nil || c.Result.Kind() != reflect.Struct {
			t.Errorf("%s declares result type %v, want a struct type", c.ID, c.Result)
		}
		declared[string(c.ID)] = c.Result
	}
	for _, tc := range calls {
		res, err := cl.Execute(context.Background(), tc.id, json.RawMessage(withQueuedID(t, cl, tc.args)))
		if err != nil {
			t.Fatalf("%s %s: %v", tc.id, tc.args, err)
		}
		if got := reflect.TypeOf(res); got != declared[tc.id] {
			t.Errorf("%s answered a %v, its def declares %v", tc.id, got, declared[tc.id])
		}
		delete(declared, tc.id)
	}
	for id := range declared {
		t.Errorf("%s is not run by this test", id)
	}
}
